"""Write ONNX models exported by PyTorch (torch.onnx.export) with PyTorch's outputs, for the
import tests:

    /tmp/venv_torch/bin/python mxmod_tests/onnx/make_torch_fixtures.py

Needs torch, onnx and onnxscript; skips (exit 0 with a message) without them."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'fixtures', 'torch')


def models(torch):
    """name -> (module, example inputs, use the dynamo exporter, free batch axis)."""
    nn = torch.nn

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
            self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.fc = nn.Linear(4, 5)

        def forward(self, x):
            x = nn.functional.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
            x = self.up(nn.functional.leaky_relu(self.c2(x), 0.1))
            x = nn.functional.avg_pool2d(x, 2, ceil_mode=True)
            x = nn.functional.adaptive_avg_pool2d(x, 1)
            return torch.softmax(self.fc(x.view(x.size(0), -1)), dim=1)

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(6, 5, num_layers=2, bidirectional=True)
            self.gru = nn.GRU(10, 4)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y, _ = self.lstm(x)
            y, h = self.gru(y)
            return self.fc(y), h

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            self.norm = nn.LayerNorm(8)
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 8)
            self.out = nn.Linear(8, 4)

        def forward(self, ids):
            h = self.norm(self.emb(ids))
            h = h + self.fc2(nn.functional.gelu(self.fc1(h)))
            return torch.log_softmax(self.out(h.mean(dim=1)), dim=-1)

    torch.manual_seed(0)
    return {
        'convnet': (ConvNet().eval(), (torch.randn(2, 3, 16, 16),), False, False),
        'convnet_batch': (ConvNet().eval(), (torch.randn(2, 3, 16, 16),), False, True),
        'convnet_dynamo': (ConvNet().eval(), (torch.randn(2, 3, 16, 16),), True, False),
        'recurrent': (Recurrent().eval(), (torch.randn(7, 2, 6),), False, False),
        'block_dynamo': (Block().eval(), (torch.randint(0, 20, (3, 5)),), True, False),
    }


def main():
    try:
        import torch  # pylint: disable=import-outside-toplevel
        import onnx  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as err:
        print('skipped: %s' % err)
        return
    os.makedirs(OUT, exist_ok=True)
    for name, (module, inputs, dynamo, free_batch) in models(torch).items():
        path = os.path.join(OUT, name + '.onnx')
        names = ['input%d' % k for k in range(len(inputs))]
        axes = {n: {0: 'batch'} for n in names} if free_batch else None
        torch.onnx.export(module, inputs, path, input_names=names, dynamo=dynamo,
                          dynamic_axes=axes)
        with torch.no_grad():
            outs = module(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        arrays = {n: t.numpy() for n, t in zip(names, inputs)}
        arrays.update({'output%d' % k: o.numpy() for k, o in enumerate(outs)})
        np.savez(os.path.join(OUT, name + '.npz'), **arrays)
        print('wrote', name, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    sys.exit(main())
