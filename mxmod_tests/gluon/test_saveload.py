"""Files Gluon writes, byte for byte as MXNet 1.9.1 writes them (so real MXNet reads them),
and files MXNet wrote loaded back: save_parameters / load_parameters, ParameterDict.save /
load (with strip_prefix and restore_prefix), export to -symbol.json / -NNNN.params run by
mx.mod.Module and SymbolBlock.imports, Block.save / Block.load, and (when the oracle venv is
there) real MXNet running what mxmod wrote."""
import json
import os
import subprocess

import numpy as np
import pytest

import mxmod as mx

from ..conftest import ORACLE_PYTHON, oracle_available
from . import gluon_cases

HERE = os.path.dirname(os.path.abspath(__file__))
SAVED = np.load(os.path.join(HERE, 'fixtures', 'gluon_saveload.npz'))
with open(os.path.join(HERE, 'fixtures', 'gluon_meta.json')) as _f:
    META = json.load(_f)
X = mx.nd.array(gluon_cases.SAVELOAD_INPUT)


def _bytes(path):
    with open(path, 'rb') as handle:
        return handle.read()


def _structure(symbol_json):
    graph = symbol_json if isinstance(symbol_json, dict) else json.loads(symbol_json)
    return ([(n['op'], n['name'], n.get('attrs', {}), n['inputs']) for n in graph['nodes']],
            graph['arg_nodes'], graph['heads'])


@pytest.mark.parametrize('key', ['save_parameters', 'paramdict_save', 'paramdict_save_stripped',
                                 'export_params'])
def test_written_files_are_mxnets_bytes(tmp_path, key):
    files = gluon_cases.write_files(mx, str(tmp_path))
    assert _bytes(files[key]) == SAVED[key].tobytes()


def test_exported_symbol_is_mxnets_graph(tmp_path):
    files = gluon_cases.write_files(mx, str(tmp_path))
    with open(files['export_symbol']) as handle:
        mine = json.load(handle)
    assert _structure(mine) == _structure(META['saveload_export_symbol'])


def _write(tmp_path, key):
    path = str(tmp_path / (key + '.params'))
    with open(path, 'wb') as handle:
        handle.write(SAVED[key].tobytes())
    return path


def _fresh_net():
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential(prefix='model_')
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, activation='relu'))
            net.add(mx.gluon.nn.BatchNorm())
            net.add(mx.gluon.nn.Dense(2))
    return net


def test_load_parameters_written_by_mxnet(tmp_path):
    net = _fresh_net()
    net.load_parameters(_write(tmp_path, 'save_parameters'))
    np.testing.assert_allclose(net(X).asnumpy(), SAVED['forward'], rtol=1e-5, atol=1e-6)
    # a file of names without the block's prefix (save_params) loads through it too
    other = _fresh_net()
    other.load_parameters(_write(tmp_path, 'paramdict_save_stripped'))
    np.testing.assert_allclose(other(X).asnumpy(), SAVED['forward'], rtol=1e-5, atol=1e-6)


def test_paramdict_load_with_restore_prefix(tmp_path):
    net = _fresh_net()
    net.collect_params().load(_write(tmp_path, 'paramdict_save_stripped'),
                              restore_prefix='model_')
    np.testing.assert_allclose(net(X).asnumpy(), SAVED['forward'], rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="restore_prefix is 'xx_'"):
        net.collect_params().load(_write(tmp_path, 'paramdict_save'), restore_prefix='xx_')


def test_load_errors(tmp_path):
    path = _write(tmp_path, 'save_parameters')
    with mx.name.NameManager():
        small = mx.gluon.nn.HybridSequential()
        with small.name_scope():
            small.add(mx.gluon.nn.Dense(3))
    with pytest.raises(ValueError, match="Parameter '1.gamma' loaded from file .* is not "
                       "present in ParameterDict"):
        small.load_parameters(path)
    small.load_parameters(path, ignore_extra=True)
    assert small[0].weight.shape == (3, 4)
    big = _fresh_net()
    with mx.name.NameManager():
        big.add(mx.gluon.nn.Dense(1))
    with pytest.raises(AssertionError, match="Parameter '3.weight' is missing in file"):
        big.load_parameters(path)
    big.load_parameters(path, allow_missing=True)
    wrong = mx.gluon.nn.Dense(5, in_units=4, prefix='model_dense0_')
    wrong.initialize()
    with pytest.raises(AssertionError, match='shape incompatible expected'):
        wrong.collect_params().load(_write(tmp_path, 'paramdict_save'), ignore_extra=True)


def test_export_runs_in_module_and_symbolblock(tmp_path):
    net = gluon_cases.saveload_net(mx)
    prefix = str(tmp_path / 'exported')
    net.export(prefix, epoch=7)
    sym, args, auxs = mx.model.load_checkpoint(prefix, 7)
    assert sorted(auxs) == ['model_batchnorm0_running_mean', 'model_batchnorm0_running_var']
    mod = mx.mod.Module(sym, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', X.shape)], for_training=False)
    mod.set_params(args, auxs)
    mod.forward(mx.io.DataBatch([X]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), SAVED['forward'], rtol=1e-5,
                               atol=1e-6)
    block = mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'],
                                         prefix + '-0007.params')
    np.testing.assert_allclose(block(X).asnumpy(), SAVED['forward'], rtol=1e-5, atol=1e-6)
    # a SymbolBlock is differentiable and hybridizable
    x = X.copy()
    x.attach_grad()
    with mx.autograd.record():
        out = block(x).sum()
    out.backward()
    grad = x.grad.asnumpy()
    block.hybridize()
    y = X.copy()
    y.attach_grad()
    with mx.autograd.record():
        out = block(y).sum()
    out.backward()
    np.testing.assert_allclose(y.grad.asnumpy(), grad, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match='call block.hybridize'):
        mx.gluon.nn.Dense(2).export(prefix)


def test_symbolblock_from_symbols_and_composition():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    block = mx.gluon.SymbolBlock(mx.sym.relu(fc), data)
    assert sorted(block.collect_params().keys()) == ['fc_bias', 'fc_weight']
    block.initialize(mx.init.One())
    np.testing.assert_allclose(block(mx.nd.ones((2, 4))).asnumpy(), np.full((2, 3), 5.0))
    composed = block(mx.sym.var('other'))
    assert composed.list_arguments() == ['other', 'fc_weight', 'fc_bias']


def test_block_save_and_load_model_json(tmp_path):
    net = gluon_cases.saveload_net(mx)
    prefix = str(tmp_path / 'whole')
    net.save(prefix)
    with open(prefix + '-model.json') as handle:
        model = json.load(handle)
    assert model['hybridsequential0']['hybridized'] is True
    assert model['hybridsequential0']['children'] == {'model_dense0': '0',
                                                      'model_batchnorm0': '1',
                                                      'model_dense1': '2'}
    other = _fresh_net()
    other.load(prefix)
    np.testing.assert_allclose(other(X).asnumpy(), SAVED['forward'], rtol=1e-5, atol=1e-6)


_ORACLE_READER = r'''
import sys, json
import numpy as np
import mxnet as mx
folder = sys.argv[1]
x = mx.nd.array(np.load(folder + '/x.npy'))
block = mx.gluon.SymbolBlock.imports(folder + '/exp-symbol.json', ['data'],
                                     folder + '/exp-0003.params')
with mx.name.NameManager():
    net = mx.gluon.nn.HybridSequential(prefix='model_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3, activation='relu'), mx.gluon.nn.BatchNorm(),
                mx.gluon.nn.Dense(2))
net.load_parameters(folder + '/net.params')
print(json.dumps([block(x).asnumpy().tolist(), net(x).asnumpy().tolist()]))
'''


@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle venv')
def test_real_mxnet_reads_what_mxmod_writes(tmp_path):
    net = gluon_cases.saveload_net(mx)
    for param in net.collect_params().values():      # values MXNet has not seen
        param.set_data(param.data() * 1.5 + 0.25)
    net.export(str(tmp_path / 'exp'), epoch=3)
    net.save_parameters(str(tmp_path / 'net.params'))
    np.save(str(tmp_path / 'x.npy'), gluon_cases.SAVELOAD_INPUT)
    proc = subprocess.run([ORACLE_PYTHON, '-c', _ORACLE_READER, str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=True)
    from_symbol, from_params = json.loads(proc.stdout.strip().splitlines()[-1])
    want = net(X).asnumpy()
    np.testing.assert_allclose(from_symbol, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(from_params, want, rtol=1e-5, atol=1e-6)
