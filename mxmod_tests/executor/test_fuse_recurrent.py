"""Unrolled LSTM and GRU layers built from primitive operators as keras-mxnet builds them
(primitive_rnn.py) run fused by the generic passes (fuse_products.py, fuse_elemwise.py): the
outputs equal the step-by-step graph's bit for bit and the gradients up to the order of sums
(products merged, gradients of values read by several steps summed in another order); with the
elementwise pass alone (no product merged) everything but the sums over several groups is bit for
bit. Both the compiled (numba) and the numpy form of the groups are checked."""
import numpy as np
import pytest

import mxmod as mx

from . import primitive_rnn as prim
from .fusion_helpers import ALL, ELEMWISE, NONE, close, run

T, B, I, H = 5, 4, 6, 3


def _loss(kind, masked=False, **kw):
    out = prim.unrolled(mx, kind, T, H, masked=masked, width=I, **kw)
    out = mx.sym.FullyConnected(out, num_hidden=2, name='dense')
    return mx.sym.MakeLoss(mx.sym.sum(out * out))


def _shapes(masked=False):
    shapes = {'data': (B, T, I)}
    if masked:
        shapes['mask'] = (B, T)
    return shapes


def _mask_values():
    mask = (np.random.RandomState(3).rand(B, T) > 0.3).astype(np.float32)
    mask[0] = 0         # a sequence masked throughout
    return {'mask': mask}


def _req(sym, masked):
    return {n: 'null' if masked and n == 'mask' else 'write' for n in sym.list_arguments()}


CASES = [
    ('lstm', dict(implementation=1)),
    ('lstm', dict(implementation=1, broadcast=True)),
    ('lstm', dict(implementation=2)),
    ('lstm', dict(implementation=1, rec='sigmoid')),
    ('lstm', dict(implementation=2, rec='sigmoid_op', act='relu', broadcast=True)),
    ('gru', dict()),
    ('gru', dict(broadcast=True, rec='sigmoid')),
]


QUICK = {(0, False, True), (0, True, False), (3, True, True), (5, False, True), (5, True, False)}


def _matrix():
    """Every case, mask and form; all but a few marked slow (numba compiles each case's
    kernels once per machine)."""
    for k, (kind, kw) in enumerate(CASES):
        for masked in (False, True):
            for numba in (True, False):
                marks = () if (k, masked, numba) in QUICK else (pytest.mark.slow,)
                yield pytest.param(kind, kw, masked, numba, marks=marks)


@pytest.mark.parametrize('kind,kw,masked,numba', list(_matrix()))
def test_fused_layers_match_step_by_step(kind, kw, masked, numba):
    sym = _loss(kind, masked, **kw)
    values = _mask_values() if masked else None
    args = dict(grad_req=_req(sym, masked), values=values, numba=numba)
    plain = run(sym, _shapes(masked), NONE, **args)
    fused = run(sym, _shapes(masked), ALL, **args)
    close(plain, fused)
    # the layer's products: one hoisted input product, one recurrent product per time step
    assert fused.count('dot') < plain.count('dot')
    assert fused.count('_fused_products') >= 1
    # every time step's group (with masks, the first and last differ: the masked outputs, made
    # from a zeros_like of the first step's output, are computed with the last step's group)
    assert fused.count('_fused_elemwise') >= (T - 2 if masked else T)
    compiled = [op._compiled is not None for op in fused.ops('_fused_elemwise')]
    assert all(compiled) if numba else not any(compiled)


@pytest.mark.parametrize('kind,kw', [CASES[0], CASES[3], CASES[5]])
def test_elementwise_groups_alone_are_bit_for_bit(kind, kw):
    """Without merged products the groups' values equal the separate steps' exactly, and so do
    the gradients of the LSTM's weights and data: its states are read by one group each. Where
    a value's gradient sums contributions of several groups and steps (the bias slices, read at
    every time step; the GRU's state, read by both its groups and its product) the sums run in
    another order and agree to float32 rounding."""
    sym = _loss(kind, **kw)
    plain = run(sym, _shapes(), NONE)
    fused = run(sym, _shapes(), ELEMWISE)
    close(plain, fused, rtol=1e-5, atol=1e-7)
    if kind == 'lstm':
        for name in ('data', 'lstm_i2h_weight', 'lstm_h2h_weight'):
            np.testing.assert_array_equal(plain.grads[name], fused.grads[name], err_msg=name)


def test_float64_layers():
    sym = _loss('lstm', broadcast=True)
    plain = run(sym, _shapes(), NONE, dtype='float64')
    fused = run(sym, _shapes(), ALL, dtype='float64')
    close(plain, fused, rtol=1e-12, atol=1e-14)
    assert all(op._compiled is not None for op in fused.ops('_fused_elemwise'))


def test_several_passes_reshape_and_inference_before_backward():
    sym = _loss('gru', broadcast=True)
    plain = run(sym, _shapes(), NONE, passes=3)
    fused = run(sym, _shapes(), ALL, passes=3)
    close(plain, fused)
    # a backward after an inference pass: the groups kept nothing and compute it again
    again = run(sym, _shapes(), ALL, is_train=False)
    close(plain, again)
    bigger = fused.exe.reshape(allow_up_sizing=True, data=(B + 3, T, I))
    bigger.arg_dict['data'][:] = np.random.RandomState(1).uniform(-1, 1, (B + 3, T, I))
    ref = plain.exe.reshape(allow_up_sizing=True, data=(B + 3, T, I))
    ref.arg_dict['data'][:] = bigger.arg_dict['data']
    assert any(step.op.op_name == '_fused_elemwise' for step in bigger._plan.steps)
    for exe in (bigger, ref):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_array_equal(bigger.outputs[0].asnumpy(), ref.outputs[0].asnumpy())
    np.testing.assert_allclose(bigger.grad_dict['gru_h2h_weight'].asnumpy(),
                               ref.grad_dict['gru_h2h_weight'].asnumpy(), rtol=1e-5, atol=1e-6)


def test_grad_req_add_and_null():
    sym = _loss('lstm')
    req = {n: 'write' for n in sym.list_arguments()}
    req['lstm_bias'] = 'null'
    req['lstm_h2h_weight'] = 'add'
    plain = run(sym, _shapes(), NONE, grad_req=req, passes=2)
    fused = run(sym, _shapes(), ALL, grad_req=req, passes=2)
    close(plain, fused)
    assert 'lstm_bias' not in fused.grads or not fused.grads['lstm_bias'].any()


def test_training_with_module_follows_the_step_by_step_graph():
    """Ten SGD steps of an Embedding + LSTM + FullyConnected classifier: the parameters stay
    within float32 rounding of the unfused run's."""
    def train(flags):
        with mx.test_utils.environment(flags):
            data = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=20, output_dim=I,
                                    name='embed')
            last = prim.unrolled(mx, 'lstm', T, H, data=data, width=I, broadcast=True)
            out = mx.sym.FullyConnected(last, num_hidden=2, name='dense')
            net = mx.sym.SoftmaxOutput(out, mx.sym.Variable('label'), name='out')
            rs = np.random.RandomState(5)
            x = rs.randint(0, 20, (32, T)).astype(np.float32)
            y = (x[:, 0] > x[:, -1]).astype(np.float32)
            it = mx.io.NDArrayIter(x, y, 8, label_name='label')
            mod = mx.mod.Module(net, data_names=['data'], label_names=['label'])
            mod.bind(it.provide_data, it.provide_label)
            mx.random.seed(7)
            mod.init_params(mx.init.Uniform(0.5))
            mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
            for _ in range(10 // 4 + 1):
                it.reset()
                for batch in it:
                    mod.forward_backward(batch)
                    mod.update()
            kinds = {s.op.op_name for s in mod._exec_group.execs[0]._plan.steps}
            return mod.get_params()[0], kinds
    plain, plain_ops = train(NONE)
    fused, fused_ops = train(ALL)
    assert '_fused_elemwise' in fused_ops and '_fused_elemwise' not in plain_ops
    for name in plain:
        np.testing.assert_allclose(plain[name].asnumpy(), fused[name].asnumpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


def test_switches_turn_the_passes_off():
    sym = _loss('lstm')
    with mx.test_utils.environment('MXMOD_FUSE_RNN', '0'):
        off = run(sym, _shapes(), ALL)
    assert off.count('_fused_products') == 0 and off.count('_fused_elemwise') == 0
    with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', '1'):
        mirrored = run(sym, _shapes(), ALL)
    assert mirrored.count('_fused_products') == 0 and mirrored.count('_fused_elemwise') == 0


def test_two_stacked_layers():
    """Two LSTM layers, the second reading the first's outputs: every product merged, each
    layer's time steps grouped, values as step by step."""
    data = mx.sym.Variable('data')
    xs = list(mx.sym.split(data, axis=1, squeeze_axis=1, num_outputs=T))
    for layer, width in enumerate((I, H)):
        wt = prim.Weights(mx, 'l%d_' % layer, 4, H, width)
        h = c = mx.sym.Variable('l%d_h0' % layer, shape=(B, H))
        outs = []
        for x in xs:
            h, c = prim.lstm_step(mx, wt, x, h, c, broadcast=True)
            outs.append(h)
        xs = outs
    sym = mx.sym.MakeLoss(mx.sym.sum(mx.sym.FullyConnected(xs[-1], num_hidden=2) ** 2))
    plain = run(sym, _shapes(), NONE)
    fused = run(sym, _shapes(), ALL)
    close(plain, fused)
    # h_t of the first layer is read by its next step's 4 products and the second layer's 4:
    # one product of 8 weights per step (the second layer's input products join them)
    widths = sorted(len(op.widths) for op in fused.ops('_fused_products'))
    assert fused.count('dot') == 0 and 8 in widths
    assert fused.count('_fused_elemwise') == 2 * T
