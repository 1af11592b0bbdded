"""Several dozen wrong calls, as a new user makes them: each raises at the call that is wrong,
within a time limit, an error mxmod raised on purpose that names the parameter, input, file or
operator and what was expected (see harness.refusal). Where MXNet accepts a name (an initializer
given as 'xavier'), mxmod does the same."""
import json
import os
import pickle

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.hardening.common import mlp_sym, toy_data, trained_module, MXNET_CKPT
from mxmod_tests.hardening.harness import refusal

X, Y = toy_data(10)
NAN = float('nan')


def _iter(label=Y, **kwargs):
    return mx.io.NDArrayIter(X, label, batch_size=5, **kwargs)


def _fit(module=None, data=None, **kwargs):
    module = module or mx.mod.Module(mlp_sym())
    return lambda: module.fit(data or _iter(), num_epoch=1, **kwargs)


def _bound():
    mod = mx.mod.Module(mlp_sym())
    mod.bind(data_shapes=[('data', (5, 6))], label_shapes=[('softmax_label', (5,))])
    mod.init_params()
    return mod


def _json(mutate):
    doc = json.loads(mlp_sym().tojson())
    mutate(doc)
    return lambda: mx.sym.load_json(json.dumps(doc))


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _other_params():
    arg, aux = trained_module(hidden=5, steps=0).get_params()
    mod = _bound()
    return lambda: mod.set_params(arg, aux)


def _extra_params():
    mod = _bound()
    arg, aux = mod.get_params()
    # MXNet refuses extras only where set_params copies the given dicts directly
    # (allow_missing=True); init_params and set_params otherwise ignore them, as mxmod does
    return lambda: mod.set_params(dict(arg, zzz=mx.nd.ones(2)), aux, allow_missing=True,
                                  allow_extra=False)


def _evil_states(tmp):
    mod = trained_module(steps=0)
    fname = os.path.join(tmp, 'evil.states')
    with open(fname, 'wb') as handle:
        handle.write(b'cos\nsystem\n(S"touch %s"\ntR.' % os.path.join(tmp, 'pwned').encode())
    return lambda: mod.load_optimizer_states(fname)


def _states_missing(tmp):
    prefix = os.path.join(tmp, 'net')
    mx.model.save_checkpoint(prefix, 1, mlp_sym(), *trained_module(steps=0).get_params())
    return lambda: mx.mod.Module.load(prefix, 1, load_optimizer_states=True)


def _file(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, 'wb') as handle:
        handle.write(data)
    return path


def _no_gpu():
    from mxmod_tests.gpu_emulation import emulated_gpus   # pylint: disable=import-outside-toplevel

    def call():
        with emulated_gpus(0):
            mx.nd.ones((2,), ctx=mx.gpu(0))
    return call


def _broken_cuda():
    from mxmod_tests.gpu_emulation import emulated_gpus   # pylint: disable=import-outside-toplevel

    def call():
        with emulated_gpus(1) as cupy:
            def no_driver():
                raise cupy.cuda.runtime.CUDARuntimeError('cudaErrorInsufficientDriver: CUDA '
                                                         'driver version is insufficient')
            cupy.cuda.runtime.getDeviceCount = no_driver
            try:
                mx.nd.ones((2,), ctx=mx.gpu(0))
            finally:
                from mxmod_tests.gpu_emulation import devarray  # pylint: disable=import-outside-toplevel
                cupy.cuda.runtime.getDeviceCount = devarray.device_count
    return call


# id -> (factory(tmp) -> call, regexes the message must contain)
CASES = {
    'iter_batch_size_0': (lambda t: lambda: mx.io.NDArrayIter(X, Y, batch_size=0),
                          ['batch_size', '0']),
    'iter_batch_size_negative': (lambda t: lambda: mx.io.NDArrayIter(X, Y, batch_size=-3),
                                 ['batch_size']),
    'iter_batch_size_float': (lambda t: lambda: mx.io.NDArrayIter(X, Y, batch_size=2.5),
                              ['batch_size', '2.5']),
    'iter_label_length': (lambda t: lambda: mx.io.NDArrayIter(X, Y[:7], batch_size=2),
                          ['label', 'softmax_label', '7', '10']),
    'iter_data_length': (lambda t: lambda: mx.io.NDArrayIter([X, X[:4]], Y, batch_size=2),
                         ['_1_data', '4']),
    'iter_last_batch': (lambda t: lambda: mx.io.NDArrayIter(X, Y, last_batch_handle='bogus'),
                        ['last_batch_handle', 'bogus']),
    'kv_create_bogus': (lambda t: lambda: mx.kv.create('bogus'), ['bogus', 'local', 'device']),
    'kv_create_int': (lambda t: lambda: mx.kv.create(3), ['kvstore type', 'str']),
    'fit_kvstore_bogus': (lambda t: _fit(kvstore='bogus'), ['kvstore', 'bogus']),
    'lr_nan': (lambda t: lambda: mx.optimizer.create('sgd', learning_rate=NAN),
               ['learning_rate', 'nan']),
    'lr_negative': (lambda t: lambda: mx.optimizer.create('sgd', learning_rate=-0.1),
                    ['learning_rate', '>= 0']),
    'lr_string': (lambda t: lambda: mx.optimizer.create('sgd', learning_rate='0.1'),
                  ['learning_rate', "'0.1'"]),
    'fit_lr_string': (lambda t: _fit(optimizer_params={'learning_rate': '0.1'}),
                      ['learning_rate', 'number']),
    'fit_lr_nan': (lambda t: _fit(optimizer_params={'learning_rate': NAN}),
                   ['learning_rate', 'finite']),
    'adam_beta1_string': (lambda t: lambda: mx.optimizer.create('adam', beta1='0.9'),
                          ['beta1']),
    'momentum_inf': (lambda t: lambda: mx.optimizer.create('sgd', momentum=float('inf')),
                     ['momentum']),
    'optimizer_bogus': (lambda t: lambda: mx.optimizer.create('bogus'), ['bogus', 'sgd']),
    'set_learning_rate_inf': (lambda t: lambda: mx.optimizer.SGD().set_learning_rate(
        float('inf')), ['lr']),
    'sgd_wd_string': (lambda t: lambda: mx.optimizer.SGD(wd='x'), ['wd']),
    'set_params_extra': (lambda t: _extra_params(), ['zzz', 'allow_extra']),
    'set_params_other_network': (lambda t: _other_params(), ['fc1_weight', r'\(5, 6\)',
                                                              r'\(8, 6\)']),
    'fit_other_network_params': (lambda t: _fit(arg_params=trained_module(
        hidden=5, steps=0).get_params()[0]), ['fc1_weight']),
    'module_context_string': (lambda t: lambda: mx.mod.Module(mlp_sym(), context='cpu'),
                              ['context', "'cpu'"]),
    'module_context_list_string': (lambda t: lambda: mx.mod.Module(
        mlp_sym(), context=[mx.cpu(), 'gpu']), ['context']),
    'fit_without_labels': (lambda t: _fit(data=_iter(label=None)),
                           ['softmax_label', 'labels']),
    'fit_label_name_typo': (lambda t: _fit(data=_iter(label_name='labelz')),
                            ['softmax_label', 'labelz']),
    'fit_initializer_number': (lambda t: _fit(initializer=42), ['initializer', '42']),
    'init_params_unknown_initializer': (lambda t: lambda: _bound().init_params(
        initializer='nosuchinit', force_init=True), ['nosuchinit']),
    'duplicate_variables': (lambda t: lambda: mx.sym.var('a') + mx.sym.var('a'),
                            ["'a'", 'two different variables']),
    'duplicate_op_weights_bind': (lambda t: lambda: mx.sym.FullyConnected(
        mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'), num_hidden=2,
        name='fc').simple_bind(mx.cpu(), data=(2, 4)), ['fc_(weight|bias)']),
    'json_bad_head': (lambda t: _json(lambda d: _set(d, ['heads'], [[99, 0, 0]])),
                      ['head 0', '99']),
    'json_cycle': (lambda t: _json(lambda d: _set(d, ['nodes', 3, 'inputs', 0], [5, 0, 0])),
                   ['node 3', 'cycle']),
    'json_unknown_op': (lambda t: _json(lambda d: _set(d, ['nodes', 3, 'op'], 'NoSuchOp')),
                        ['NoSuchOp']),
    'json_unknown_argument': (lambda t: _json(lambda d: _set(d, ['nodes', 3, 'attrs', 'bogus'],
                                                             '1')),
                              ['Cannot find argument', 'bogus']),
    'json_bad_value': (lambda t: _json(lambda d: _set(d, ['nodes', 3, 'attrs', 'num_hidden'],
                                                      'abc')), ['num_hidden', 'abc']),
    'json_input_count': (lambda t: _json(lambda d: d['nodes'][3]['inputs'].pop()),
                         ['fc1', '2 inputs', 'takes 3']),
    'json_no_arg_nodes': (lambda t: _json(lambda d: d.pop('arg_nodes')), ['arg_nodes']),
    'json_not_utf8': (lambda t: lambda: mx.sym.load(_file(t, 'x-symbol.json', b'{"\xff"}')),
                      ['x-symbol.json', 'UTF-8']),
    'json_deep': (lambda t: lambda: mx.sym.load_json('[' * 100000 + ']' * 100000),
                  ['nested']),
    'save_missing_dir': (lambda t: lambda: mx.nd.save(os.path.join(t, 'no', 'x.params'),
                                                      [mx.nd.ones(1)]),
                         ['x.params', 'does not exist']),
    'checkpoint_missing_dir': (lambda t: lambda: trained_module(steps=0).save_checkpoint(
        os.path.join(t, 'no', 'net'), 1, save_optimizer_states=True), ['net', 'does not exist']),
    'load_missing_params': (lambda t: lambda: mx.nd.load(os.path.join(t, 'none.params')),
                            ['none.params']),
    'load_truncated_params': (lambda t: lambda: mx.nd.load(_file(
        t, 't.params', open(MXNET_CKPT + '-0001.params', 'rb').read()[:100])),
                              ['t.params', 'ends early']),
    'load_states_as_params': (lambda t: lambda: mx.nd.load(MXNET_CKPT + '-0001.states'),
                              ['mxnet_ckpt-0001.states', 'magic']),
    'load_missing_symbol': (lambda t: lambda: mx.sym.load(os.path.join(t, 'n-symbol.json')),
                            ['n-symbol.json']),
    'module_load_missing': (lambda t: lambda: mx.mod.Module.load(os.path.join(t, 'nope'), 3),
                            ['nope']),
    'module_load_missing_states': (lambda t: _states_missing(t), [r'net-0001\.states']),
    'load_states_other_network': (lambda t: lambda: trained_module(hidden=5, steps=0)
                                  .load_optimizer_states(MXNET_CKPT + '-0001.states'),
                                  ['mxnet_ckpt-0001.states']),
    'load_evil_states': (lambda t: _evil_states(t), ['evil.states', 'not allowed']),
    'gpu_without_devices': (lambda t: _no_gpu(), [r'mx\.gpu\(0\)', 'GPU']),
    'gpu_without_driver': (lambda t: _broken_cuda(), [r'mx\.gpu\(0\)', 'no usable', 'driver']),
    'fit_without_num_epoch': (lambda t: lambda: mx.mod.Module(mlp_sym()).fit(_iter()),
                              ['num_epoch']),
    'bind_wrong_data_name': (lambda t: lambda: mx.mod.Module(mlp_sym()).bind(
        data_shapes=[('x', (5, 6))]), ['data_names', 'x']),
    'forward_before_bind': (lambda t: lambda: mx.mod.Module(mlp_sym()).forward(
        mx.io.DataBatch([mx.nd.ones((5, 6))])), ['bind']),
    'update_before_init_optimizer': (lambda t: lambda: _bound().update(), ['init_optimizer']),
    'initializer_create_bogus': (lambda t: lambda: mx.init.create('bogus'), ['bogus']),
    'factor_scheduler_step_0': (lambda t: lambda: mx.lr_scheduler.FactorScheduler(step=0),
                                ['step']),
    'iter_without_data': (lambda t: lambda: mx.io.NDArrayIter(None, Y), ['data']),
    'forward_extra_data': (lambda t: lambda: _bound().forward(mx.io.DataBatch(
        [mx.nd.ones((5, 6)), mx.nd.ones((3,))], [mx.nd.zeros((5,))])), ['2 data arrays', 'data']),
    'forward_not_a_batch': (lambda t: lambda: _bound().forward([mx.nd.ones((5, 6))]),
                            ['DataBatch']),
    'module_symbol_none': (lambda t: lambda: mx.mod.Module(None), ['symbol', 'None']),
    'fit_num_epoch_string': (lambda t: lambda: mx.mod.Module(mlp_sym()).fit(
        _iter(), num_epoch='2'), ['num_epoch', "'2'"]),
    'fit_callback_not_callable': (lambda t: _fit(batch_end_callback=3),
                                  ['batch_end_callback', '3']),
    'fit_numpy_data': (lambda t: lambda: mx.mod.Module(mlp_sym()).fit(X, num_epoch=1),
                       ['train_data', 'DataIter']),
    'set_params_none': (lambda t: lambda: _bound().set_params(None, None), ['arg_params']),
    'optimizer_params_not_dict': (lambda t: lambda: _bound().init_optimizer(optimizer_params=3),
                                  ['optimizer_params']),
    'optimizer_unknown_parameter': (lambda t: lambda: _bound().init_optimizer(
        optimizer_params={'bogus': 1}), ['bogus', 'momentum']),
    'updater_shape_mismatch': (lambda t: lambda: mx.optimizer.get_updater(mx.optimizer.SGD())(
        0, mx.nd.ones((2,)), mx.nd.ones((3,))), [r'\(2,\)', r'\(3,\)']),
    'xavier_bad_type': (lambda t: lambda: mx.init.Xavier(rnd_type='bogus'), ['rnd_type']),
    'xavier_magnitude_string': (lambda t: lambda: mx.init.Xavier(magnitude='x'), ['magnitude']),
    'scheduler_factor_string': (lambda t: lambda: mx.lr_scheduler.FactorScheduler(
        step=2, factor='x'), ['factor']),
    'scheduler_base_lr_nan': (lambda t: lambda: mx.lr_scheduler.CosineScheduler(
        10, base_lr=NAN), ['base_lr']),
    'speedometer_frequent_0': (lambda t: lambda: mx.callback.Speedometer(5, 0), ['frequent']),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_wrong_call_is_refused_naming_what_is_wrong(tmp_path, case):
    factory, names = CASES[case]
    refusal(factory(str(tmp_path)), names)
    assert not os.path.exists(str(tmp_path / 'pwned'))


def test_initializer_names_work_as_in_mxnet():
    for initializer in ('xavier', 'uniform', mx.init.Xavier()):
        mod = mx.mod.Module(mlp_sym())
        mod.fit(_iter(), num_epoch=1, initializer=initializer)
        assert np.isfinite(mod.get_params()[0]['fc1_weight'].asnumpy()).all()
    mod = _bound()
    mod.init_params(initializer='["normal", {"sigma": 0.5}]', force_init=True)


def test_the_harness_catches_leaks_hangs_and_silence():
    """The contract can fail: a leaked IndexError, a silent return and a hang are caught."""
    with pytest.raises(AssertionError, match='leaked IndexError'):
        refusal(lambda: [][1], [])
    with pytest.raises(AssertionError, match='accepted silently'):
        refusal(lambda: None, [])
    with pytest.raises(AssertionError, match='hang'):
        refusal(lambda: __import__('time').sleep(5), [], limit=1)
    with pytest.raises(AssertionError, match='not in the message'):
        refusal(lambda: mx.kv.create('bogus'), ['nothing like this'])


def test_numpy_batches_are_converted():
    mod = _bound()
    mod.forward(mx.io.DataBatch([np.ones((5, 6))], [np.zeros(5)]), is_train=False)
    assert mod.get_outputs()[0].shape == (5, 3)


def test_evil_pickle_as_states_with_pickle_module_would_run():
    """The reference: the standard unpickler runs what mxmod's refuses (so the test above means
    something)."""
    assert pickle.loads(b'cbuiltins\nlen\n(S"abc"\ntR.') == 3
