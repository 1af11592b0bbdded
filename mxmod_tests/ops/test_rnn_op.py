"""The fused RNN operator: forward and gradients against frozen MXNet 1.9.1 outputs, gradients
against central differences (projection, clipping, sequence lengths, dropout), shape inference."""
import os

import numpy as np
import pytest

from mxmod.base import MXNetError
from mxmod.ops.rnn import rnn_param_size
from mxmod_tests.ops.opcheck import check_grad, make, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), 'fixtures', 'seq_rnn_oracle.npz'))
# name: (mode, num_layers, bidirectional, state_size, projection_size), as in the fixture script
CASES = {
    'lstm2bi': ('lstm', 2, True, 4, None), 'gru1bi': ('gru', 1, True, 3, None),
    'gru2': ('gru', 2, False, 3, None), 'tanh2': ('rnn_tanh', 2, False, 3, None),
    'relu1bi': ('rnn_relu', 1, True, 3, None), 'lstmproj': ('lstm', 2, False, 4, 2),
}


def _attrs(name, **extra):
    mode, layers, bidir, hidden, proj = CASES[name]
    attrs = dict(mode=mode, num_layers=layers, bidirectional=bidir, state_size=hidden,
                 state_outputs=True)
    attrs.update(extra)
    if proj:
        attrs['projection_size'] = proj
    return attrs


def _inputs(name, dtype='float64'):
    count = 4 if CASES[name][0] == 'lstm' else 3
    return [FIX['%s_in%d' % (name, i)].astype(dtype) for i in range(count)]


def _random_inputs(mode, layers, dirs, hidden, steps, batch, width, proj=None, seed=0):
    rng = np.random.RandomState(seed)
    size = rnn_param_size(mode, layers, dirs, hidden, width, proj)
    arrays = [rng.uniform(-1, 1, (steps, batch, width)), rng.uniform(-0.7, 0.7, (size,)),
              rng.uniform(-1, 1, (layers * dirs, batch, proj or hidden))]
    if mode == 'lstm':
        arrays.append(rng.uniform(-1, 1, (layers * dirs, batch, hidden)))
    return arrays


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_forward_matches_oracle(name, dtype):
    outs = run_forward(make('RNN', **_attrs(name)), _inputs(name, dtype))
    count = 3 if CASES[name][0] == 'lstm' else 2
    assert len(outs) == count
    for i, got in enumerate(outs):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, FIX['%s_out%d' % (name, i)], rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize('name', sorted(n for n in CASES if CASES[n][4] is None))
def test_gradients_match_oracle_and_differences(name):
    inputs = _inputs(name)
    heads = [FIX['%s_head%d' % (name, i)] for i in range(3 if CASES[name][0] == 'lstm' else 2)]
    grads = check_grad('RNN', _attrs(name), inputs, head=heads)
    for i, got in enumerate(grads):
        np.testing.assert_allclose(got, FIX['%s_grad%d' % (name, i)], rtol=1e-5, atol=1e-6)


def test_projection_gradient():
    check_grad('RNN', _attrs('lstmproj', bidirectional=True),
               _random_inputs('lstm', 2, 2, 4, 3, 2, 3, proj=2))


def test_state_clipping():
    attrs = dict(mode='lstm', num_layers=1, state_size=3, state_outputs=True,
                 lstm_state_clip_min=-0.3, lstm_state_clip_max=0.3)
    inputs = _random_inputs('lstm', 1, 1, 3, 4, 2, 2, seed=3)
    outs = run_forward(make('RNN', **attrs), inputs)
    assert np.abs(outs[2]).max() <= 0.3 + 1e-12
    plain = run_forward(make('RNN', **dict(attrs, lstm_state_clip_min=None,
                                            lstm_state_clip_max=None)), inputs)
    assert np.abs(plain[2]).max() > 0.3       # the clip is active in this case
    check_grad('RNN', attrs, inputs)


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_tanh'])
def test_sequence_length(mode):
    """Each sequence behaves as if run alone on its valid prefix; padding outputs are zero."""
    attrs = dict(mode=mode, num_layers=2, bidirectional=True, state_size=3, state_outputs=True,
                 use_sequence_length=True)
    inputs = _random_inputs(mode, 2, 2, 3, 5, 3, 2, seed=5)
    lengths = np.array([5, 2, 3], dtype='float64')
    op = make('RNN', **attrs)
    assert op.list_arguments()[-1] == 'sequence_length'
    outs = run_forward(op, inputs + [lengths])
    alone = make('RNN', **dict(attrs, use_sequence_length=False))
    for b, n in enumerate(lengths.astype(int)):
        one = [inputs[0][:n, b:b + 1], inputs[1]] + [s[:, b:b + 1] for s in inputs[2:]]
        ref = run_forward(alone, one)
        np.testing.assert_allclose(outs[0][:n, b], ref[0][:, 0], rtol=1e-10, atol=1e-12)
        assert not outs[0][n:, b].any()
        for got, want in zip(outs[1:], ref[1:]):
            np.testing.assert_allclose(got[:, b], want[:, 0], rtol=1e-10, atol=1e-12)
    check_grad('RNN', attrs, inputs + [lengths], wrt=[0, 1, 2] + ([3] if mode == 'lstm' else []))


def test_dropout_between_layers():
    attrs = dict(mode='gru', num_layers=3, state_size=3, p=0.4, state_outputs=True)
    inputs = _random_inputs('gru', 3, 1, 3, 3, 2, 2, seed=7)
    train = run_forward(make('RNN', **attrs), inputs, is_train=True)
    test = run_forward(make('RNN', **attrs), inputs, is_train=False)
    nodrop = run_forward(make('RNN', **dict(attrs, p=0.0)), inputs, is_train=True)
    np.testing.assert_allclose(test[0], nodrop[0])
    assert np.abs(train[0] - test[0]).max() > 1e-3
    check_grad('RNN', attrs, inputs, is_train=True)   # the seeded mask repeats in every forward


def test_param_size_and_shape_inference():
    op = make('RNN', mode='lstm', num_layers=2, bidirectional='True', state_size='5',
              state_outputs='1')
    assert op.list_arguments() == ['data', 'parameters', 'state', 'state_cell']
    assert op.list_outputs() == ['output', 'state_output', 'statecell_output']
    size = 2 * ((3 + 5 + 2) * 20) + 2 * ((10 + 5 + 2) * 20)
    ins, outs = op.infer_shape([(7, 4, 3), None, None, None], [None, None, None])
    assert ins == [(7, 4, 3), (size,), (4, 4, 5), (4, 4, 5)]
    assert outs == [(7, 4, 10), (4, 4, 5), (4, 4, 5)]
    # as MXNet 1.9.1: nothing is inferred without data (not from the state, the parameter
    # vector or the output); test_partial_shapes.py compares many cases with MXNet's record
    ins, outs = op.infer_shape([None, (size,), (4, 6, 5), None], [(9, 0, 0), None, None])
    assert ins == [None, (size,), (4, 6, 5), None]
    assert outs[0] == (9, 0, 0)
    ins, outs = op.infer_shape([(7, 0, 3), None, None, None], [None, None, None])
    assert ins[2] == (4, 0, 5) and outs[0] == (7, 0, 10)
    assert op.infer_shape([None] * 4, [None] * 3) == ([None] * 4, [None] * 3)
    proj = make('RNN', mode='lstm', num_layers=1, state_size=5, projection_size=2)
    ins, outs = proj.infer_shape([(7, 4, 3), None, None, None], [None])
    assert ins[1] == ((3 + 2 + 2) * 20 + 2 * 5,) and ins[2] == (1, 4, 2) and ins[3] == (1, 4, 5)
    assert outs == [(7, 4, 2)]
    gru = make('RNN', mode='gru', num_layers=1, state_size=2, use_sequence_length=True)
    assert gru.infer_shape([(3, 4, 1), None, None, None], [None])[0][3] == (4,)
    assert gru.infer_type(['float64', None, None, 'int32'], [None]) == (
        ['float64', 'float64', 'float64', 'int32'], ['float64'])


def test_shape_errors():
    op = make('RNN', mode='rnn_tanh', num_layers=1, state_size=2)
    with pytest.raises(MXNetError, match='parameters'):
        op.infer_shape([(3, 4, 5), (7,), None], [None])
    with pytest.raises(MXNetError, match='3-D'):
        op.infer_shape([(3, 4), None, None], [None])
    with pytest.raises(MXNetError, match='lstm'):
        make('RNN', mode='gru', num_layers=1, state_size=2, projection_size=1)
    with pytest.raises(MXNetError, match='together'):
        make('RNN', mode='lstm', num_layers=1, state_size=2, lstm_state_clip_min=0.1)
    with pytest.raises(MXNetError, match='mode'):
        make('RNN', mode='bogus', num_layers=1, state_size=2)
    with pytest.raises(MXNetError, match='Required'):
        make('RNN', mode='lstm', state_size=2)


def test_symbolic_executor_matches_oracle():
    """mx.sym.RNN bound by the executor reproduces MXNet's forward and gradients (lstm2bi)."""
    import mxmod as mx
    sym = mx.sym.RNN(mx.sym.var('data'), name='rnn', **_attrs('lstm2bi'))
    names = ['data', 'rnn_parameters', 'rnn_state', 'rnn_state_cell']
    assert sym.list_arguments() == names
    inputs = _inputs('lstm2bi', 'float32')
    exe = sym.simple_bind(mx.cpu(), data=inputs[0].shape)
    for name, value in zip(names, inputs):
        exe.arg_dict[name][:] = value
    outs = exe.forward(is_train=True)
    for i, got in enumerate(outs):
        np.testing.assert_allclose(got.asnumpy(), FIX['lstm2bi_out%d' % i], rtol=1e-5, atol=2e-6)
    exe.backward([mx.nd.array(FIX['lstm2bi_head%d' % i]) for i in range(3)])
    for i, name in enumerate(names):
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), FIX['lstm2bi_grad%d' % i],
                                   rtol=1e-4, atol=1e-5)
