"""FusedRNNCell: the flat parameter layout against MXNet (frozen unpack results), fused forward
against MXNet's fused operator output, fused against unfused cells, pack/unpack round trips."""
import os
import warnings

import numpy as np
import pytest

import mxmod as mx

from . import reference as ref

HERE = os.path.dirname(os.path.abspath(__file__))
FUSED = np.load(os.path.join(HERE, 'fixtures', 'fused.npz'))
# the configurations gen_fixtures.py froze (same order)
CONFIGS = [dict(mode='lstm', num_layers=2, bidirectional=True, num_hidden=3, num_input=4),
           dict(mode='gru', num_layers=2, bidirectional=False, num_hidden=3, num_input=2),
           dict(mode='rnn_tanh', num_layers=1, bidirectional=True, num_hidden=2, num_input=3),
           dict(mode='rnn_relu', num_layers=3, bidirectional=False, num_hidden=2, num_input=2)]


def fused_cell(k, **extra):
    cfg = CONFIGS[k]
    return mx.rnn.FusedRNNCell(cfg['num_hidden'], num_layers=cfg['num_layers'], mode=cfg['mode'],
                               bidirectional=cfg['bidirectional'], prefix='f%d_' % k, **extra)


def frozen_unpacked(k):
    tag = '%d:unpacked:' % k
    return {key[len(tag):]: FUSED[key] for key in FUSED.files if key.startswith(tag)}


@pytest.mark.parametrize('k', range(len(CONFIGS)))
def test_unpack_matches_mxnet_and_pack_round_trips(k):
    cell = fused_cell(k)
    vec = FUSED['%d:parameters' % k]
    unpacked = cell.unpack_weights({'f%d_parameters' % k: mx.nd.array(vec), 'other': mx.nd.ones(2)})
    want = frozen_unpacked(k)
    assert set(unpacked) == set(want) | {'other'}
    for name, arr in want.items():
        np.testing.assert_array_equal(unpacked[name].asnumpy(), arr)
    packed = cell.pack_weights(unpacked)
    assert set(packed) == {'f%d_parameters' % k, 'other'}
    np.testing.assert_array_equal(packed['f%d_parameters' % k].asnumpy(), vec)


@pytest.mark.parametrize('k', range(len(CONFIGS)))
def test_fused_forward_matches_mxnet(k):
    cell = fused_cell(k)
    out, states = cell.unroll(4, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    assert states == []
    got = out.eval(mx.cpu(), data=mx.nd.array(FUSED['%d:data' % k]),
                   **{'f%d_parameters' % k: mx.nd.array(FUSED['%d:parameters' % k])})
    np.testing.assert_allclose(got[0].asnumpy(), FUSED['%d:output' % k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('k', range(len(CONFIGS)))
def test_unfused_cells_match_fused(k):
    cell = fused_cell(k)
    stack = cell.unfuse()
    args = cell.unpack_weights({'f%d_parameters' % k: mx.nd.array(FUSED['%d:parameters' % k])})
    args = stack.pack_weights(args)
    outputs, _ = stack.unroll(4, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    assert sorted(outputs.list_arguments()) == sorted(['data'] + list(args))
    got = outputs.eval(mx.cpu(), data=mx.nd.array(FUSED['%d:data' % k]), **args)[0].asnumpy()
    np.testing.assert_allclose(got, FUSED['%d:output' % k], rtol=1e-5, atol=1e-6)


def test_fused_ntc_with_next_states_matches_numpy():
    rs = np.random.RandomState(0)
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='gru', get_next_state=True, prefix='g_')
    assert cell.state_info == [{'shape': (2, 0, 3), '__layout__': 'LNC'}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out, states = cell.unroll(5, mx.sym.Variable('data'), layout='NTC', merge_outputs=True)
    assert any('NTC layout detected' in str(w.message) for w in caught)
    assert len(states) == 1 and states[0].attr('__layout__') == 'LNC'
    layers = [[{n: rs.uniform(-0.6, 0.6, s) for n, s in
                (('i2h_weight', (9, width)), ('i2h_bias', (9,)), ('h2h_weight', (9, 3)),
                 ('h2h_bias', (9,)))}] for width in (4, 3)]
    unpacked = {}
    for layer, (params,) in enumerate(layers):
        for name, val in params.items():
            group, kind = name.split('_')
            for j, gate in enumerate(('_r', '_z', '_o')):
                unpacked['g_l%d_%s%s_%s' % (layer, group, gate, kind)] = mx.nd.array(
                    val[j * 3:(j + 1) * 3])
    args = cell.pack_weights(unpacked)
    x = rs.normal(0, 1, (2, 5, 4))
    got = mx.sym.Group([out] + states).eval(mx.cpu(), data=mx.nd.array(x), **args)
    xs = [x[:, t] for t in range(5)]
    mid, h0 = ref.unroll('gru', xs, layers[0][0])
    top, h1 = ref.unroll('gru', mid, layers[1][0])
    np.testing.assert_allclose(got[0].asnumpy(), np.stack(top, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1].asnumpy(), np.stack([h0[0], h1[0]]), rtol=1e-5, atol=1e-5)


def test_lstm_cell_unpack_pack_round_trip():
    cell = mx.rnn.LSTMCell(2, prefix='p_')
    rs = np.random.RandomState(1)
    args = {'p_i2h_weight': rs.normal(size=(8, 3)), 'p_i2h_bias': rs.normal(size=8),
            'p_h2h_weight': rs.normal(size=(8, 2)), 'p_h2h_bias': rs.normal(size=8)}
    nd_args = {k: mx.nd.array(v) for k, v in args.items()}
    unpacked = cell.unpack_weights(nd_args)
    assert sorted(unpacked) == sorted('p_%s_%s_%s' % (g, t, kind) for g in ('i2h', 'h2h')
                                      for t in 'ifco' for kind in ('weight', 'bias'))
    np.testing.assert_allclose(unpacked['p_i2h_f_weight'].asnumpy(), args['p_i2h_weight'][2:4],
                               rtol=1e-6)
    np.testing.assert_allclose(unpacked['p_h2h_o_bias'].asnumpy(), args['p_h2h_bias'][6:8],
                               rtol=1e-6)
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(args)
    for name, val in nd_args.items():
        np.testing.assert_array_equal(packed[name].asnumpy(), val.asnumpy())
    assert set(nd_args) == set(args)   # the input dict is left alone


def test_missing_parameter_is_named():
    cell = mx.rnn.GRUCell(2, prefix='m_')
    with pytest.raises(KeyError, match='m_i2h_weight'):
        cell.unpack_weights({'m_h2h_weight': mx.nd.ones((6, 2))})
    fused = mx.rnn.FusedRNNCell(2, mode='gru', prefix='q_')
    with pytest.raises(mx.MXNetError, match='parameter vector has 5 elements'):
        fused._slice_weights(mx.nd.zeros((5,)), 3, 2)


def test_fused_module_initialisation_sets_forget_bias():
    cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode='lstm', forget_bias=1.5, prefix='i_')
    out, _ = cell.unroll(2, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[('data', (2, 2, 4))])
    mod.init_params(mx.init.Xavier())
    args = cell.unpack_weights(mod.get_params()[0])
    for name, arr in args.items():
        if name.endswith('_f_bias'):
            np.testing.assert_array_equal(arr.asnumpy(), np.full(3, 1.5))
        elif name.endswith('_bias'):
            np.testing.assert_array_equal(arr.asnumpy(), np.zeros(3))
        else:
            assert np.abs(arr.asnumpy()).max() > 0
