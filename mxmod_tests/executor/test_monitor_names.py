"""Monitor callbacks as MXNet 1.9.1 reports them: inputs of operators registered without input
names are '<node>_input<i>' (the table was taken from the real MXNet's monitor), the callback
survives Executor.reshape (and so Module's reshape for a new input shape), and the array handed
to it passes for a C handle (ctypes.cast(arr, NDArrayHandle) then NDArray(handle))."""
import ctypes

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import NDArrayHandle
from mxmod.ndarray import NDArray


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


def _names(sym, **shapes):
    out = []
    exe = sym.simple_bind(ctx=mx.cpu(), grad_req='null', **shapes)
    exe.set_monitor_callback(lambda name, arr: out.append(name), monitor_all=True)
    exe.forward()
    return out


# expected lists recorded from MXNet 1.9.1 (monitor_all=True)
@pytest.mark.parametrize('make,expected', [
    (lambda d: mx.sym.SoftmaxActivation(d, name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.Activation(d, act_type='relu', name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.exp(d, name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.sum(d, name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.Reshape(d, shape=(-1,), name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.clip(d, a_min=0, a_max=1, name='n'), ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym._internal._plus_scalar(d, scalar=1, name='n'),
     ['data', 'n_input0', 'n_output']),
    (lambda d: mx.sym.LeakyReLU(d, name='n'), ['data', 'n_data', 'n_output']),
    (lambda d: mx.sym.softmax(d, name='n'), ['data', 'n_data', 'n_output']),
    (lambda d: mx.sym.tile(d, reps=(2,), name='n'), ['data', 'n_data', 'n_output']),
    (lambda d: mx.sym.UpSampling(d, scale=2, sample_type='nearest', name='n'),
     ['data', 'n_arg0', 'n_output']),
])
def test_monitor_input_names(make, expected):
    assert _names(make(mx.sym.var('data')), data=(2, 3, 4, 5)) == expected


def test_monitor_survives_reshape():
    data = mx.sym.var('data')
    sym = mx.sym.Convolution(data, kernel=(1, 1), num_filter=1, name='conv')
    exe = sym.simple_bind(mx.cpu(), grad_req='null', data=(1, 3, 10, 10))
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)), monitor_all=True)
    new = exe.reshape(allow_up_sizing=True, data=(1, 3, 10, 14))
    new.forward()
    assert ('conv_output', (1, 1, 10, 14)) in seen
    assert [n for n, _ in seen] == ['data', 'conv_data', 'conv_weight', 'conv_weight',
                                    'conv_bias', 'conv_bias', 'conv_output']


def test_module_with_new_input_shape_keeps_the_monitor():
    dshape = (1, 3, 10, 10)
    sym = mx.sym.Convolution(mx.sym.var('data'), kernel=(1, 1), num_filter=1, name='conv')
    mod = mx.module.Module(symbol=sym, label_names=None)
    mod.bind(for_training=False, data_shapes=[('data', dshape)])
    mod.init_params()
    seen = []
    mod._exec_group.execs[0].set_monitor_callback(lambda name, arr: seen.append(name),
                                                  monitor_all=True)
    batch = mx.io.DataBatch([mx.nd.ones((1, 3, 10, 14))], provide_data=[('data', (1, 3, 10, 14))])
    mod.forward(batch, is_train=False)
    assert 'conv_output' in seen


def test_ndarray_passes_for_a_handle():
    arr = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    handle = ctypes.cast(arr, NDArrayHandle)
    view = NDArray(handle, writable=False)
    assert view.shape == (2, 3)
    np.testing.assert_array_equal(view.asnumpy(), arr.asnumpy())
    with pytest.raises(ValueError):
        view._data[0, 0] = 5           # read-only view
    same = NDArray(handle)
    same[:] = 7
    assert arr.asnumpy().max() == 7     # the same memory
    with pytest.raises(mx.MXNetError, match='live NDArray'):
        NDArray(ctypes.c_void_p(12345))
