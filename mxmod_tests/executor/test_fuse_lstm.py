"""Unrolled LSTMCell layers run fused (mxmod/executor/fuse_lstm.py): outputs and every gradient
equal the step-by-step graph's (MXMOD_FUSE_RNN=0) and a float64 numpy reference; graphs that do
not match exactly, monitors, the profiler and mirroring run step by step."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.test_utils import environment

from ..rnn import reference


def _net(T, H, layers, begin='zero', layout='NTC', merge=True, states_out=True, prefix='l'):
    stack = mx.rnn.SequentialRNNCell()
    for k in range(layers):
        stack.add(mx.rnn.LSTMCell(H, prefix='%s%d_' % (prefix, k)))
    begin_state = None
    if begin == 'given':
        begin_state = [mx.sym.Variable('state%d' % k) for k in range(2 * layers)]
    outs, states = stack.unroll(T, inputs=mx.sym.Variable('data'), begin_state=begin_state,
                                layout=layout, merge_outputs=merge)
    outs = outs if isinstance(outs, list) else [outs]
    return mx.sym.Group(outs + (list(states) if states_out else []))


def _shapes(T, B, I, H, layers, begin, layout):
    shapes = {'data': (B, T, I) if layout == 'NTC' else (T, B, I)}
    if begin == 'given':
        shapes.update({'state%d' % k: (B, H) for k in range(2 * layers)})
    return shapes


def _fused_steps(exe):
    return sum(step.op.op_name == '_fused_lstm' for step in exe._plan.steps)


def _run(sym, shapes, fuse, grad_req='write', passes=1, dtype='float32', is_train=True,
         seed=0):
    with environment('MXMOD_FUSE_RNN', '1' if fuse else '0'):
        exe = sym.simple_bind(mx.cpu(), grad_req=grad_req, type_dict={n: dtype for n in shapes},
                               **shapes)
    rs = np.random.RandomState(seed)
    for arr in exe.arg_arrays:
        arr[:] = rs.uniform(-0.6, 0.6, arr.shape)
    heads = [mx.nd.array(rs.uniform(-1, 1, o.shape), dtype=dtype) for o in exe.outputs]
    for _ in range(passes):
        outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
        exe.backward(heads)
    return exe, outs, {k: v.asnumpy() for k, v in exe.grad_dict.items()}


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_equal(len(a), len(b))
    for key in (range(len(a)) if isinstance(a, list) else a):
        np.testing.assert_allclose(a[key], b[key], rtol=rtol, atol=atol, err_msg=str(key))


@pytest.mark.parametrize('T,B,I,H,layers,begin,layout', [
    (1, 3, 5, 4, 1, 'zero', 'NTC'),
    (4, 2, 5, 3, 1, 'given', 'NTC'),
    (6, 4, 7, 8, 2, 'zero', 'NTC'),
    (5, 1, 3, 6, 2, 'given', 'TNC'),
    (9, 5, 6, 6, 2, 'zero', 'TNC'),
])
def test_fused_matches_step_by_step(T, B, I, H, layers, begin, layout):
    sym = _net(T, H, layers, begin, layout)
    text = sym.tojson()
    shapes = _shapes(T, B, I, H, layers, begin, layout)
    plain, out0, grad0 = _run(sym, shapes, fuse=False)
    fused, out1, grad1 = _run(sym, shapes, fuse=True)
    assert _fused_steps(plain) == 0 and _fused_steps(fused) == layers
    _close(out1, out0)
    _close(grad1, grad0)
    # only the executed plan differs: symbol, names and arrays are the step-by-step ones
    assert sym.tojson() == text
    assert fused.get_optimized_symbol().tojson() == plain.get_optimized_symbol().tojson()
    assert sorted(grad1) == sorted(sym.list_arguments())
    assert list(fused.arg_dict) == list(plain.arg_dict)
    assert list(fused.output_dict) == list(plain.output_dict)
    assert [s.name for s in fused._unfused_plan.steps] == [s.name for s in plain._plan.steps]


def test_fused_matches_float64_reference():
    T, B, I, H = 5, 3, 4, 6
    sym = _net(T, H, 1, 'given', 'NTC', merge=False)
    exe, outs, _ = _run(sym, _shapes(T, B, I, H, 1, 'given', 'NTC'), fuse=True)
    assert _fused_steps(exe) == 1
    args = {k: v.asnumpy().astype(np.float64) for k, v in exe.arg_dict.items()}
    params = {k[3:]: v for k, v in args.items() if k.startswith('l0_')}
    xs = [args['data'][:, t] for t in range(T)]
    ref, states = reference.unroll('lstm', xs, params, [args['state0'], args['state1']])
    _close(outs, ref + states, rtol=1e-5, atol=1e-6)


def test_gradients_match_finite_differences():
    """Gradients of the fused layer against central differences of its own float64 forward."""
    T, B, I, H = 3, 2, 3, 2
    sym = mx.sym.MakeLoss(mx.sym.sum(_net(T, H, 1, 'given', merge=True, states_out=False)
                                     * mx.sym.Variable('w')))
    shapes = dict(_shapes(T, B, I, H, 1, 'given', 'NTC'), w=(B, T, H))
    with environment('MXMOD_FUSE_RNN', '1'):
        exe = sym.simple_bind(mx.cpu(), type_dict={n: 'float64' for n in shapes}, **shapes)
    assert _fused_steps(exe) == 1
    rs = np.random.RandomState(3)
    for arr in exe.arg_arrays:
        arr[:] = rs.uniform(-0.8, 0.8, arr.shape)
    exe.forward(is_train=True)
    exe.backward()
    for name in ('data', 'state0', 'state1', 'l0_i2h_weight', 'l0_h2h_weight', 'l0_i2h_bias'):
        arr = exe.arg_dict[name]
        flat = arr.asnumpy().reshape(-1)
        numeric = np.empty_like(flat)
        for k in range(flat.size):
            vals = []
            for delta in (1e-6, -1e-6):
                moved = flat.copy()
                moved[k] += delta
                arr[:] = moved.reshape(arr.shape)
                vals.append(exe.forward(is_train=False)[0].asnumpy().sum())
            numeric[k] = (vals[0] - vals[1]) / 2e-6
        arr[:] = flat.reshape(arr.shape)
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy().reshape(-1), numeric,
                                   rtol=1e-6, atol=1e-8, err_msg=name)


def test_float64_and_inference_and_backward_after_inference():
    T, B, I, H = 4, 3, 5, 4
    sym = _net(T, H, 2, 'given')
    shapes = _shapes(T, B, I, H, 2, 'given', 'NTC')
    for dtype in ('float64', 'float32'):
        _, out0, grad0 = _run(sym, shapes, False, dtype=dtype, is_train=False)
        fused, out1, grad1 = _run(sym, shapes, True, dtype=dtype, is_train=False)
        assert _fused_steps(fused) == 2
        _close(out1, out0)
        _close(grad1, grad0)


def test_grad_req_add_and_null():
    T, B, I, H = 5, 2, 3, 4
    sym = _net(T, H, 2, 'given')
    shapes = _shapes(T, B, I, H, 2, 'given', 'NTC')
    req = {n: ('null' if n in ('l0_i2h_weight', 'l1_h2h_bias', 'state1') else 'add')
           for n in sym.list_arguments()}
    _, out0, grad0 = _run(sym, shapes, False, grad_req=req, passes=3)
    fused, out1, grad1 = _run(sym, shapes, True, grad_req=req, passes=3)
    assert _fused_steps(fused) == 2 and 'l0_i2h_weight' not in grad1
    _close(out1, out0)
    _close(grad1, grad0)


def test_internals_and_non_lstm_graphs_run_step_by_step():
    T, B, I, H = 3, 2, 3, 4
    sym = _net(T, H, 1, 'zero', merge=False, states_out=False)
    internals = sym.get_internals()
    gate = internals['l0_t1_i_output']
    grouped = mx.sym.Group([sym, gate])
    shapes = _shapes(T, B, I, H, 1, 'zero', 'NTC')
    _, out0, grad0 = _run(grouped, shapes, False)
    fused, out1, grad1 = _run(grouped, shapes, True)
    # the cell whose gate is an output runs step by step: the chain splits around it
    names = [s.name for s in fused._plan.steps]
    assert 'l0_t1_i' in names and _fused_steps(fused) >= 1
    _close(out1, out0)
    _close(grad1, grad0)
    for cell in (mx.rnn.GRUCell(H, prefix='g_'), mx.rnn.RNNCell(H, prefix='r_')):
        outs, _ = cell.unroll(T, inputs=mx.sym.Variable('data'), merge_outputs=True)
        exe, _, _ = _run(outs, shapes, True)
        assert _fused_steps(exe) == 0


def test_feedback_input_is_not_fused():
    """x_{t+1} computed from h_t (a decoder feeding its output back) cannot be one step."""
    H, B = 4, 2
    cell = mx.rnn.LSTMCell(H, prefix='d_')
    x, states, outs = mx.sym.Variable('data'), cell.begin_state(), []
    for _ in range(3):
        out, states = cell(x, states)
        outs.append(out)
        x = mx.sym.tanh(out)
    sym = mx.sym.Group(outs)
    plain, out0, grad0 = _run(sym, {'data': (B, H)}, False)
    fused, out1, grad1 = _run(sym, {'data': (B, H)}, True)
    assert _fused_steps(fused) == 0
    _close(out1, out0)
    _close(grad1, grad0)


def test_monitor_profiler_and_mirror_run_step_by_step(tmp_path):
    T, B, I, H = 3, 2, 3, 4
    sym = _net(T, H, 1, 'zero')
    shapes = _shapes(T, B, I, H, 1, 'zero', 'NTC')
    seen = {}
    for fuse in (False, True):
        exe, _, _ = _run(sym, shapes, fuse)
        names = []
        exe.set_monitor_callback(lambda name, arr: names.append(name))
        exe.forward(is_train=True)
        exe.backward([mx.nd.ones(o.shape) for o in exe.outputs])
        assert _fused_steps(exe) == 0
        seen[fuse] = names
    assert seen[True] == seen[False] and 'l0_t1_c_output' in seen[True]
    with environment('MXNET_BACKWARD_DO_MIRROR', '1'):
        exe, _, _ = _run(sym, shapes, True)
    assert _fused_steps(exe) == 0
    exe, out0, _ = _run(sym, shapes, True)
    assert _fused_steps(exe) == 1
    mx.profiler.set_config(profile_symbolic=True, filename=str(tmp_path / 'trace.json'))
    mx.profiler.set_state('run')
    try:
        out1 = [o.asnumpy() for o in exe.forward(is_train=True)]
    finally:
        mx.profiler.set_state('stop')
    assert _fused_steps(exe) == 0
    _close(out1, out0)


def _train_lm(fuse, epochs=2):
    """A small bucketing LSTM language model (bench/workloads.py's, scaled down): perplexity per
    epoch, the final parameters, and the predictions of the trained model (inference)."""
    import random
    random.seed(1)
    np.random.seed(1)
    mx.random.seed(1)
    rs = np.random.RandomState(1)
    sentences = [list(rs.randint(1, 30, size=n)) for n in rs.randint(2, 8, size=60)]
    stack = mx.rnn.SequentialRNNCell()
    for k in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=8, prefix='lstm_l%d_' % k))

    def sym_gen(seq_len):
        embed = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=30, output_dim=6, name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 8)), num_hidden=30,
                                     name='pred')
        label = mx.sym.Reshape(mx.sym.Variable('softmax_label'), shape=(-1,))
        return mx.sym.SoftmaxOutput(pred, label=label, name='softmax'), ('data',), ('softmax_label',)

    with environment('MXMOD_FUSE_RNN', '1' if fuse else '0'):
        it = mx.rnn.BucketSentenceIter(sentences, 4, buckets=[3, 5, 7], invalid_label=0)
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
        history = []
        for epoch in range(epochs):
            metric = mx.metric.Perplexity(0)
            it.reset()
            mod.fit(it, begin_epoch=epoch, num_epoch=epoch + 1, eval_metric=metric,
                    optimizer='sgd', initializer=mx.init.Xavier(factor_type='in', magnitude=2.34),
                    optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
            history.append(metric.get()[1])
        fused = sum(_fused_steps(m._exec_group.execs[0]) for m in mod._buckets.values())
        it.reset()
        preds = mod.predict(it, merge_batches=False)
    args, _ = mod.get_params()
    return history, {k: v.asnumpy() for k, v in args.items()}, fused, preds


def test_bucketing_training_matches_step_by_step():
    ppl0, params0, fused0, preds0 = _train_lm(False)
    ppl1, params1, fused1, preds1 = _train_lm(True)
    assert fused0 == 0 and fused1 == 2 * 3       # two layers in each of the three buckets
    np.testing.assert_allclose(ppl1, ppl0, rtol=1e-4)
    _close(params1, params0, rtol=1e-4, atol=1e-5)
    assert len(preds1) == len(preds0)
    for p1, p0 in zip(preds1, preds0):
        _close([o.asnumpy() for o in p1], [o.asnumpy() for o in p0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('kind', ['bidirectional', 'residual', 'dropout', 'zoneout'])
def test_modified_and_bidirectional_stacks(kind):
    """Cells wrapped by MXNet's modifiers: each LSTM layer that still matches is fused (the
    random draws of dropout and zoneout come in the same order), the results are unchanged."""
    T, B, I, H = 4, 3, 5, 5
    stack = mx.rnn.SequentialRNNCell()
    if kind == 'bidirectional':
        stack.add(mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix='fw_'),
                                           mx.rnn.LSTMCell(H, prefix='bw_')))
    elif kind == 'residual':
        stack.add(mx.rnn.LSTMCell(H, prefix='l0_'))
        stack.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(H, prefix='l1_')))
    elif kind == 'dropout':
        stack.add(mx.rnn.LSTMCell(H, prefix='l0_'))
        stack.add(mx.rnn.DropoutCell(0.5, prefix='drop_'))
        stack.add(mx.rnn.LSTMCell(H, prefix='l1_'))
    else:
        stack.add(mx.rnn.ZoneoutCell(mx.rnn.LSTMCell(H, prefix='l0_'), zoneout_outputs=0.3,
                                     zoneout_states=0.4))
    outs, _ = stack.unroll(T, inputs=mx.sym.Variable('data'), merge_outputs=True)
    shapes = {'data': (B, T, I)}
    results = []
    for fuse in (False, True):
        mx.random.seed(7)
        results.append(_run(outs, shapes, fuse))
    (_, out0, grad0), (fused, out1, grad1) = results
    assert _fused_steps(fused) == {'bidirectional': 2, 'residual': 2, 'dropout': 2,
                                   'zoneout': T}[kind]
    _close(out1, out0)
    _close(grad1, grad0)


@pytest.mark.parametrize('width', [3, 4, 5])
def test_single_step_with_other_state_width(width):
    """One LSTMCell step whose begin h is not (B, H) (its h2h weight is (4H, width)): fused only
    where the kernel's state shapes hold, the values are the step-by-step ones either way."""
    H, B, I = 4, 2, 5
    cell = mx.rnn.LSTMCell(H, prefix='s_')
    out, states = cell(mx.sym.Variable('data'), [mx.sym.Variable('h0'), mx.sym.Variable('c0')])
    sym = mx.sym.Group([out] + states)
    shapes = {'data': (B, I), 'h0': (B, width), 'c0': (B, H)}
    _, out0, grad0 = _run(sym, shapes, False)
    fused, out1, grad1 = _run(sym, shapes, True)
    assert _fused_steps(fused) == (1 if width == H else 0)
    _close(out1, out0)
    _close(grad1, grad0)


# ---- compiled per-step gate kernels (mxmod/ops/lstm_kernels.py) ---------------------------------
numba = pytest.importorskip('numba')


@pytest.fixture
def restore_jit():
    from mxmod.ops import jit
    previous = jit.enabled()
    yield jit
    jit.set_enabled(previous)


def test_kernel_tanh_accuracy():
    from mxmod.ops import lstm_kernels
    x = np.linspace(-20, 20, 400001).astype(np.float32)
    out = np.empty_like(x)
    lstm_kernels.tanh(x, out)
    ref = np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=5e-7, atol=1e-9)
    assert np.abs(out).max() <= 1.0
    np.testing.assert_array_equal(out[::-1], -out)       # odd


def _gate_reference(a, z, bias, c_prev, H):
    """float64 reference of one step in the fused layout (i, f, o negated; order i, f, o, g)."""
    x = a.astype(np.float64) + z + bias
    sig = 1.0 / (1.0 + np.exp(x[:, :3 * H]))
    g = np.tanh(x[:, 3 * H:])
    i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 2 * H:]
    c = f * c_prev + i * g
    return np.concatenate([sig, g], 1), c, np.tanh(c), o * np.tanh(c)


@pytest.mark.parametrize('B,H', [(1, 1), (3, 5), (32, 200), (7, 33)])
def test_kernel_forward_and_backward_step(B, H):
    from mxmod.ops import lstm_kernels
    rs = np.random.RandomState(B + H)
    f32 = np.float32
    a = rs.uniform(-6, 6, (B, 4 * H)).astype(f32)
    z = rs.uniform(-3, 3, (B, 4 * H)).astype(f32)
    bias = rs.uniform(-1, 1, 4 * H).astype(f32)
    c_prev = rs.uniform(-3, 3, (B, H)).astype(f32)
    gates_ref, c_ref, tc_ref, h_ref = _gate_reference(a, z, bias, c_prev, H)
    for add_z in (True, False):
        zz = z if add_z else np.zeros_like(z)
        gates_ref, c_ref, tc_ref, h_ref = _gate_reference(a, zz, bias, c_prev, H)
        gates, c, tc, h = a.copy(), *(np.empty((B, H), f32) for _ in range(3))
        lstm_kernels.forward_step(gates, z, add_z, bias, c_prev, c, tc, h,
                                  np.empty(4 * H, f32))
        for got, ref in ((gates, gates_ref), (c, c_ref), (tc, tc_ref), (h, h_ref)):
            np.testing.assert_allclose(got, ref, rtol=2e-6, atol=5e-7)
    # backward: the derivative chain of one step against float64 formulas
    i, f, o, g = (gates_ref[:, k * H:(k + 1) * H] for k in range(4))
    dh_ext, dh_rec, dc_next, dc_ext = (rs.uniform(-1, 1, (B, H)).astype(f32) for _ in range(4))
    gates32, tc32 = gates_ref.astype(f32), tc_ref.astype(f32)
    dg = np.empty((B, 4, H), f32)
    dc_out = np.empty((B, H), f32)
    db = np.full((4, H), 0.25)
    lstm_kernels.backward_step(gates32, c_prev, tc32, dh_ext, dh_rec, dc_next, dc_ext, dg,
                               dc_out, db)
    dh = dh_ext.astype(np.float64) + dh_rec
    dc = dh * o * (1 - tc_ref ** 2) + dc_next + dc_ext
    ref = np.stack([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                    dh * tc_ref * o * (1 - o)], 1)
    np.testing.assert_allclose(dg, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dc_out, dc * f, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(db, 0.25 + ref.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('T,B,I,H,layers,begin,grad_req', [
    (1, 2, 3, 4, 1, 'zero', 'write'),
    (7, 3, 5, 6, 2, 'given', 'write'),
    (12, 5, 9, 17, 2, 'zero', 'add'),
    (20, 8, 16, 32, 1, 'given', 'add'),
])
def test_kernel_path_matches_numpy_path(restore_jit, T, B, I, H, layers, begin, grad_req):
    """The fused layer with the compiled gate kernels against its numpy arithmetic (and against
    the step-by-step graph): outputs, states and every gradient, gradients accumulated with
    grad_req='add' over three passes."""
    sym = _net(T, H, layers, begin, 'NTC')
    shapes = _shapes(T, B, I, H, layers, begin, 'NTC')
    results = {}
    for compiled in (False, True):
        restore_jit.set_enabled(compiled)
        results[compiled] = _run(sym, shapes, True, grad_req=grad_req, passes=3)
        assert _fused_steps(results[compiled][0]) == layers
    _, out0, grad0 = results[False]
    _, out1, grad1 = results[True]
    _close(out1, out0, rtol=1e-5, atol=2e-6)
    _close(grad1, grad0, rtol=1e-4, atol=2e-6)
    _, out2, grad2 = _run(sym, shapes, False, grad_req=grad_req, passes=3)
    _close(out1, out2, rtol=1e-5, atol=2e-6)
    _close(grad1, grad2, rtol=1e-4, atol=2e-6)


def test_kernels_only_for_float32(restore_jit):
    from mxmod.executor import lstm_kernel
    restore_jit.set_enabled(True)
    assert lstm_kernel._kernels(np.float32) is not None
    assert lstm_kernel._kernels(np.float64) is None
    restore_jit.set_enabled(False)
    assert lstm_kernel._kernels(np.float32) is None
    # float64 keeps the numpy arithmetic: equal to the step-by-step graph to float64 rounding
    restore_jit.set_enabled(True)
    T, B, I, H = 6, 3, 4, 5
    sym = _net(T, H, 2, 'given')
    shapes = _shapes(T, B, I, H, 2, 'given', 'NTC')
    _, out0, grad0 = _run(sym, shapes, False, dtype='float64')
    _, out1, grad1 = _run(sym, shapes, True, dtype='float64')
    _close(out1, out0, rtol=1e-12, atol=1e-13)
    _close(grad1, grad0, rtol=1e-10, atol=1e-12)


def test_bucketing_training_with_and_without_kernels(restore_jit):
    results = []
    for compiled in (False, True):
        restore_jit.set_enabled(compiled)
        results.append(_train_lm(True))
    (ppl0, params0, _, _), (ppl1, params1, fused, _) = results
    assert fused == 2 * 3
    np.testing.assert_allclose(ppl1, ppl0, rtol=1e-4)
    _close(params1, params0, rtol=1e-4, atol=1e-5)


def test_fused_layer_reports_its_weight_gradients_before_the_data_gradient():
    """With a gradient-ready hook (gradient overlap), each fused layer writes its weight and bias
    gradients into their arrays and reports them before it computes the gradient of its inputs:
    layer 1's four names come before layer 1's data-gradient product, and the values reported
    are final and equal to a pass without hook."""
    from mxmod.executor import lstm_kernel
    T, B, I, H = 5, 3, 4, 6
    sym = _net(T, H, 2)
    shapes = _shapes(T, B, I, H, 2, 'zero', 'NTC')
    _, _, plain = _run(sym, shapes, fuse=True)
    events = []
    real = lstm_kernel.blas.matmul

    def matmul(a, b, out=None):
        if a.shape == (T * B, 4 * H) and out is None:      # G2 @ wi: the inputs' gradient
            events.append(('data_gradient', b.shape[1]))
        return real(a, b, out=out)

    with environment('MXMOD_FUSE_RNN', '1'):
        exe = sym.simple_bind(mx.cpu(), **shapes)
    rs = np.random.RandomState(0)
    for arr in exe.arg_arrays:
        arr[:] = rs.uniform(-0.6, 0.6, arr.shape)
    heads = [mx.nd.array(rs.uniform(-1, 1, o.shape)) for o in exe.outputs]

    def seen(names):
        if names is not None:
            events.append(('ready', tuple(names),
                           [exe.grad_dict[n].asnumpy().copy() for n in names]))
    exe.set_grad_ready_hook(seen)
    lstm_kernel.blas.matmul = matmul
    try:
        exe.forward(is_train=True)
        exe.backward(heads)
    finally:
        lstm_kernel.blas.matmul = real
    assert _fused_steps(exe) == 2
    layer1 = {'l1_i2h_weight', 'l1_i2h_bias', 'l1_h2h_weight', 'l1_h2h_bias'}
    reported = [n for e in events if e[0] == 'ready' for n in e[1]]
    assert layer1 <= set(reported) and len(reported) == len(set(reported))
    first_data_gradient = next(i for i, e in enumerate(events) if e[0] == 'data_gradient')
    early = {n for e in events[:first_data_gradient] if e[0] == 'ready' for n in e[1]}
    assert early == layer1, events
    for event in events:
        if event[0] == 'ready':
            for name, value in zip(event[1], event[2]):
                np.testing.assert_array_equal(value, plain[name], err_msg=name)
    for name, value in plain.items():
        np.testing.assert_array_equal(exe.grad_dict[name].asnumpy(), value, err_msg=name)
