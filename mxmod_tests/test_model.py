"""mx.model checkpoints against MXNet's golden checkpoints, and mxmod checkpoints read back
by the oracle (skipped when /tmp/mxnet-ref is absent)."""
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.conftest import GOLDEN, ORACLE_PYTHON, oracle_available

FIT_NAMES = ['fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias']


def _bytes(path):
    with open(path, 'rb') as handle:
        return handle.read()


@pytest.mark.parametrize('prefix,epoch', [('fit_mlp', 1), ('fit_mlp_mod', 2)])
def test_golden_checkpoints_load(prefix, epoch):
    """Both golden checkpoints were written after training: they hold fit_mlp.npz's final:*."""
    final = np.load(os.path.join(GOLDEN, 'fit_mlp.npz'))
    symbol, arg_params, aux_params = mx.model.load_checkpoint(os.path.join(GOLDEN, prefix), epoch)
    assert symbol.list_arguments() == ['data'] + FIT_NAMES + ['softmax_label']
    assert list(arg_params) == FIT_NAMES and aux_params == {}
    for name in FIT_NAMES:
        assert arg_params[name].context == mx.cpu(0)
        assert arg_params[name].dtype == np.float32
        np.testing.assert_array_equal(arg_params[name].asnumpy(), final['final:' + name])
    args_only, auxs_only = mx.model.load_params(os.path.join(GOLDEN, prefix), epoch)
    assert sorted(args_only) == sorted(FIT_NAMES) and auxs_only == {}
    # the checkpoint of epoch 1 is not the parameters after step 4 (epoch 1 of training)
    assert not np.array_equal(arg_params['fc1_weight'].asnumpy(), final['step04:fc1_weight'])


def test_resave_golden_checkpoint_is_byte_identical(tmp_path):
    symbol, arg_params, aux_params = mx.model.load_checkpoint(os.path.join(GOLDEN, 'fit_mlp'), 1)
    prefix = str(tmp_path / 'again')
    mx.model.save_checkpoint(prefix, 1, symbol, arg_params, aux_params)
    assert _bytes(prefix + '-0001.params') == _bytes(os.path.join(GOLDEN, 'fit_mlp-0001.params'))
    assert _bytes(prefix + '-symbol.json') == _bytes(os.path.join(GOLDEN, 'fit_mlp-symbol.json'))


def _convnet_params(ctx):
    npz = np.load(os.path.join(GOLDEN, 'convnet.npz'))
    args = {k[6:]: mx.nd.array(npz[k], ctx=ctx) for k in npz.files if k.startswith('param:')}
    auxs = {k[4:]: mx.nd.array(npz[k], ctx=ctx) for k in npz.files if k.startswith('aux:')}
    return args, auxs


def test_save_checkpoint_keys_and_cpu_copies(tmp_path):
    symbol = mx.sym.load(os.path.join(GOLDEN, 'convnet-symbol.json'))
    args, auxs = _convnet_params(mx.cpu(1))
    prefix = str(tmp_path / 'conv')
    mx.model.save_checkpoint(prefix, 12, symbol, args, auxs)
    assert os.path.exists(prefix + '-symbol.json')
    raw = mx.nd.load(prefix + '-0012.params')
    assert list(raw) == ['arg:' + k for k in args] + ['aux:' + k for k in auxs]
    # arrays are saved from cpu(0) copies: every record's context is (cpu, 0)
    again = str(tmp_path / 'again.params')
    mx.nd.save(again, {k: v.as_in_context(mx.cpu(0)) for k, v in raw.items()})
    assert _bytes(again) == _bytes(prefix + '-0012.params')
    loaded_sym, loaded_args, loaded_auxs = mx.model.load_checkpoint(prefix, 12)
    assert loaded_sym.list_auxiliary_states() == symbol.list_auxiliary_states()
    for src, dst in ((args, loaded_args), (auxs, loaded_auxs)):
        assert sorted(src) == sorted(dst)
        for name in src:
            np.testing.assert_array_equal(dst[name].asnumpy(), src[name].asnumpy())


def test_save_checkpoint_without_symbol(tmp_path):
    prefix = str(tmp_path / 'nosym')
    mx.model.save_checkpoint(prefix, 3, None, {'w': mx.nd.ones((2,))}, {})
    assert not os.path.exists(prefix + '-symbol.json')
    args, auxs = mx.model.load_params(prefix, 3)
    assert list(args) == ['w'] and auxs == {}


def test_load_params_errors(tmp_path):
    prefix = str(tmp_path / 'bad')
    mx.nd.save(prefix + '-0001.params', [mx.nd.ones((2,))])
    with pytest.raises(mx.MXNetError, match='unnamed arrays'):
        mx.model.load_params(prefix, 1)
    mx.nd.save(prefix + '-0002.params', {'weight': mx.nd.ones((2,))})
    with pytest.raises(ValueError, match="'weight' has neither"):
        mx.model.load_params(prefix, 2)
    mx.nd.save(prefix + '-0003.params', {})
    assert mx.model.load_params(prefix, 3) == ({}, {})
    with pytest.raises(mx.MXNetError, match='bad-0004.params'):
        mx.model.load_params(prefix, 4)


def test_batch_end_param():
    param = mx.model.BatchEndParam(epoch=1, nbatch=2, eval_metric='m', locals={'a': 1})
    assert param == (1, 2, 'm', {'a': 1})
    assert type(param).__name__ == 'BatchEndParams'
    assert param._fields == ('epoch', 'nbatch', 'eval_metric', 'locals')


_ORACLE_READER = textwrap.dedent('''
    import json, sys
    import mxnet as mx
    sym, args, auxs = mx.model.load_checkpoint(sys.argv[1], int(sys.argv[2]))
    print(json.dumps({'arguments': sym.list_arguments(), 'aux_states': sym.list_auxiliary_states(),
                      'args': {k: v.asnumpy().ravel().tolist() for k, v in args.items()},
                      'auxs': {k: v.asnumpy().ravel().tolist() for k, v in auxs.items()},
                      'dtypes': {k: str(v.dtype) for k, v in list(args.items()) + list(auxs.items())}}))
''')


@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle venv')
def test_oracle_loads_mxmod_checkpoint(tmp_path):
    symbol = mx.sym.load(os.path.join(GOLDEN, 'convnet-symbol.json'))
    args, auxs = _convnet_params(mx.cpu(0))
    args['fc1_bias'] = args['fc1_bias'].astype('float16')  # a second dtype in the same file
    prefix = str(tmp_path / 'conv')
    mx.model.save_checkpoint(prefix, 7, symbol, args, auxs)
    proc = subprocess.run([ORACLE_PYTHON, '-c', _ORACLE_READER, prefix, '7'],
                          capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen['arguments'] == symbol.list_arguments()
    assert seen['aux_states'] == symbol.list_auxiliary_states()
    for mine, theirs in ((args, seen['args']), (auxs, seen['auxs'])):
        assert sorted(mine) == sorted(theirs)
        for name, arr in mine.items():
            np.testing.assert_array_equal(np.array(theirs[name], arr.dtype), arr.asnumpy().ravel())
            assert seen['dtypes'][name] == "<class 'numpy.%s'>" % np.dtype(arr.dtype).name
