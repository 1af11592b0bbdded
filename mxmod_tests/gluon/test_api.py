"""mx.gluon's scope and the behaviour of its Parameter, ParameterDict and cell protocol: the
out-of-scope errors, symbolic-only errors for recurrent cells called on NDArrays, prefixes and
name scopes as in Gluon 1.9.1, parameter sharing and its checks, and the modifier-cell rules."""
import pytest

import mxmod as mx
from mxmod.base import MXNetError


@pytest.mark.parametrize('attr', ['data'])
def test_rest_of_gluon_is_out_of_scope(attr):
    with pytest.raises(MXNetError, match=r'mx\.gluon\.%s is not available.*HybridBlock.*'
                       r'Trainer.*recurrent cells' % attr):
        getattr(mx.gluon, attr)


def test_out_of_scope_imports_and_layers():
    from mxmod.gluon import nn, loss, Trainer, HybridBlock  # noqa: F401  pylint: disable=unused-import
    with pytest.raises(MXNetError, match='mx.gluon.data is not available'):
        from mxmod.gluon import data  # noqa: F401  pylint: disable=unused-import
    with pytest.raises(MXNetError, match=r'mx\.gluon\.rnn\.LSTM is not available'):
        mx.gluon.rnn.LSTM(10)
    with pytest.raises(MXNetError, match=r'mx\.npx\.foo is not available.*of mx\.npx it '
                       r'implements only the NumPy-semantics switches'):
        mx.npx.foo  # pylint: disable=pointless-statement
    assert mx.contrib.nd.SparseEmbedding is not None
    with pytest.raises(AttributeError, match="no attribute 'foo'"):
        mx.contrib.foo  # pylint: disable=pointless-statement
    assert not hasattr(mx.gluon, '__wrapped__')
    assert mx.gluon.rnn.LSTMCell is mx.gluon.rnn.rnn_cell.LSTMCell


def test_ndarray_use_raises_symbolic_only():
    cell = mx.gluon.rnn.LSTMCell(4, prefix='n_')
    x = mx.nd.ones((2, 3))
    states = [mx.nd.zeros((2, 4)), mx.nd.zeros((2, 4))]
    # one step on NDArrays is computed (a HybridBlock's forward), once initialized
    with pytest.raises(RuntimeError, match="Parameter 'n_i2h_weight' has not been initialized"):
        cell(x, states)
    with pytest.raises(MXNetError, match='symbolic use only'):
        cell.unroll(2, mx.nd.ones((2, 2, 3)))
    with pytest.raises(MXNetError, match='symbolic use only'):
        cell.unroll(2, [x, x])
    with pytest.raises(MXNetError, match='symbolic use only'):
        cell.begin_state(batch_size=2, func=mx.nd.zeros)
    # the cells' Parameters are Gluon Parameters: uninitialized until initialize()
    for call in (lambda p: p.data(), lambda p: p.grad()):
        with pytest.raises(RuntimeError, match="Parameter 'n_i2h_weight' has not been "
                           "initialized"):
            call(cell.i2h_weight)
    with pytest.raises(ValueError, match='expects Symbol inputs'):
        cell(3.0, [])


def test_prefixes_follow_gluon():
    with mx.name.NameManager():
        first, second = mx.gluon.rnn.LSTMCell(2), mx.gluon.rnn.LSTMCell(2)
        stack = mx.gluon.rnn.SequentialRNNCell()
        with stack.name_scope():
            stack.add(mx.gluon.rnn.GRUCell(2))
            stack.add(mx.gluon.rnn.GRUCell(2, prefix='top_'))
        residual = mx.gluon.rnn.ResidualCell(mx.gluon.rnn.RNNCell(2, prefix='r_'))
    assert (first.prefix, second.prefix, first.name) == ('lstm0_', 'lstm1_', 'lstm0')
    assert [c.prefix for c in (stack, stack[0], stack[1])] == \
        ['sequentialrnncell0_', 'sequentialrnncell0_gru0_', 'sequentialrnncell0_top_']
    assert len(stack) == 2
    assert list(stack.collect_params().keys())[:2] == ['sequentialrnncell0_gru0_i2h_weight',
                                                       'sequentialrnncell0_gru0_h2h_weight']
    assert residual.prefix == 'r_residualcell'
    assert list(residual.collect_params().keys()) == ['r_i2h_weight', 'r_h2h_weight',
                                                      'r_i2h_bias', 'r_h2h_bias']
    assert list(stack.collect_params('.*bias').keys()) == [
        'sequentialrnncell0_gru0_i2h_bias', 'sequentialrnncell0_gru0_h2h_bias',
        'sequentialrnncell0_top_i2h_bias', 'sequentialrnncell0_top_h2h_bias']


def test_parameter_var_and_attributes():
    param = mx.gluon.Parameter('w', shape=3, lr_mult=2.0, wd_mult=0.0, init='ones')
    assert param.shape == (3,) and param.grad_req == 'write'
    var = param.var()
    assert var is param.var() and var.name == 'w'
    # as MXNet 1.9.1 lists them (the multipliers also without underscores)
    assert var.list_attr() == {'__shape__': '(3,)', '__dtype__': '0', '__lr_mult__': '2.0',
                               'lr_mult': '2.0', '__wd_mult__': '0.0', 'wd_mult': '0.0',
                               '__init__': 'ones', '__storage_type__': '0'}
    assert mx.gluon.Parameter('f', differentiable=False).grad_req == 'null'
    param.shape = (3,)
    # MXNet asserts these: AssertionError (mxmod's error is also an MXNetError)
    with pytest.raises(AssertionError, match=r"incompatible with given shape \(3,\) for "
                       "Parameter 'w'"):
        param.shape = (4,)
    with pytest.raises(AssertionError, match='grad_req'):
        param.grad_req = 'sometimes'
    with pytest.raises(AssertionError, match='stype'):
        mx.gluon.Parameter('s', stype='dense')


def test_parameter_dict_get_shares_and_checks():
    params = mx.gluon.ParameterDict('p_')
    weight = params.get('weight', shape=(4, 0))
    assert params.get('weight', shape=(4, 5)) is weight and weight.shape == (4, 5)
    assert params.get('weight', dtype='float32') is weight
    with pytest.raises(MXNetError, match="Parameter 'p_weight'.*shape"):
        params.get('weight', shape=(3, 5))
    child = mx.gluon.ParameterDict('p_', shared=params)
    assert child.get('weight') is weight and list(child.keys()) == ['p_weight']
    other = mx.gluon.ParameterDict('q_')
    other.get('weight')
    with pytest.raises(AssertionError, match="different Parameters with the same name "
                       "'p_weight'"):
        params.update({'p_weight': other['q_weight']})
    cell = mx.gluon.rnn.GRUCell(2, prefix='a_', h2h_bias_initializer='ones')
    with pytest.raises(MXNetError, match="Parameter 'a_h2h_bias'.*init"):
        mx.gluon.rnn.GRUCell(2, prefix='b_', params=cell.collect_params())
    shared = mx.gluon.rnn.GRUCell(2, prefix='b_', params=cell.collect_params(),
                                  h2h_bias_initializer='ones')
    assert list(shared.collect_params().keys()) == list(cell.collect_params().keys())


def test_modifier_rules_and_bidirectional_stepping():
    base = mx.gluon.rnn.LSTMCell(2, prefix='m_')
    zoneout = mx.gluon.rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    with pytest.raises(ValueError, match='wrapped by a modifier cell'):
        base.begin_state()
    assert [s.name for s in zoneout.begin_state()] == ['m_begin_state_0', 'm_begin_state_1']
    with pytest.raises(MXNetError, match='already modified'):
        mx.gluon.rnn.ResidualCell(base)
    bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.RNNCell(2, prefix='l_'),
                                        mx.gluon.rnn.RNNCell(2, prefix='r_'))
    with pytest.raises(MXNetError, match='cannot be stepped'):
        bi(mx.sym.var('x'), bi.begin_state())
    with pytest.raises(MXNetError, match='does not support zoneout'):
        mx.gluon.rnn.ZoneoutCell(bi)
    stack = mx.gluon.rnn.SequentialRNNCell()
    stack.add(bi)
    with pytest.raises(MXNetError, match='cannot be stepped'):
        stack(mx.sym.var('x'), stack.begin_state())


def test_unroll_argument_errors():
    cell = mx.gluon.rnn.RNNCell(2, prefix='e_')
    with pytest.raises(ValueError, match='length is 3 but 2 input Symbols'):
        cell.unroll(3, [mx.sym.var('a'), mx.sym.var('b')])
    with pytest.raises(ValueError, match='no longer supported'):
        cell.unroll(3, None)
    with pytest.raises(ValueError, match='group of 2 outputs'):
        cell.unroll(2, mx.sym.Group([mx.sym.var('a'), mx.sym.var('b')]))
    with pytest.raises(TypeError, match='rate must be a number'):
        mx.gluon.rnn.DropoutCell('half')


def test_reset_and_repeated_unroll_reuse_names_and_variables():
    cell = mx.gluon.rnn.GRUCell(2, prefix='rep_')
    first, _ = cell.unroll(2, [mx.sym.var('a'), mx.sym.var('b')])
    second, _ = cell.unroll(2, [mx.sym.var('c'), mx.sym.var('d')])
    assert [s.name for s in first] == [s.name for s in second] == ['rep_t0_out', 'rep_t1_out']
    joined = mx.sym.Group(first + second)
    assert joined.list_arguments().count('rep_i2h_weight') == 1
    assert repr(cell) == 'GRUCell(None -> 6)'
    cell.hybridize()
