"""Every gluon.nn layer (and the losses) against MXNet 1.9.1's recorded outputs, input
gradients, parameter gradients and updated statistics, imperatively and hybridized; and the
Parameter names and prefixes Gluon gives them."""
import json
import os

import numpy as np
import pytest

import mxmod as mx

from . import layer_cases
from .gluon_cases import NOT_HYBRIDIZABLE

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = np.load(os.path.join(HERE, 'fixtures', 'gluon_layers.npz'))
LOSSES = np.load(os.path.join(HERE, 'fixtures', 'gluon_losses.npz'))
with open(os.path.join(HERE, 'fixtures', 'gluon_meta.json')) as _f:
    META = json.load(_f)
MODES = ['imperative', 'hybridized']


def _close(got, want, key):
    """float32 agreement; sums that cancel to near zero are judged against the array's scale."""
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=max(1e-5, 2e-4 * scale), err_msg=key)


def _expected(table, name, mode):
    prefix = '%s/%s/' % (name, mode)
    return {key[len(prefix):]: table[key] for key in table.files if key.startswith(prefix)}


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('name', sorted(layer_cases.LAYERS))
def test_layer_matches_mxnet(name, mode):
    got, names, prefix = layer_cases.run_layer(mx, name, mode == 'hybridized')
    want = _expected(LAYERS, name, mode)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        _close(got[key], value, key)
    assert names == META['layers'][name]['params']
    assert prefix == META['layers'][name]['prefix']


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('name', sorted(layer_cases.LOSSES))
def test_loss_matches_mxnet(name, mode):
    if mode == 'hybridized' and name == 'sdml':
        # SDMLLoss reads x.shape, which a Symbol lacks: MXNet cannot hybridize it either
        with pytest.raises(AttributeError, match='shape'):
            layer_cases.run_loss(mx, name, True)
        return
    got = layer_cases.run_loss(mx, name, mode == 'hybridized')
    # MXNet cannot hybridize PoissonNLLLoss(compute_full=True) (it uses *= on a Symbol);
    # mxmod's hybridized form must give MXNet's imperative values
    want = _expected(LOSSES, name, 'imperative' if name in NOT_HYBRIDIZABLE else mode)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        _close(got[key], value, key)


def test_poisson_full_gradient_by_finite_differences():
    # MXNet refuses to record this loss (an in-place update); mxmod's is differentiable
    loss = mx.gluon.loss.PoissonNLLLoss(from_logits=False, compute_full=True)
    pred, target = [mx.nd.array(v) for v in layer_cases.loss_inputs('poisson_nll_full')]
    pred.attach_grad()
    with mx.autograd.record():
        out = loss(pred, target)
    out.backward()
    base = pred.asnumpy().astype(np.float64)
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        vals = []
        for delta in (1e-3, -1e-3):
            shifted = base.copy()
            shifted[idx] += delta
            vals.append(loss(mx.nd.array(shifted, dtype='float64'),
                             target.astype('float64')).asscalar())
        numeric[idx] = (vals[0] - vals[1]) / 2e-3
    np.testing.assert_allclose(pred.grad.asnumpy(), numeric, rtol=1e-3, atol=1e-5)


def test_dropout_training_statistics():
    drop = mx.gluon.nn.Dropout(0.3)
    x = mx.nd.ones((200, 50))
    with mx.autograd.record():
        y = drop(x).asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-5)
    assert (drop(x).asnumpy() == 1).all()          # inference: identity
    drop.hybridize()
    with mx.autograd.record():
        assert abs((drop(x).asnumpy() != 0).mean() - 0.7) < 0.02


def test_dense_reprs_and_shapes():
    with mx.name.NameManager():
        dense = mx.gluon.nn.Dense(3, activation='relu')
        conv = mx.gluon.nn.Conv2D(4, 3, padding=1, in_channels=2)
        pool = mx.gluon.nn.MaxPool2D()
    assert repr(dense) == 'Dense(None -> 3, Activation(relu))'
    assert dense.weight.shape == (3, 0)
    assert repr(conv) == 'Conv2D(2 -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))'
    assert conv.weight.shape == (4, 2, 3, 3) and conv.bias.shape == (4,)
    assert repr(pool) == ('MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), '
                          'ceil_mode=False, global_pool=False, pool_type=max, layout=NCHW)')
    dense.initialize()
    dense(mx.nd.ones((2, 7)))
    assert repr(dense) == 'Dense(7 -> 3, Activation(relu))'
