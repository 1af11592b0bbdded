"""The profiler on (emulated) GPUs: operators on the gpu(i) tracks, synchronized timing, memory
counters per GPU, and the same numbers as without profiling."""
import numpy as np

import mxmod as mx
from mxmod.profiler.state import take_events

from ..profiler.tracing import load_trace, names


def _run(ctx):
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4, name='fc')
    net = mx.sym.SoftmaxOutput(mx.sym.Activation(net, act_type='tanh'), name='softmax')
    exe = net.simple_bind(ctx, data=(3, 5))
    rng = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape) if name != 'softmax_label' else [0, 1, 3]
    exe.forward(is_train=True)
    exe.backward()
    return exe.grad_dict['fc_weight'].asnumpy()


def test_operators_on_gpu_tracks(gpus, tmp_path):
    expected = _run(mx.gpu(1))
    path = str(tmp_path / 'gpu.json')
    mx.profiler.set_config(profile_all=True, filename=path, continuous_dump=False)
    mx.profiler.set_state('run')
    try:
        got = _run(mx.gpu(1))
    finally:
        mx.profiler.set_state('stop')
    mx.profiler.dump()
    take_events()
    np.testing.assert_array_equal(got, expected)
    events, threads, _ = load_trace(path)
    assert threads[(0, 201)] == 'gpu(1)'
    steps = [e['name'] for e in events if 'node' in e.get('args', {})]
    assert steps == ['FullyConnected', 'Activation', 'SoftmaxOutput', '_backward_SoftmaxOutput',
                     '_backward_Activation', '_backward_FullyConnected']
    assert set(names(events, 'operator', 201)) >= set(steps)
    assert 'Memory: gpu/1' in names(events, 'Device Storage')
