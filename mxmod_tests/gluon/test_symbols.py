"""Symbols built by mx.gluon.rnn against MXNet 1.9.1 (frozen by gen_fixtures.py): JSON, argument
and output names, inferred shapes, collected Parameters, state names, reprs and inference outputs
of every symbol_cases construction; and the assertions of MXNet's test_rnn.py::test_lstm."""
import json
import os

import numpy as np
import pytest

import mxmod as mx

from . import symbol_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'symbols.json')) as _f:
    FROZEN = json.load(_f)
FORWARD = dict(np.load(os.path.join(HERE, 'fixtures', 'forward.npz')))
CASES = {case.__name__: case for case in symbol_cases.CASES}


def describe(built):
    """What gen_fixtures.describe records, computed by mxmod."""
    sym = built['sym']
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**built['shapes'])
    params = built['cell'].collect_params()
    return {'json': sym.tojson(), 'list_arguments': sym.list_arguments(),
            'list_outputs': sym.list_outputs(),
            'list_auxiliary_states': sym.list_auxiliary_states(),
            'arg_shapes': [list(s) for s in arg_shapes],
            'out_shapes': [list(s) for s in out_shapes],
            'aux_shapes': [list(s) for s in aux_shapes],
            'params': [[name, list(p.shape) if p.shape is not None else None, p.grad_req,
                        p.lr_mult, p.wd_mult] for name, p in params.items()],
            'params_prefix': params.prefix, 'params_repr': repr(params),
            'prefix': built['cell'].prefix,
            'states': [s.name for s in built['states']],
            'repr': repr(built['cell'])}


def test_every_case_is_frozen():
    assert sorted(CASES) == sorted(FROZEN)


@pytest.mark.parametrize('name', sorted(CASES))
def test_symbol_matches_mxnet(name):
    got = describe(symbol_cases.build(mx, CASES[name]))
    want = FROZEN[name]
    for key in ('list_arguments', 'list_outputs', 'list_auxiliary_states', 'arg_shapes',
                'out_shapes', 'aux_shapes', 'params', 'params_prefix', 'params_repr', 'prefix',
                'states', 'repr'):
        assert got[key] == want[key], key
    assert json.loads(got['json']) == json.loads(want['json'])
    assert got['json'] == want['json']


@pytest.mark.parametrize('name', symbol_cases.NUMERIC)
def test_forward_matches_mxnet(name):
    built = symbol_cases.build(mx, CASES[name])
    sym = built['sym']
    args = symbol_cases.arrays(sym, built['shapes'], built['fixed'])
    outs = sym.eval(mx.cpu(), **{k: mx.nd.array(v) for k, v in args.items()})
    assert len(outs) == len(sym.list_outputs())
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out.asnumpy(), FORWARD['%s/%d' % (name, i)],
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('activation', [None, 'relu', 'sigmoid', 'softrelu', 'tanh', 'softsign'])
def test_mxnet_test_lstm_assertions(activation):
    kwargs = {} if activation is None else {'activation': activation,
                                            'recurrent_activation': activation}
    cell = mx.gluon.rnn.LSTMCell(100, prefix='rnn_', **kwargs)
    outputs, _ = cell.unroll(3, [mx.sym.Variable('rnn_t%d_data' % i) for i in range(3)])
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.collect_params().keys()) == ['rnn_h2h_bias', 'rnn_h2h_weight',
                                                    'rnn_i2h_bias', 'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t0_out_output', 'rnn_t1_out_output',
                                      'rnn_t2_out_output']
    _, outs, _ = outputs.infer_shape(**{'rnn_t%d_data' % i: (10, 50) for i in range(3)})
    assert outs == [(10, 100), (10, 100), (10, 100)]
