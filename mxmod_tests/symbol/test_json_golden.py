"""MXNet's symbol JSON: golden files load, infer MXNet's shapes and are rewritten byte for byte;
JSON written by mxmod loads in MXNet 1.9.1 (when the oracle venv is present)."""
import json
import os
import subprocess

import pytest

import mxmod as mx
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available

GOLDEN = os.path.join(os.path.dirname(__file__), '..', 'golden')
FILES = ['mlp-symbol.json', 'convnet-symbol.json', 'lstm-symbol.json', 'fit_mlp-symbol.json',
         'fit_mlp_mod-symbol.json', 'fit_mlp-symbol-tojson.json']


@pytest.mark.parametrize('fname', FILES)
def test_golden_json_rewritten_identically(fname):
    text = open(os.path.join(GOLDEN, fname)).read()
    assert mx.sym.load_json(text).tojson() == text


@pytest.mark.parametrize('name', ['mlp', 'convnet', 'lstm'])
def test_golden_json_infers_mxnet_shapes(name):
    meta = json.load(open(os.path.join(GOLDEN, name + '.meta.json')))
    sym = mx.sym.load(os.path.join(GOLDEN, name + '-symbol.json'))
    args, outs, aux = sym.infer_shape(**{k: tuple(v) for k, v in meta['bind_shapes'].items()})
    assert [list(s) for s in args] == [meta['arg_shapes'][n] for n in meta['list_arguments']]
    assert [list(s) for s in outs] == meta['out_shapes']


def test_legacy_param_attr_layout_loads():
    legacy = {'nodes': [{'op': 'null', 'name': 'data', 'inputs': []},
                        {'op': 'Activation', 'name': 'act', 'param': {'act_type': 'relu'},
                         'attr': {'__mood__': 'ok'}, 'inputs': [[0, 0]]}],
              'arg_nodes': [0], 'heads': [[1, 0]]}
    sym = mx.sym.load_json(json.dumps(legacy))
    assert sym.list_attr()['act_type'] == 'relu' and sym.attr('__mood__') == 'ok'


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='no MXNet 1.9.1 oracle venv')
def test_mxmod_json_loads_in_mxnet(tmp_path):
    data = mx.sym.var('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='conv')
    net = mx.sym.BatchNorm(net, fix_gamma=False, name='bn')
    net = mx.sym.Pooling(mx.sym.Activation(net, act_type='relu'), kernel=(2, 2), stride=(2, 2),
                         pool_type='max')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Flatten(net), num_hidden=5), name='sm')
    fname = str(tmp_path / 'net-symbol.json')
    net.save(fname)
    shapes = net.infer_shape(data=(2, 3, 8, 8))
    script = ('import mxnet as mx, json; s = mx.sym.load(%r); a, o, x = s.infer_shape(data=(2, 3, 8, 8));'
              'print(json.dumps([a, o, x, s.tojson()]))' % fname)
    out = subprocess.run([ORACLE_PYTHON, '-c', script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    args, outs, aux, text = json.loads(out.stdout.strip().splitlines()[-1])
    assert [tuple(s) for s in args] == shapes[0]
    assert [tuple(s) for s in outs] == shapes[1]
    assert [tuple(s) for s in aux] == shapes[2]
    assert text == net.tojson()
