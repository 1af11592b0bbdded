"""A monitor on a network with an Embedding layer (example/cnn_chinese_text_classification
trains one with mx.mon.Monitor): backward runs, the gradients it reports are MXNet 1.9.1's
(fixtures/make_monitor_embedding.py printed them), and training with the monitor updates the
weights as training without it does."""
import numpy as np
import pytest

import mxmod as mx

# sum(|gradient|) per backward output, from fixtures/make_monitor_embedding.py on MXNet 1.9.1;
# emb_backward_output0 (the gradient of the indices, which no one computes) and
# softmax_backward_output1 (of the label) are left out: MXNet shows stale buffer contents there
MXNET = {'emb_backward_output1': 4.927395, 'fc_backward_output0': 4.927395,
         'fc_backward_output1': 0.5609094, 'fc_backward_output2': 0.85910463,
         'flatten0_backward_output': 4.927395, 'softmax_backward_output0': 1.6424649}


def _module(sparse_grad=False):
    data, label = mx.sym.Variable('data'), mx.sym.Variable('softmax_label')
    emb = mx.sym.Embedding(data, input_dim=20, output_dim=4, name='emb', sparse_grad=sparse_grad)
    fc = mx.sym.FullyConnected(mx.sym.flatten(emb, name='flatten0'), num_hidden=2, name='fc')
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(fc, label, name='softmax'))
    mod.bind([('data', (2, 3))], [('softmax_label', (2,))])
    mod.init_params()
    mod.set_params({'emb_weight': mx.nd.array(np.arange(80).reshape(20, 4) / 80.),
                    'fc_weight': mx.nd.array(np.arange(24).reshape(2, 12) / 24. - 0.3),
                    'fc_bias': mx.nd.array([0.1, -0.1])}, {})
    return mod


def _batch():
    return mx.io.DataBatch([mx.nd.array([[1, 2, 3], [4, 5, 6]])], [mx.nd.array([0, 1])])


@pytest.mark.parametrize('sparse_grad', [False, True])
def test_backward_under_monitor_reports_mxnet_gradients(sparse_grad):
    mod = _module(sparse_grad)
    mon = mx.mon.Monitor(1, lambda d: mx.nd.sum(mx.nd.abs(d)), pattern='.*backward.*',
                         sort=True)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward_backward(_batch())
    got = {name: float(text.strip()) for _, name, text in mon.toc()}
    assert got['emb_backward_output0'] == 0.0
    for name, value in MXNET.items():
        assert got[name] == pytest.approx(value, rel=1e-5), name


def test_training_with_monitor_matches_training_without():
    weights = []
    for monitored in (False, True):
        mod = _module()
        mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
        if monitored:
            mod.install_monitor(mx.mon.Monitor(1, pattern='.*'))
        for _ in range(3):
            mod.forward_backward(_batch())
            mod.update()
        weights.append({k: v.asnumpy() for k, v in mod.get_params()[0].items()})
    for name, value in weights[0].items():
        np.testing.assert_array_equal(weights[1][name], value, err_msg=name)
    assert not np.array_equal(weights[0]['emb_weight'],
                              np.arange(80).reshape(20, 4) / 80.)
