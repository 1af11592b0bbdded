"""Symbols built by mx.rnn against MXNet: the golden LSTM network (JSON and numbers) and the
frozen tojson/listings/inferred shapes of many cell constructions (symbol_cases.py)."""
import json
import os
import warnings

import numpy as np
import pytest

import mxmod as mx

from . import symbol_cases
from ..conftest import GOLDEN

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'symbols.json')) as _f:
    FROZEN = json.load(_f)


def golden_lstm_sym(seq_len=5, vocab=7, embed=4, hidden=6):
    """The network of reference/gen_golden.py ``lstm_sym``."""
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    emb = mx.sym.Embedding(data, input_dim=vocab, output_dim=embed, name='embed')
    cell = mx.rnn.LSTMCell(num_hidden=hidden, prefix='lstm_')
    outputs, _ = cell.unroll(seq_len, inputs=emb, layout='NTC', merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, hidden), name='reshape_out')
    pred = mx.sym.FullyConnected(pred, num_hidden=vocab, name='pred')
    lab = mx.sym.Reshape(label, shape=(-1,), name='reshape_label')
    return mx.sym.SoftmaxOutput(pred, label=lab, name='softmax')


def build_golden():
    with mx.name.NameManager():
        return golden_lstm_sym()


def read_golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return f.read()


def without_zeros_dtype(doc):
    """Drop the dtype attribute of ``_zeros`` nodes (see test_golden_json_exact)."""
    doc = json.loads(doc) if isinstance(doc, str) else doc
    for node in doc['nodes']:
        if node['op'] == '_zeros':
            node.get('attrs', {}).pop('dtype', None)
    return doc


def test_golden_json_exact():
    assert build_golden().tojson() == read_golden('lstm-symbol.json')


def test_golden_numbers():
    """Forward (inference and training) and gradients of the golden LSTM model."""
    data = np.load(os.path.join(GOLDEN, 'lstm.npz'))
    meta = json.loads(read_golden('lstm.meta.json'))
    sym = build_golden()
    assert sym.list_arguments() == meta['list_arguments']
    args = {k: mx.nd.array(data['input:' + k]) for k in ('data', 'softmax_label')}
    args.update({k[6:]: mx.nd.array(data[k]) for k in data.files if k.startswith('param:')})
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items() if meta['grad_req'][k] == 'write'}
    exe = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=meta['grad_req'])
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), data['output_infer:0'],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), data['output:0'],
                               rtol=1e-5, atol=1e-6)
    exe.backward()
    for name, grad in grads.items():
        np.testing.assert_allclose(grad.asnumpy(), data['grad:' + name], rtol=1e-4, atol=1e-5,
                                   err_msg=name)


@pytest.mark.parametrize('case', symbol_cases.CASES, ids=lambda c: c.__name__)
def test_construction_matches_mxnet(case):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        sym, shapes = symbol_cases.build(mx, case)
    want = FROZEN[case.__name__]
    assert sym.list_arguments() == want['list_arguments']
    assert sym.list_outputs() == want['list_outputs']
    assert sym.list_auxiliary_states() == want['list_auxiliary_states']
    assert without_zeros_dtype(sym.tojson()) == without_zeros_dtype(want['json'])
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    assert [list(s) for s in arg_shapes] == want['arg_shapes']
    assert [list(s) for s in out_shapes] == want['out_shapes']
    assert [list(s) for s in aux_shapes] == want['aux_shapes']


def test_params_and_names():
    cell = mx.rnn.GRUCell(4, prefix='g_')
    assert list(cell.params._params) == ['g_i2h_weight', 'g_i2h_bias', 'g_h2h_weight',
                                         'g_h2h_bias']
    assert list(mx.rnn.LSTMCell(4, prefix='l_').params._params) == [
        'l_i2h_weight', 'l_h2h_weight', 'l_i2h_bias', 'l_h2h_bias']
    shared = mx.rnn.RNNParams('s_')
    a = mx.rnn.RNNCell(3, prefix='a_', params=shared)
    b = mx.rnn.RNNCell(3, prefix='b_', params=shared)
    assert a.params.get('i2h_weight') is b.params.get('i2h_weight')
    out_a, _ = a.unroll(1, [mx.sym.Variable('x')])
    out_b, _ = b.unroll(1, [mx.sym.Variable('x')])
    shared_args = ['x', 's_i2h_weight', 's_i2h_bias', 's_h2h_weight', 's_h2h_bias']
    assert out_a[0].list_arguments() == out_b[0].list_arguments() == shared_args
    assert out_a[0].name == 'a_t0_out' and out_b[0].name == 'b_t0_out'


def test_misuse_raises():
    base = mx.rnn.GRUCell(3, prefix='m_')
    wrapped = mx.rnn.ZoneoutCell(base, zoneout_states=0.1)
    with pytest.raises(mx.MXNetError, match='modifier cell'):
        base.begin_state()
    assert [s.name for s in wrapped.begin_state()] == ['m_begin_state_0']
    with pytest.raises(mx.MXNetError, match='unfuse'):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(3))
    bi = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2, prefix='x_'), mx.rnn.GRUCell(2, prefix='y_'))
    with pytest.raises(mx.MXNetError, match='cannot be stepped'):
        bi(mx.sym.Variable('d'), bi.begin_state())
    with pytest.raises(mx.MXNetError, match='cannot be stepped'):
        mx.rnn.FusedRNNCell(3)(mx.sym.Variable('d'), [])
    with pytest.raises(ValueError, match='length is 3 but 2'):
        mx.rnn.RNNCell(2).unroll(3, [mx.sym.Variable('a'), mx.sym.Variable('b')])
    with pytest.raises(ValueError, match='mode must be one of'):
        mx.rnn.FusedRNNCell(3, mode='lstmx')
    with pytest.raises(ValueError, match='odd'):
        mx.rnn.ConvRNNCell((1, 2, 4, 4), 2, h2h_kernel=(2, 3))
    with pytest.raises(mx.MXNetError, match='not both'):
        mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams('p_')).add(mx.rnn.RNNCell(2))
