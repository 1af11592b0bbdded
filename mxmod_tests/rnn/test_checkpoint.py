"""save_rnn_checkpoint / load_rnn_checkpoint / do_rnn_checkpoint: weights unpacked per gate in the
file, packed again on load; an MXNet-side round trip when the oracle is installed."""
import os
import subprocess

import numpy as np
import pytest

import mxmod as mx

from ..conftest import ORACLE_PYTHON, oracle_available


def model():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(3, prefix='a_'))
    stack.add(mx.rnn.FusedRNNCell(2, mode='gru', prefix='f_'))
    out, _ = stack.unroll(2, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 1, 4))[0]))
    rs = np.random.RandomState(0)
    args = {k: mx.nd.array(rs.normal(size=s)) for k, s in shapes.items() if k != 'data'}
    return stack, out, args


def test_save_unpacks_and_load_packs(tmp_path):
    stack, sym, args = model()
    prefix = str(tmp_path / 'lm')
    mx.rnn.save_rnn_checkpoint(stack, prefix, 3, sym, args, {})
    saved = mx.nd.load(prefix + '-0003.params')
    assert 'arg:a_i2h_f_weight' in saved and 'arg:f_l0_h2h_z_bias' in saved
    assert 'arg:a_i2h_weight' not in saved and 'arg:f_parameters' not in saved
    np.testing.assert_array_equal(saved['arg:a_h2h_c_bias'].asnumpy(),
                                  args['a_h2h_bias'].asnumpy()[6:9])
    loaded_sym, arg, aux = mx.rnn.load_rnn_checkpoint(stack, prefix, 3)
    assert loaded_sym.tojson() == sym.tojson() and aux == {}
    assert sorted(arg) == sorted(args)
    for name, val in args.items():
        np.testing.assert_array_equal(arg[name].asnumpy(), val.asnumpy())


def test_do_rnn_checkpoint_period(tmp_path):
    cell = mx.rnn.GRUCell(2, prefix='g_')
    out, _ = cell.unroll(1, [mx.sym.Variable('x')])
    args = {'g_i2h_weight': mx.nd.ones((6, 3)), 'g_i2h_bias': mx.nd.zeros(6),
            'g_h2h_weight': mx.nd.ones((6, 2)), 'g_h2h_bias': mx.nd.zeros(6)}
    callback = mx.rnn.do_rnn_checkpoint([cell], str(tmp_path / 'm'), period=2)
    for epoch in range(4):
        callback(epoch, out[0], args, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'm-0002.manifest.json', 'm-0002.params', 'm-0004.manifest.json', 'm-0004.params',
        'm-symbol.json']
    assert 'arg:g_i2h_r_weight' in mx.nd.load(str(tmp_path / 'm-0002.params'))


ORACLE_SCRIPT = """
import sys, numpy as np, mxnet as mx
stack = mx.rnn.SequentialRNNCell()
stack.add(mx.rnn.LSTMCell(3, prefix='a_'))
stack.add(mx.rnn.FusedRNNCell(2, mode='gru', prefix='f_'))
sym, arg, aux = mx.rnn.load_rnn_checkpoint(stack, sys.argv[1], 3)
for k in sorted(arg):
    print(k, ' '.join('%.6g' % v for v in arg[k].asnumpy().ravel()))
"""


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='MXNet oracle not installed')
def test_mxnet_loads_the_rnn_checkpoint(tmp_path):
    stack, sym, args = model()
    prefix = str(tmp_path / 'lm')
    mx.rnn.save_rnn_checkpoint(stack, prefix, 3, sym, args, {})
    out = subprocess.run([ORACLE_PYTHON, '-c', ORACLE_SCRIPT, prefix], capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONWARNINGS='ignore'))
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    assert [l.split()[0] for l in lines] == sorted(args)
    for line in lines:
        name, *vals = line.split()
        np.testing.assert_allclose(np.array(vals, dtype=float), args[name].asnumpy().ravel(),
                                   rtol=1e-5)
