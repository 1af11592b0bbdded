"""Operator arguments are checked when a symbol or an imperative call is made, with MXNet
1.9.1's messages (observed with the oracle), while MXNet-written JSON still loads."""
import json

import pytest

import mxmod as mx


def test_unknown_argument_lists_the_possible_ones():
    data = mx.sym.var('data')
    with pytest.raises(mx.MXNetError) as err:
        mx.sym.FullyConnected(data, num_hiden=3)
    text = str(err.value)
    assert text.startswith("Cannot find argument 'num_hiden', Possible Arguments:\n----------------\n")
    assert 'num_hidden : int, required\nno_bias : boolean, optional, default=0\n' in text
    assert text.endswith(', in operator FullyConnected(name="", num_hiden="3")')
    with pytest.raises(mx.MXNetError, match="Cannot find argument 'strides'"):
        mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, strides=(2, 2))
    with pytest.raises(mx.MXNetError, match="Cannot find argument 'foo'"):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((3, 3)), mx.nd.ones(3), num_hidden=3,
                             foo=1)


def test_missing_and_malformed_values():
    data = mx.sym.var('data')
    with pytest.raises(mx.MXNetError, match=r'^Required parameter num_hidden of int is not '
                                            r'presented, in operator FullyConnected\(name=""\)$'):
        mx.sym.FullyConnected(data)
    with pytest.raises(mx.MXNetError, match="Invalid Parameter format for num_hidden expect int "
                                            "but value='abc'"):
        mx.sym.FullyConnected(data, num_hidden='abc')
    with pytest.raises(mx.MXNetError, match=r"Invalid Input: 'foo', valid values are: \{'relu'"):
        mx.sym.Activation(data, act_type='foo')


def test_hidden_attributes_and_mxnet_json_still_accepted():
    data = mx.sym.var('data')
    # (MXNet 1.9.1 refuses a non-hidden attribute such as attr={'myattr': 'x'} on an operator)
    with mx.name.NameManager():          # automatic names counted from 0 whatever ran before
        fc = mx.sym.FullyConnected(data, num_hidden=3, attr={'__lr_mult__': '2'},
                                   __init__='["zero", {}]')
    graph = json.loads(fc.tojson())
    graph['nodes'][-1]['attrs']['__profiler_scope__'] = 'fc:'
    back = mx.sym.load_json(json.dumps(graph))
    assert back.list_arguments() == ['data', 'fullyconnected0_weight', 'fullyconnected0_bias']
    assert back.attr('num_hidden') == '3'
