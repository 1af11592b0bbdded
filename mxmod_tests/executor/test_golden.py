"""Executors reproduce MXNet 1.9.1's outputs, gradients and BatchNorm statistics (golden files)."""
import json
import os

import numpy as np
import pytest

import mxmod as mx

GOLDEN = os.path.join(os.path.dirname(__file__), '..', 'golden')


def _case(name):
    meta = json.load(open(os.path.join(GOLDEN, name + '.meta.json')))
    data = np.load(os.path.join(GOLDEN, name + '.npz'))
    sym = mx.sym.load(os.path.join(GOLDEN, name + '-symbol.json'))
    return meta, data, sym


def _bind(meta, data, sym, **kwargs):
    shapes = {k: tuple(v) for k, v in meta['bind_shapes'].items()}
    exe = sym.simple_bind(mx.cpu(), grad_req=meta['grad_req'], **shapes, **kwargs)
    for key in data.files:
        kind, _, name = key.partition(':')
        if kind in ('input', 'param'):
            exe.arg_dict[name][:] = data[key]
        elif kind == 'aux':
            exe.aux_dict[name][:] = data[key]
    return exe


@pytest.mark.parametrize('name', ['mlp', 'convnet', 'lstm'])
def test_golden_forward_backward(name):
    meta, data, sym = _case(name)
    assert sym.list_arguments() == meta['list_arguments']
    assert sym.list_outputs() == meta['list_outputs']
    assert sym.list_auxiliary_states() == meta['list_auxiliary_states']
    exe = _bind(meta, data, sym)
    out = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out, data['output_infer:0'], rtol=1e-5, atol=1e-6)
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, data['output:0'], rtol=1e-5, atol=1e-6)
    exe.backward()
    # MXNet's CPU BatchNorm updates its moving statistics in the training backward
    for key in data.files:
        if key.startswith('aux_after:'):
            np.testing.assert_allclose(exe.aux_dict[key[10:]].asnumpy(), data[key], rtol=1e-5, atol=1e-6,
                                       err_msg=key)
    for key in data.files:
        if key.startswith('grad:'):
            np.testing.assert_allclose(exe.grad_dict[key[5:]].asnumpy(), data[key], rtol=1e-5,
                                       atol=1e-6, err_msg=key)


@pytest.mark.parametrize('name', ['mlp', 'convnet', 'lstm'])
def test_golden_shapes_inferred(name):
    meta, _, sym = _case(name)
    shapes = {k: tuple(v) for k, v in meta['bind_shapes'].items()}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    assert dict(zip(sym.list_arguments(), arg_shapes)) == {k: tuple(v) for k, v in meta['arg_shapes'].items()}
    assert out_shapes == [tuple(s) for s in meta['out_shapes']]
    assert dict(zip(sym.list_auxiliary_states(), aux_shapes)) == \
        {k: tuple(v) for k, v in meta['aux_shapes'].items()}


@pytest.mark.parametrize('name', ['mlp', 'convnet', 'lstm'])
def test_golden_mirrored_gradients_equal(name):
    """Backward mirroring recomputes cheap values: gradients and statistics are identical (to
    the step-by-step graph: mirroring turns off the fused LSTM layers, whose large products sum
    in another order)."""
    meta, data, sym = _case(name)
    with mx.test_utils.environment('MXMOD_FUSE_RNN', '0'):
        plain = _bind(meta, data, sym)
    with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', '1'):
        mirrored = _bind(meta, data, sym)
    for exe in (plain, mirrored):
        exe.forward(is_train=True)
        exe.backward()
    for key, arr in plain.grad_dict.items():
        np.testing.assert_array_equal(mirrored.grad_dict[key].asnumpy(), arr.asnumpy(), err_msg=key)
    for key, arr in plain.aux_dict.items():
        np.testing.assert_array_equal(mirrored.aux_dict[key].asnumpy(), arr.asnumpy(), err_msg=key)
    assert any(step.mirror for step in mirrored._plan.steps)
