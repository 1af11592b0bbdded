"""Block, HybridBlock and Parameter behaviour line by line against MXNet 1.9.1's transcript
(block_transcript.py): Parameter contexts, deferred initialization, casting, Constant,
ParameterDict, prefixes and name scopes, collect_params selection, summary, reprs, hooks,
errors, symbolic calls, hybridization, grad_req 'add', BatchNorm statistics."""
import json
import os

import pytest

import mxmod as mx

from . import block_transcript

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'gluon_meta.json')) as _f:
    EXPECTED = json.load(_f)['transcript']


def _same(mine, theirs):
    mine = mine.replace('mxmod', 'mxnet')
    if mine == theirs:
        return True
    # errors: same type, and MXNet's message begins ours (mxmod may add the argument's name)
    if ' -> ' in theirs and ': ' in theirs.split(' -> ', 1)[1]:
        head, message = theirs.split(': ', 1)
        return mine.startswith(head + ': ' + message.rstrip('.'))
    return False


def test_transcript_matches_mxnet():
    mine = block_transcript.transcript(mx)
    assert len(mine) == len(EXPECTED)
    for got, want in zip(mine, EXPECTED):
        assert _same(got, want), '\nmxmod: %s\nmxnet: %s' % (got, want)


def test_hybridized_block_runs_one_cached_graph():
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, in_units=2), mx.gluon.nn.Dense(1))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.ones((4, 2))
    net(x)
    inputs, graph = net._cached_graph  # pylint: disable=protected-access
    assert [v.name for v in inputs] == ['data']
    assert graph.list_arguments() == ['data', 'hybridsequential0_dense0_weight',
                                      'hybridsequential0_dense0_bias',
                                      'hybridsequential0_dense1_weight',
                                      'hybridsequential0_dense1_bias']
    cached = net._cached_op  # pylint: disable=protected-access
    assert ('static_alloc', 'True') in cached._flags  # pylint: disable=protected-access
    net(mx.nd.ones((5, 2)))                            # a new batch size reuses the graph
    assert net._cached_op is cached  # pylint: disable=protected-access
    net.hybridize(active=False)
    assert net._cached_op is None  # pylint: disable=protected-access
    with pytest.raises(ValueError, match='subgraph backends'):
        net.hybridize(backend='MKLDNN')


def test_op_hook_sees_every_operator():
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential(prefix='dense_')
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(2), mx.gluon.nn.Activation('relu'))
    net.initialize()
    net.hybridize()
    names = []
    net.register_op_hook(lambda name, op, arr: names.append((name, op)))
    net(mx.nd.ones((2, 3)))
    assert names == [('dense_dense0_fwd_output', 'FullyConnected'),
                     ('dense_relu0_fwd_output', 'Activation')]
    # with monitor_all, inputs as MXNet names them (Activation has no input names: input0)
    names[:] = []
    net.register_op_hook(lambda name, op, arr: names.append(name), monitor_all=True)
    net(mx.nd.ones((2, 3)))
    assert names == ['dense_dense0_fwd_data', 'dense_dense0_fwd_weight',
                     'dense_dense0_fwd_bias', 'dense_dense0_fwd_output',
                     'dense_relu0_fwd_input0', 'dense_relu0_fwd_output']
