"""What mx.sym.contrib.foreach, while_loop and cond, the operators and the JSON reader refuse,
with MXNet's exception types (its tests catch the AssertionErrors)."""
import json

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


def _vars(*names):
    return [mx.sym.var(n) for n in names]


def test_loop_body_misuse():
    data, state = _vars('data', 'state')
    with pytest.raises(AssertionError, match='the state arrays have to be used'):
        mx.sym.contrib.foreach(lambda x, s: (x * 2, [x]), data, [state])
    with pytest.raises(AssertionError, match='the data arrays have to be used'):
        mx.sym.contrib.foreach(lambda x, s: (s[0] * 2, [s[0] + 1]), data, [state])
    with pytest.raises(AssertionError, match='different format'):
        mx.sym.contrib.foreach(lambda x, s: (x + s[0], s[0]), data, [state])
    with pytest.raises(MXNetError, match='the state arrays have to be used'):
        mx.sym.contrib.foreach(lambda x, s: (x * 2, [x]), data, [state])
    with pytest.raises(AssertionError, match='must be .nested. list of Symbol'):
        mx.sym.contrib.foreach(lambda x, s: (x, s), data, 3)


def test_while_loop_and_cond_misuse():
    i, x = _vars('i', 'x')
    with pytest.raises(ValueError, match='max_iterations should be specified'):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([], [i + 1]), [i])
    with pytest.raises(ValueError, match="The 2-th loop_var doesn't involve"):
        mx.sym.contrib.while_loop(lambda i, x: i < 3, lambda i, x: ([], [i + 1, i * 2]),
                                  [i, x], max_iterations=3)
    with pytest.raises(ValueError, match='consistent during the loop'):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([], [i + 1, i]), [i],
                                  max_iterations=3)
    with pytest.raises(ValueError, match='Return of cond must be a Symbol'):
        mx.sym.contrib.while_loop(lambda i: True, lambda i: ([], [i + 1]), [i], max_iterations=3)
    with pytest.raises(ValueError, match='Number of outputs differs'):
        mx.sym.contrib.cond(i > 0, lambda: [i, x], lambda: i)


def test_condition_must_be_one_value():
    x = mx.sym.var('x')
    sym = mx.sym.contrib.cond(x > 0, lambda: x * 2, lambda: x)
    exe = sym.bind(mx.cpu(), {'x': mx.nd.ones((2,))})
    with pytest.raises(MXNetError, match=r'_cond: the condition must give one value, got an '
                       r'array of shape \(2,\)'):
        exe.forward()
        exe.outputs[0].asnumpy()


def test_branches_of_different_shapes_are_refused_at_bind():
    # MXNet 1.9.1 runs whichever branch is taken (it infers no shapes for _cond); mxmod infers
    # the outputs' shapes when binding, from both branches
    x = mx.sym.var('x')
    sym = mx.sym.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: mx.sym.sum(x))
    with pytest.raises(MXNetError, match='_cond'):
        sym.simple_bind(mx.cpu(), x=(2, 3))


def _foreach_json():
    data, state = _vars('data', 'state')
    out = mx.sym.contrib.foreach(lambda x, s: (x * 2, [s[0] + x]), data, [state])[0]
    return json.loads(out.tojson())


def test_json_reader_checks_subgraphs():
    doc = _foreach_json()
    node = [n for n in doc['nodes'] if n['op'] == '_foreach'][0]
    graph = node.pop('subgraphs')
    with pytest.raises(MXNetError, match='_foreach needs its 1 subgraph'):
        mx.sym.load_json(json.dumps(doc))
    node['subgraphs'] = graph * 2
    with pytest.raises(MXNetError, match='_foreach takes 1 subgraph.s., got 2'):
        mx.sym.load_json(json.dumps(doc))
    node['subgraphs'] = graph
    node['attrs']['num_args'] = '4'
    node['attrs']['remain_locs'] = '[2]'
    with pytest.raises(MXNetError, match='subgraph 0 has 2 inputs'):
        mx.sym.load_json(json.dumps(doc))
    doc = json.loads((mx.sym.var('a') * 2).tojson())
    doc['nodes'][1]['subgraphs'] = graph
    with pytest.raises(MXNetError, match='_mul_scalar takes no "subgraphs"'):
        mx.sym.load_json(json.dumps(doc))
    doc = _foreach_json()
    node = [n for n in doc['nodes'] if n['op'] == '_foreach'][0]
    node['subgraphs'][0]['nodes'][2]['inputs'] = [[7, 0, 0]]
    with pytest.raises(MXNetError, match='subgraph 0: node 2'):
        mx.sym.load_json(json.dumps(doc))


def test_operator_without_subgraphs():
    data, state = _vars('data', 'state')
    make = mx.sym._internal._foreach  # pylint: disable=protected-access
    sym = make(data, state, num_args=3, num_outputs=2, num_out_data=1, in_state_locs='[1]',
               in_data_locs='[0]', remain_locs='[]')
    with pytest.raises(MXNetError, match='_foreach has no subgraphs'):
        sym.infer_shape(data=(2, 3), state=(3,))


def test_subgraph_names_are_counted():
    from collections import defaultdict  # pylint: disable=import-outside-toplevel
    scope = mx.attribute.AttrScope
    saved = scope._subgraph_names  # pylint: disable=protected-access
    scope._subgraph_names = defaultdict(int)  # pylint: disable=protected-access
    try:
        x = mx.sym.var('x')
        for _ in range(2):
            mx.sym.contrib.cond(x > 0.5, lambda: x * 2, lambda: x * 3, name='my_cond')
        names = dict(scope._subgraph_names)  # pylint: disable=protected-access
    finally:
        scope._subgraph_names = saved  # pylint: disable=protected-access
    assert names == {'my_cond_pred': 2, 'my_cond_then': 2, 'my_cond_else': 2}
    np.testing.assert_equal(len(names), 3)
