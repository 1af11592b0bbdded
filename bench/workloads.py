"""The workloads of bench_models.py: their data, their MXNet-API programs (run unchanged by mxmod
and MXNet 1.9.1) and the same networks in PyTorch, each behind a worker with ``run_epoch()``.

``mlp`` MLP 784-512-256-10, batch 128 (samples/s); ``lenet`` conv5x5x20-tanh-pool-conv5x5x50-
tanh-pool-fc500-tanh-fc10, batch 64 (samples/s); ``resnet`` ResNet-20 for 3x32x32 images (the
pre-activation network of MXNet's example/image-classification/symbols/resnet.py with units
[3, 3, 3] and filters [16, 16, 32, 64]), batch 64 (samples/s); ``lstm`` 2 x 200 LSTM language
model (vocabulary 1000), BucketingModule, buckets 10/20/30/40, batch 32 (sentences/s)."""
import os
import random
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ('mlp', 'lenet', 'resnet', 'lstm')
UNITS = {'mlp': 'samples/s', 'lenet': 'samples/s', 'resnet': 'samples/s', 'lstm': 'sentences/s'}
BATCH = {'mlp': 128, 'lenet': 64, 'resnet': 64, 'lstm': 32}
SIZE = {'mlp': 60000, 'lenet': 10000, 'resnet': 1280, 'lstm': 5000}
QUICK_SIZE = {'mlp': 6400, 'lenet': 640, 'resnet': 256, 'lstm': 320}
IMAGE = {'mlp': (784,), 'lenet': (1, 28, 28), 'resnet': (3, 32, 32)}
LSTM_VOCAB, LSTM_EMBED, LSTM_HIDDEN, LSTM_LAYERS = 1000, 200, 200, 2
BUCKETS = [10, 20, 30, 40]
RESNET_UNITS, RESNET_FILTERS, BN_EPS, BN_MOM = (3, 3, 3), (16, 16, 32, 64), 2e-5, 0.9


# ---- data (identical for every implementation) --------------------------------------------------
def image_data(n, shape):
    """Uniform[0, 1) float32 inputs and integer labels 0..9 (as float32), RandomState(0)."""
    rs = np.random.RandomState(0)
    x = rs.uniform(0.0, 1.0, size=(n,) + shape).astype(np.float32)
    return x, rs.randint(0, 10, size=(n,)).astype(np.float32)


def sentences(n):
    """``n`` token lists, lengths uniform in 5..40, tokens in 1..999 (0 pads), RandomState(0)."""
    rs = np.random.RandomState(0)
    lengths = rs.randint(5, 41, size=n)
    return [list(rs.randint(1, LSTM_VOCAB, size=length)) for length in lengths]


# ---- MXNet-API programs (mxmod and MXNet run the very same code) --------------------------------
def import_mx(impl):
    """MXNet, or mxmod from this checkout ('mxmod') or from $BENCH_MXMOD_ROOT ('baseline')."""
    if impl == 'mxnet':
        import mxnet as mx  # pylint: disable=import-outside-toplevel
    else:
        root = os.environ['BENCH_MXMOD_ROOT'] if impl == 'baseline' else os.path.dirname(HERE)
        sys.path.insert(0, os.path.abspath(root))
        import mxmod as mx  # pylint: disable=import-outside-toplevel
    return mx


def mx_mlp(mx):
    net = mx.sym.Variable('data')
    for i, hidden in enumerate((512, 256)):
        net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc%d' % (i + 1))
        net = mx.sym.Activation(net, act_type='relu', name='relu%d' % (i + 1))
    net = mx.sym.FullyConnected(net, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def mx_lenet(mx):
    net = mx.sym.Variable('data')
    for i, filters in enumerate((20, 50)):
        net = mx.sym.Convolution(net, kernel=(5, 5), num_filter=filters, name='conv%d' % (i + 1))
        net = mx.sym.Activation(net, act_type='tanh', name='tanh%d' % (i + 1))
        net = mx.sym.Pooling(net, pool_type='max', kernel=(2, 2), stride=(2, 2),
                             name='pool%d' % (i + 1))
    net = mx.sym.Flatten(net, name='flatten')
    net = mx.sym.FullyConnected(net, num_hidden=500, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh3')
    net = mx.sym.FullyConnected(net, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _mx_bn_relu(mx, data, name):
    bn = mx.sym.BatchNorm(data=data, fix_gamma=False, momentum=BN_MOM, eps=BN_EPS,
                          name=name + '_bn')
    return mx.sym.Activation(data=bn, act_type='relu', name=name + '_relu')


def _mx_unit(mx, data, filters, stride, dim_match, name):
    """One pre-activation residual unit (resnet.py's residual_unit, bottle_neck=False)."""
    act1 = _mx_bn_relu(mx, data, name + '1')
    conv1 = mx.sym.Convolution(data=act1, num_filter=filters, kernel=(3, 3), stride=stride,
                               pad=(1, 1), no_bias=True, workspace=256, name=name + '_conv1')
    act2 = _mx_bn_relu(mx, conv1, name + '2')
    conv2 = mx.sym.Convolution(data=act2, num_filter=filters, kernel=(3, 3), stride=(1, 1),
                               pad=(1, 1), no_bias=True, workspace=256, name=name + '_conv2')
    if dim_match:
        shortcut = data
    else:
        shortcut = mx.sym.Convolution(data=act1, num_filter=filters, kernel=(1, 1), stride=stride,
                                      no_bias=True, workspace=256, name=name + '_sc')
    return conv2 + shortcut


def mx_resnet(mx):
    """ResNet-20 for 3x32x32 inputs, as resnet.py builds it for CIFAR-sized images."""
    data = mx.sym.identity(data=mx.sym.Variable('data'), name='id')
    data = mx.sym.BatchNorm(data=data, fix_gamma=True, eps=BN_EPS, momentum=BN_MOM,
                            name='bn_data')
    body = mx.sym.Convolution(data=data, num_filter=RESNET_FILTERS[0], kernel=(3, 3),
                              stride=(1, 1), pad=(1, 1), no_bias=True, workspace=256,
                              name='conv0')
    for i, units in enumerate(RESNET_UNITS):
        stride = (1, 1) if i == 0 else (2, 2)
        for j in range(units):
            body = _mx_unit(mx, body, RESNET_FILTERS[i + 1], stride if j == 0 else (1, 1),
                            j > 0, 'stage%d_unit%d' % (i + 1, j + 1))
    relu1 = _mx_bn_relu(mx, body, 'final')
    pool1 = mx.sym.Pooling(data=relu1, global_pool=True, kernel=(7, 7), pool_type='avg',
                           name='pool1')
    fc1 = mx.sym.FullyConnected(data=mx.sym.Flatten(data=pool1), num_hidden=10, name='fc1')
    return mx.sym.SoftmaxOutput(data=fc1, name='softmax')


def mx_lstm_sym_gen(mx):
    stack = mx.rnn.SequentialRNNCell()
    for i in range(LSTM_LAYERS):
        stack.add(mx.rnn.LSTMCell(num_hidden=LSTM_HIDDEN, prefix='lstm_l%d_' % i))

    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=LSTM_VOCAB, output_dim=LSTM_EMBED,
                                 name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, LSTM_HIDDEN))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=LSTM_VOCAB, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


MX_NETS = {'mlp': mx_mlp, 'lenet': mx_lenet, 'resnet': mx_resnet}


def mx_setup(impl, workload, size, batch):
    """(mx, module, iterator, fit kwargs, metric factory, units per epoch) for one workload."""
    mx = import_mx(impl)
    # BucketSentenceIter.reset shuffles the batch order with Python's ``random`` (as MXNet's
    # does), so that generator is seeded too: without it the LSTM's perplexity differed from
    # run to run with identical code
    random.seed(0)
    np.random.seed(0)
    mx.random.seed(0)
    if workload == 'lstm':
        it = mx.rnn.BucketSentenceIter(sentences(size), batch, buckets=list(BUCKETS),
                                       invalid_label=0)
        mod = mx.mod.BucketingModule(sym_gen=mx_lstm_sym_gen(mx), context=mx.cpu(),
                                     default_bucket_key=it.default_bucket_key)
        kwargs = dict(kvstore='local', optimizer='sgd',
                      optimizer_params={'learning_rate': 0.01, 'momentum': 0.9, 'wd': 1e-5},
                      initializer=mx.init.Xavier(factor_type='in', magnitude=2.34))
        return mx, mod, it, kwargs, lambda: mx.metric.Perplexity(0), len(it.idx) * batch
    x, y = image_data(size, IMAGE[workload])
    it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name='softmax_label')
    mod = mx.mod.Module(MX_NETS[workload](mx), context=mx.cpu())
    kwargs = dict(kvstore='local', optimizer='sgd',
                  optimizer_params={'learning_rate': 0.1 if workload != 'resnet' else 0.05,
                                    'momentum': 0.9},
                  initializer=mx.init.Xavier(magnitude=2.0))
    return mx, mod, it, kwargs, lambda: mx.metric.create('acc'), size


class MXWorker:
    """One Module.fit epoch per call (the first, untimed, also binds and initialises)."""

    def __init__(self, impl, workload, size, batch):
        (self.mx, self.mod, self.it, self.kwargs, self.metric,
         self.units) = mx_setup(impl, workload, size, batch)
        self.epoch = 0

    def run_epoch(self):
        metric = self.metric()
        self.it.reset()
        self.mx.nd.waitall()
        tic = time.perf_counter()
        self.mod.fit(self.it, begin_epoch=self.epoch, num_epoch=self.epoch + 1,
                     eval_metric=metric, **self.kwargs)
        self.mx.nd.waitall()
        self.epoch += 1
        names, values = metric.get()
        return time.perf_counter() - tic, {str(names): float(values)}

    def finite(self):
        args, _ = self.mod.get_params()
        return all(bool(np.isfinite(v.asnumpy()).all()) for v in args.values())


# ---- PyTorch ------------------------------------------------------------------------------------
def torch_buckets(sents, batch):
    """Full batches of (data, label) int64 arrays per bucket, as BucketSentenceIter forms them:
    each sentence padded with 0 to the smallest bucket that holds it, the label the data shifted
    left by one; incomplete batches dropped; batch order shuffled once with RandomState(0)."""
    rows = {b: [] for b in BUCKETS}
    for sent in sents:
        bucket = next((b for b in BUCKETS if b >= len(sent)), None)
        if bucket is not None:
            rows[bucket].append(list(sent) + [0] * (bucket - len(sent)))
    batches = []
    for bucket_rows in rows.values():
        data = np.array(bucket_rows, np.int64)
        for start in range(0, len(data) - batch + 1, batch):
            chunk = data[start:start + batch]
            label = np.zeros_like(chunk)
            label[:, :-1] = chunk[:, 1:]
            batches.append((chunk, label))
    np.random.RandomState(0).shuffle(batches)
    return batches


def torch_resnet(nn):
    """The ResNet-20 of :func:`mx_resnet` in PyTorch (the same layers, eps and momentum)."""

    def bn(channels, fixed=False):
        layer = nn.BatchNorm2d(channels, eps=BN_EPS, momentum=1 - BN_MOM)
        if fixed:
            layer.weight.requires_grad_(False)
        return layer

    class Unit(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.bn1, self.bn2 = bn(cin), bn(cout)
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.sc = None if (cin == cout and stride == 1) else nn.Conv2d(cin, cout, 1, stride,
                                                                           bias=False)

        def forward(self, x):
            act1 = self.bn1(x).relu()
            out = self.conv2(self.bn2(self.conv1(act1)).relu())
            return out + (x if self.sc is None else self.sc(act1))

    layers = [bn(3, fixed=True), nn.Conv2d(3, RESNET_FILTERS[0], 3, 1, 1, bias=False)]
    cin = RESNET_FILTERS[0]
    for i, units in enumerate(RESNET_UNITS):
        for j in range(units):
            layers.append(Unit(cin, RESNET_FILTERS[i + 1], 2 if (i > 0 and j == 0) else 1))
            cin = RESNET_FILTERS[i + 1]
    layers += [bn(cin), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 10)]
    return nn.Sequential(*layers)


def torch_model(nn, workload):
    if workload == 'mlp':
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if workload == 'lenet':
        return nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2),
                             nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(50 * 4 * 4, 500), nn.Tanh(), nn.Linear(500, 10))
    if workload == 'resnet':
        return torch_resnet(nn)

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(LSTM_VOCAB, LSTM_EMBED)
            self.lstm = nn.LSTM(LSTM_EMBED, LSTM_HIDDEN, num_layers=LSTM_LAYERS, batch_first=True)
            self.pred = nn.Linear(LSTM_HIDDEN, LSTM_VOCAB)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.pred(out.reshape(-1, LSTM_HIDDEN))
    return LanguageModel()


class TorchWorker:
    """The same networks in a plain PyTorch loop (SGD momentum 0.9, cross-entropy).
    ``threads`` None leaves PyTorch's own default thread count."""

    def __init__(self, workload, size, batch, threads):
        import torch  # pylint: disable=import-outside-toplevel
        self.torch = torch
        if threads:
            torch.set_num_threads(threads)
        torch.manual_seed(0)
        self.model = torch_model(torch.nn, workload)
        if workload == 'lstm':
            pairs = torch_buckets(sentences(size), batch)
            self.batches = [(torch.from_numpy(data), torch.from_numpy(label).reshape(-1))
                            for data, label in pairs]
            self.units = len(pairs) * batch
            lr, wd = 0.01, 1e-5
        else:
            x, y = image_data(size, IMAGE[workload])
            x, y = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
            self.batches = [(x[s:s + batch], y[s:s + batch]) for s in range(0, size, batch)]
            self.units = size
            lr, wd = 0.01, 0.0
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd)
        self.loss = torch.nn.CrossEntropyLoss()

    def run_epoch(self):
        self.model.train()
        tic = time.perf_counter()
        last = None
        for data, label in self.batches:
            self.opt.zero_grad(set_to_none=True)
            loss = self.loss(self.model(data), label)
            loss.backward()
            self.opt.step()
            last = loss
        return time.perf_counter() - tic, {'loss': float(last.item())}

    def finite(self):
        return all(bool(self.torch.isfinite(p).all()) for p in self.model.parameters())
