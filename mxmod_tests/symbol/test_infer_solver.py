"""Shape and type inference (mxmod.symbol.infer.solve: one forward sweep, further sweeps only
for what is still underdetermined) against the fixed-point iteration it replaced
(fixed_point_reference.py: every operator forwards and backwards up to 8 times): the same
table for every entry, or the same exception with the same message, on the model-zoo networks,
the golden and mx.rnn symbols, unrolled LSTM buckets, graphs that need the backward sweep,
error cases and a few hundred random graphs with partial knowledge."""
import gzip
import json
import os

import pytest

import mxmod as mx
from mxmod.symbol import infer

from . import fixed_point_reference as reference
from . import random_graphs
from ..rnn import symbol_cases
from ..viz import zoo_models

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), 'golden')


def _outcome(fn, *args, **kwargs):
    try:
        return 'ok', fn(*args, **kwargs)
    except Exception as err:  # pylint: disable=broad-except
        return 'raised', type(err), str(err)


def assert_same_shapes(sym, known, heads=None):
    """New and reference shape inference agree: tables, or exception type and message."""
    extra = {} if heads is None else {'heads': heads}
    ref = _outcome(reference.infer_shapes, sym, dict(known), True, **extra)
    new = _outcome(infer.infer_shapes, sym, dict(known), True, **extra)
    assert new == ref
    return new


def assert_same_types(sym, known, heads=None):
    extra = {} if heads is None else {'heads': heads}
    ref = _outcome(reference.infer_types, sym, dict(known), **extra)
    new = _outcome(infer.infer_types, sym, dict(known), **extra)
    assert new == ref
    return new


def lstm_bucket(seq_len, layers=2, hidden=20, vocab=50):
    """The unrolled LSTM language model of example/rnn/bucketing/lstm_bucketing.py."""
    stack = mx.rnn.SequentialRNNCell()
    for i in range(layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=hidden, prefix='lstm_l%d_' % i))
    with mx.name.NameManager():
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=hidden, name='embed')
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        return mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')


def _zoo(name):
    with gzip.open(os.path.join(HERE, '..', 'viz', 'fixtures', name + '.json.gz'), 'rt') as src:
        record = json.load(src)
    return mx.sym.load_json(record['symbol']), tuple(record['data_shape'])


@pytest.mark.parametrize('name', sorted(zoo_models.MODELS))
def test_model_zoo(name):
    sym, shape = _zoo(name)
    status = assert_same_shapes(sym, {'data': shape})
    assert status[0] == 'ok' and all(infer._shape_complete(s) for s in status[1].values())
    assert_same_shapes(sym, {'data': (0,) + shape[1:]})
    assert_same_shapes(sym, {'data': shape[:1] + (0,) * (len(shape) - 1)})
    assert_same_shapes(sym, {})
    for dtype in ('float32', 'float16'):
        assert_same_types(sym, {'data': dtype})
    assert_same_types(sym, {})


@pytest.mark.parametrize('name', ['convnet', 'lstm', 'mlp'])
def test_golden_symbols(name):
    sym = mx.sym.load(os.path.join(GOLDEN, name + '-symbol.json'))
    with open(os.path.join(GOLDEN, name + '.meta.json')) as src:
        shapes = {k: tuple(v) for k, v in json.load(src)['bind_shapes'].items()}
    assert assert_same_shapes(sym, shapes)[0] == 'ok'
    for drop in shapes:
        assert_same_shapes(sym, {k: v for k, v in shapes.items() if k != drop})
    assert_same_types(sym, {k: 'float32' for k in shapes})


@pytest.mark.parametrize('case', symbol_cases.CASES, ids=lambda c: c.__name__)
def test_rnn_cells(case):
    sym, shapes = symbol_cases.build(mx, case)
    assert assert_same_shapes(sym, shapes)[0] == 'ok'
    assert_same_shapes(sym, {k: (0,) + tuple(v)[1:] for k, v in shapes.items()})
    assert_same_shapes(sym, {})
    assert_same_types(sym, {k: 'float32' for k in shapes})


@pytest.mark.parametrize('seq_len', [1, 3, 10, 25])
def test_lstm_buckets(seq_len):
    sym = lstm_bucket(seq_len)
    full = {'data': (8, seq_len), 'softmax_label': (8, seq_len)}
    assert assert_same_shapes(sym, full)[0] == 'ok'
    assert_same_shapes(sym, {'data': (8, seq_len)})
    assert_same_shapes(sym, {'data': (0, seq_len)})
    assert_same_shapes(sym, {'softmax_label': (8, seq_len)})
    assert_same_shapes(sym, {'lstm_l0_i2h_weight': (80, 20), 'data': (0, 0)})
    assert_same_types(sym, {'data': 'float32'})
    assert_same_types(sym, {'softmax_label': 'float16'})


def test_one_forward_sweep_then_only_the_underdetermined(monkeypatch):
    """An LSTM bucket whose input shapes are given: every operator is visited once, forwards,
    but for the begin states (zeros of unknown batch size, (0, H)) and the first h2h products
    reading them, which learn the batch size from later nodes and are visited once more in the
    backward sweep (the fixed-point iteration visited every operator four times)."""
    visits = []
    original = infer._visit
    monkeypatch.setattr(infer, '_visit', lambda record, *a: visits.append(record[0].name) or
                        original(record, *a))
    sym = lstm_bucket(10)
    table = infer.infer_shapes(sym, {'data': (8, 10), 'softmax_label': (8, 10)}, True)
    operators = [n for n in sym._topo() if n.op is not None]
    assert sorted(set(visits)) == sorted(n.name for n in operators)
    again = sorted(name for name in set(visits) if visits.count(name) > 1)
    assert again == ['lstm_l%d_%s' % (layer, what) for layer in (0, 1)
                     for what in ('begin_state_0', 'begin_state_1', 't0_h2h')]
    assert all(visits.count(name) == 2 for name in again)
    assert all(infer._shape_complete(table[(id(n), 0)]) for n in operators)


def _backward_graphs():
    """(symbol, known shapes) whose variables are only learnt from their consumers."""
    x, w, b = mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('b')
    chain = mx.sym.elemwise_add(mx.sym.relu(mx.sym.tanh(x)), w)
    yield chain, {'w': (3, 4)}
    yield chain, {'w': (3, 0), 'x': (0, 4)}
    yield mx.sym.broadcast_add(mx.sym.relu(x), b) * w, {'w': (2, 5), 'b': (1, 5)}
    conv = mx.sym.Convolution(mx.sym.relu(x), kernel=(3, 3), num_filter=4, name='c')
    yield mx.sym.elemwise_add(conv, w), {'w': (2, 4, 6, 6)}
    yield mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=3), name='s'), {'x': (5, 7)}
    yield mx.sym.Concat(mx.sym.relu(x), w, dim=1) + b, {'b': (2, 7), 'w': (2, 3)}
    yield mx.sym.Reshape(mx.sym.relu(x), shape=(0, -1)) + w, {'w': (4, 6), 'x': (4, 2, 0)}
    fc = mx.sym.FullyConnected(mx.sym.relu(x), weight=w, num_hidden=6, no_bias=True)
    yield fc, {'w': (6, 9)}
    yield mx.sym.dot(x, w) + b, {'b': (3, 5), 'x': (3, 0), 'w': (4, 0)}


@pytest.mark.parametrize('index', range(9))
def test_graphs_that_need_the_backward_sweep(index):
    sym, known = list(_backward_graphs())[index]
    assert_same_shapes(sym, known)
    assert_same_types(sym, {name: 'float32' for name in known})


def _error_graphs():
    """(symbol, known shapes) that inference must refuse with the reference's message."""
    x, w = mx.sym.var('x'), mx.sym.var('w')
    yield mx.sym.elemwise_add(x, w), {'x': (2, 3), 'w': (2, 4)}
    yield mx.sym.elemwise_add(mx.sym.relu(x), w), {'x': (2, 3), 'w': (3,)}
    yield mx.sym.FullyConnected(x, num_hidden=4, name='fc'), {'x': (2, 3), 'fc_weight': (4, 5)}
    yield mx.sym.Convolution(x, kernel=(3, 3), num_filter=2, name='c'), {'x': (2, 3)}
    yield mx.sym.Concat(x, w, dim=1), {'x': (2, 3), 'w': (3, 3)}
    yield mx.sym.Reshape(x, shape=(5, -1)), {'x': (2, 3)}
    yield mx.sym.elemwise_add(mx.sym.relu(x) + 1, w), {'w': (2, 2), 'x': (2, 3)}
    yield mx.sym.Variable('v', shape='(2, a)') + x, {}


@pytest.mark.parametrize('index', range(8))
def test_errors_raise_the_same_message(index):
    sym, known = list(_error_graphs())[index]
    assert assert_same_shapes(sym, known)[0] == 'raised'


def test_type_conflicts_raise_the_same_message():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    assert assert_same_types(x + w, {'x': 'float32', 'w': 'float16'})[0] == 'raised'
    emb = mx.sym.Embedding(x, input_dim=5, output_dim=3, name='e')
    assert assert_same_types(emb + w, {'x': 'int32', 'w': 'float16', 'e_weight': 'float32'}
                             )[0] == 'raised'


def test_subgraph_heads():
    """Known output shapes/types (a subgraph's heads) are merged before inference."""
    x, w = mx.sym.var('x'), mx.sym.var('w')
    sym = mx.sym.Group([mx.sym.relu(x), mx.sym.tanh(w)])
    assert_same_shapes(sym, {}, heads=[(2, 3), None])
    assert_same_shapes(sym, {'x': (2, 0)}, heads=[(0, 3), (4,)])
    assert assert_same_shapes(sym, {'x': (2, 3)}, heads=[(2, 4), None])[0] == 'raised'
    assert_same_types(sym, {}, heads=['float16', None])
    assert_same_types(sym, {'x': 'float32'}, heads=['float16', 'float64'])


def test_numpy_shape_semantics():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    sym = mx.sym.elemwise_add(mx.sym.relu(x), w)
    with mx.util.np_shape(True):
        assert_same_shapes(sym, {'x': (-1, 3), 'w': (2, -1)})
        assert_same_shapes(sym, {'x': (), 'w': ()})
    assert_same_shapes(sym, {'x': (), 'w': (2, 3)})


@pytest.mark.parametrize('seed', range(300))
def test_random_graphs(seed):
    sym, variables = random_graphs.random_graph(seed)
    assert_same_shapes(sym, random_graphs.partial_knowledge(seed, variables))
    assert_same_shapes(sym, {k: v for k, v in variables.items() if k != 'v0'})
    assert_same_types(sym, random_graphs.type_knowledge(seed, variables))


def test_random_graphs_cover_every_outcome(monkeypatch):
    """The random graphs exercise what they are for: complete answers, partial ones, answers
    that needed more than the forward sweep, and errors."""
    visits = []
    original = infer._visit
    monkeypatch.setattr(infer, '_visit', lambda record, *a: visits.append(record) or
                        original(record, *a))
    outcomes = set()
    for seed in range(300):
        sym, variables = random_graphs.random_graph(seed)
        known = random_graphs.partial_knowledge(seed, variables)
        del visits[:]
        status = _outcome(infer.infer_shapes, sym, known, True)
        if status[0] == 'raised':
            outcomes.add('error')
            continue
        outcomes.add('complete' if all(infer._shape_complete(s) for s in status[1].values())
                     else 'partial')
        if len(visits) > len({id(record) for record in visits}):
            outcomes.add('more sweeps')
    assert outcomes == {'error', 'complete', 'partial', 'more sweeps'}


def _reference_bind_types(sym, known):
    """What simple_bind inferred before: types from ``known``, then every variable still
    untyped given float32 and the whole graph inferred again."""
    types = reference.infer_types(sym, known)
    variables = [n for n in sym._topo() if n.op is None]
    full = {n.name: types.get((id(n), 0)) or 'float32' for n in variables}
    return reference.infer_types(sym, full)


def _bind_types(sym, known):
    from mxmod.executor.bind import _slot_info, default_float32
    from mxmod.executor.plan import Plan
    plan = Plan(sym)
    _, table, graph = _slot_info(plan, {}, known)
    table = default_float32(plan, graph, table)
    return {key: table[slot] for key, slot in plan.slot_of.items() if table[slot] is not None}


@pytest.mark.parametrize('seed', range(0, 300, 3))
def test_bind_types_default_float32_like_inferring_again(seed):
    sym, variables = random_graphs.random_graph(seed)
    known = random_graphs.type_knowledge(seed, variables)
    assert _outcome(_bind_types, sym, known) == _outcome(_reference_bind_types, sym, known)


@pytest.mark.parametrize('name', ['resnet-18', 'inception-v3', 'mobilenet'])
def test_bind_types_of_zoo_and_lstm(name):
    sym, _ = _zoo(name)
    for known in ({}, {'data': 'float16'}):
        assert _outcome(_bind_types, sym, known) == _outcome(_reference_bind_types, sym, known)
    lstm = lstm_bucket(4)
    for known in ({}, {'data': 'int32'}, {'softmax_label': 'float16'}):
        assert _outcome(_bind_types, lstm, known) == _outcome(_reference_bind_types, lstm, known)
