"""Wrong calls found by an item-by-item audit of the hardening issue (each checked against MXNet
1.9.1): every one raises at the call that is wrong, an error mxmod raised on purpose, naming what
is wrong (see harness.refusal). The last tests pin what MXNet accepts next to them, so that the
refusals stay no stricter than MXNet where MXNet has a rule."""
import json
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.hardening.common import mlp_sym, toy_data, trained_module
from mxmod_tests.hardening.harness import refusal

X, Y = toy_data(10)
NAN = float('nan')


@pytest.fixture(autouse=True)
def _own_names():
    """Unnamed symbols made here do not use up the process's automatic names."""
    with mx.name.NameManager():
        yield


def _iter(label=Y, **kwargs):
    return mx.io.NDArrayIter(X, label, batch_size=5, **kwargs)


def _bound(label_shapes=True):
    mod = mx.mod.Module(mlp_sym())
    mod.bind(data_shapes=[('data', (5, 6))],
             label_shapes=[('softmax_label', (5,))] if label_shapes else None)
    mod.init_params()
    mod.init_optimizer()
    return mod


def _batch(label=True):
    return mx.io.DataBatch([mx.nd.array(X[:5])], [mx.nd.array(Y[:5])] if label else None)


def _set_attr_bogus():
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    return lambda: sym._set_attr(bogus='1')


def _attr_scope_bogus():
    def call():
        with mx.AttrScope(group='4'):
            mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3)
    return call


def _copy_params_other_network():
    exe = mlp_sym().simple_bind(mx.cpu(), data=(5, 6))
    arg, aux = trained_module(hidden=5, steps=0).get_params()
    return lambda: exe.copy_params_from(arg, aux)


def _assign_lr(value):
    opt = mx.optimizer.SGD()

    def call():
        opt.lr = value
    return call


def _mixed_updater():
    updater = mx.optimizer.get_updater(mx.optimizer.Adam())
    return lambda: updater(0, mx.nd.ones(2), mx.nd.ones(2, dtype='float16'))


def _fp16_module_fp32_label():
    def call():
        mod = mx.mod.Module(mlp_sym())
        mod.bind(data_shapes=[mx.io.DataDesc('data', (5, 6), dtype='float16')],
                 label_shapes=[('softmax_label', (5,))])
    return call


def _a_file(tmp):
    path = os.path.join(tmp, 'afile')
    open(path, 'w').close()
    return os.path.join(path, 'x.params')


# id -> (factory(tmp) -> call, regexes the message must contain)
CASES = {
    # unknown operator arguments given through attr= / AttrScope / _set_attr (MXNet parses them)
    'sym_attr_unknown_argument': (lambda t: lambda: mx.sym.FullyConnected(
        mx.sym.var('data'), num_hidden=3, attr={'bogus': '1'}),
        ['Cannot find argument', "'bogus'", 'FullyConnected']),
    'sym_attr_scope_unknown_argument': (lambda t: _attr_scope_bogus(), ["'group'"]),
    'sym_set_attr_unknown_argument': (lambda t: _set_attr_bogus(), ["'bogus'", 'FullyConnected']),
    # parameter bounds MXNet declares
    'fc_num_hidden_0': (lambda t: lambda: mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=0),
                        ['num_hidden', 'greater equal to 1']),
    'conv_num_filter_0': (lambda t: lambda: mx.sym.Convolution(
        mx.sym.var('d'), kernel=(3, 3), num_filter=0), ['num_filter']),
    'dropout_p_above_1': (lambda t: lambda: mx.nd.Dropout(mx.nd.ones(2), p=1.5),
                          ['Parameter p', r'\[0,1\]']),
    # (MXNet checks these in the sampler: the error comes when the result is read)
    'uniform_low_above_high': (lambda t: lambda: mx.nd.random.uniform(2, 1, shape=(2,))
                               .asnumpy(), ['low must be less or equal to high']),
    'normal_negative_scale': (lambda t: lambda: mx.nd.random.normal(0, -1, shape=(2,))
                              .asnumpy(), ['scale', 'positive']),
    # shapes of imperative calls (MXNet infers them)
    'nd_fc_weight_width': (lambda t: lambda: mx.nd.FullyConnected(
        mx.nd.ones((2, 4)), mx.nd.ones((3, 5)), mx.nd.ones(3), num_hidden=3),
        ['FullyConnected', 'weight', r'\(3, 5\)', r'\(3, 4\)']),
    'nd_fc_num_hidden_mismatch': (lambda t: lambda: mx.nd.FullyConnected(
        mx.nd.ones((2, 4)), mx.nd.ones((3, 4)), mx.nd.ones(3), num_hidden=5),
        ['FullyConnected', 'weight', r'\(5, 4\)']),
    'nd_conv_kernel_too_large': (lambda t: lambda: mx.nd.Convolution(
        mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 5, 5)), mx.nd.ones(1), kernel=(5, 5),
        num_filter=1), ['Convolution', 'kernel', 'exceeds']),
    'nd_dot_shapes': (lambda t: lambda: mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3))),
                      ['dot', r'\(2, 3\)']),
    'nd_elemwise_add_shapes': (lambda t: lambda: mx.nd.elemwise_add(
        mx.nd.ones((2, 3)), mx.nd.ones((1, 3))), ['elemwise_add', 'rhs', r'\(1, 3\)']),
    'nd_concat_shapes': (lambda t: lambda: mx.nd.concat(mx.nd.ones((2, 3)), mx.nd.ones((2, 4)),
                                                        dim=0),
                         ['Concat', r'\(2, 3\)', r'\(2, 4\)', 'dim=0']),
    'nd_stack_shapes': (lambda t: lambda: mx.nd.stack(mx.nd.ones((2, 3)), mx.nd.ones((2, 4))),
                        ['stack', r'\(2, 4\)']),
    'nd_array_ragged': (lambda t: lambda: mx.nd.array([[1, 2], [3]]),
                        ['source_array', 'array like']),
    'nd_zeros_negative_shape': (lambda t: lambda: mx.nd.zeros((-1, 2)),
                                [r'\(-1, 2\)', 'negative']),
    'nd_zeros_bad_dtype': (lambda t: lambda: mx.nd.zeros((2,), dtype='float77'),
                           ['dtype', 'float77']),
    'nd_zeros_out_of_memory': (lambda t: lambda: mx.nd.zeros((1 << 40, 1 << 20)),
                               ['cannot allocate', 'out of memory']),
    # mixed float16 / float32 operands
    'fp16_loss_fp32_label': (lambda t: lambda: mx.nd.SoftmaxOutput(
        mx.nd.ones((2, 3), dtype='float16'), mx.nd.zeros(2)), ['SoftmaxOutput', 'float16']),
    'fp16_batchnorm_fp16_gamma': (lambda t: lambda: mx.nd.BatchNorm(
        mx.nd.ones((2, 3), dtype='float16'), mx.nd.ones(3, dtype='float16'),
        mx.nd.zeros(3, dtype='float16'), mx.nd.zeros(3), mx.nd.ones(3)),
        ['BatchNorm', 'float32', 'float16']),
    'fp16_module_fp32_label': (lambda t: _fp16_module_fp32_label(),
                               ['softmax', 'label', 'float32', 'float16']),
    'fp16_optimizer_update': (lambda t: lambda: mx.optimizer.SGD().update(
        0, mx.nd.ones(2, dtype='float16'), mx.nd.ones(2), None),
        ['SGD', 'gradient', 'float32', 'float16']),
    'fp16_updater': (lambda t: _mixed_updater(), ['Updater', 'float16', 'float32']),
    # contexts
    'nd_ctx_bare_string': (lambda t: lambda: mx.nd.ones((2,), ctx='cpu'), ['ctx', "'cpu'"]),
    'nd_random_ctx_string': (lambda t: lambda: mx.nd.random.uniform(shape=(2,), ctx='gpu'),
                             ['ctx', "'gpu'"]),
    'nd_array_ctx_int': (lambda t: lambda: mx.nd.array([1], ctx=3), ['ctx', 'Context', '3']),
    'simple_bind_ctx_string': (lambda t: lambda: mlp_sym().simple_bind('cpu', data=(5, 6)),
                               ['simple_bind', 'ctx', "'cpu'"]),
    'bucketing_module_ctx_string': (lambda t: lambda: mx.mod.BucketingModule(
        lambda key: (mlp_sym(), ('data',), ('softmax_label',)), default_bucket_key=1,
        context='cpu'), ['BucketingModule', 'context', "'cpu'"]),
    # parameters of another network, by name
    'executor_copy_params_other_network': (lambda t: _copy_params_other_network(),
                                           ['fc1_weight', r'\(5, 6\)', r'\(8, 6\)']),
    # files
    'save_onto_directory': (lambda t: lambda: mx.nd.save(t, [mx.nd.ones(1)]),
                            ['is a directory']),
    'save_below_a_file': (lambda t: lambda: mx.nd.save(_a_file(t), [mx.nd.ones(1)]),
                          ['afile', 'not a directory']),
    'save_empty_name': (lambda t: lambda: mx.nd.save('', [mx.nd.ones(1)]), ['file name']),
    # optimizer attributes and hyperparameters
    'optimizer_lr_assigned_nan': (lambda t: _assign_lr(NAN), ['lr', 'nan']),
    'optimizer_lr_assigned_negative': (lambda t: _assign_lr(-1.0), ['lr', '>= 0']),
    'sgd_momentum_string': (lambda t: lambda: mx.optimizer.SGD(momentum='0.9'),
                            ['momentum', "'0.9'"]),
    'adam_beta1_nan': (lambda t: lambda: mx.optimizer.Adam(beta1=NAN), ['beta1', 'nan']),
    'kv_set_optimizer_string': (lambda t: lambda: mx.kv.create('local').set_optimizer('sgd'),
                                ['set_optimizer', 'Optimizer', "'sgd'"]),
    # labels under the wrong name (training without labels only warns, as MXNet trains:
    # mxmod_tests/module/test_one_device_step.py)
    'bind_label_name_typo': (lambda t: lambda: mx.mod.Module(mlp_sym()).bind(
        data_shapes=[('data', (5, 6))], label_shapes=[('labelz', (5,))]),
        ["'labelz'", "'softmax_label'"]),
    'fit_label_names_typo': (lambda t: lambda: mx.mod.Module(
        mlp_sym(), label_names=['labelz']).fit(_iter(), num_epoch=1),
        ["'labelz'", "'softmax_label'", 'label_names']),
    'score_without_labels': (lambda t: lambda: _bound().score(_iter(label=None), 'acc'),
                             ['no labels']),
    # initializers
    'fit_initializer_class': (lambda t: lambda: mx.mod.Module(mlp_sym()).fit(
        _iter(), num_epoch=1, initializer=mx.init.Xavier), ['initializer', r'Xavier\(\)']),
    'variable_init_unknown': (lambda t: lambda: mx.mod.Module(mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.var('data'), weight=mx.sym.var('w', init='bogus'),
                              num_hidden=3), name='softmax')).fit(_iter(), num_epoch=1),
        ["'w'", "'bogus'"]),
    # symbols
    'infer_shape_unknown_name': (lambda t: lambda: mlp_sym().infer_shape(bogus=(2, 3)),
                                 ['infer_shape', "'bogus'"]),
    'infer_type_unknown_name': (lambda t: lambda: mlp_sym().infer_type(bogus='float32'),
                                ['infer_type', "'bogus'"]),
    'variable_shape_not_ints': (lambda t: lambda: mx.sym.var('a', shape=(1.5,)),
                                ["'a'", 'shape']),
    'variable_shape_text_not_a_shape': (lambda t: lambda: (mx.sym.var('a', shape='abc') + 1)
                                        .infer_shape(), ["'a'", "'abc'"]),
    # data iterators
    'iter_empty_dict': (lambda t: lambda: mx.io.NDArrayIter({}, Y, batch_size=5),
                        ['data', 'empty']),
    'iter_batch_size_beyond_memory': (lambda t: lambda: next(iter(mx.io.NDArrayIter(
        X, Y, batch_size=10 ** 15))), ['batch_size=1000000000000000', 'out of memory']),
    'bucket_sentence_iter_batch_size_0': (lambda t: lambda: mx.rnn.BucketSentenceIter(
        [[1, 2, 3]], batch_size=0), ['batch_size']),
    'do_checkpoint_period_string': (lambda t: lambda: mx.callback.do_checkpoint(
        os.path.join(t, 'n'), period='2'), ['period', "'2'"]),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_wrong_call_is_refused_naming_what_is_wrong(tmp_path, case):
    factory, names = CASES[case]
    refusal(factory(str(tmp_path)), names)


# ---- what MXNet accepts next to these refusals (checked with MXNet 1.9.1) --------------------
def test_attributes_of_an_operator_without_parameters_are_kept():
    """MXNet stores any attribute of an operator without parameters, writes it to JSON and loads
    that JSON back; the loader must accept the file (this is one MXNet wrote)."""
    text = json.dumps({
        'nodes': [{'op': 'null', 'name': 'a', 'inputs': []},
                  {'op': 'null', 'name': 'b', 'inputs': []},
                  {'op': 'elemwise_add', 'name': 'elemwise_add0', 'attrs': {'bogus': '1'},
                   'inputs': [[0, 0, 0], [1, 0, 0]]}],
        'arg_nodes': [0, 1], 'node_row_ptr': [0, 1, 2, 3], 'heads': [[2, 0, 0]],
        'attrs': {'mxnet_version': ['int', 10901]}})
    sym = mx.sym.load_json(text)
    assert sym.attr_dict() == {'elemwise_add0': {'bogus': '1'}}
    exe = sym.bind(mx.cpu(), {'a': mx.nd.ones(2), 'b': mx.nd.ones(2)})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [2, 2])
    assert mx.sym.load_json(sym.tojson()).attr_dict() == sym.attr_dict()
    added = mx.sym.elemwise_add(mx.sym.var('a'), mx.sym.var('b'), attr={'bogus': '1'})
    assert added.attr_dict()[added.name] == {'bogus': '1'}


def test_attr_keys_that_are_parameters_or_hidden_work():
    sym = mx.sym.FullyConnected(mx.sym.var('data'), attr={'num_hidden': '3', 'lr_mult': '2'},
                                name='fc')
    assert sym.infer_shape(data=(2, 4))[1] == [(2, 3)]
    assert sym.attr_dict()['fc']['__lr_mult__'] == '2'
    sym._set_attr(num_hidden='5', __foo__='x')         # MXNet re-parses: the new size counts
    assert sym.infer_shape(data=(2, 4))[1] == [(2, 5)]
    assert mx.sym.load_json(sym.tojson()).infer_shape(data=(2, 4))[1] == [(2, 5)]


def test_context_strings_mxnet_parses():
    assert mx.nd.ones((2,), ctx='cpu(0)').context == mx.cpu(0)
    assert mx.nd.random.uniform(shape=(2,), ctx='cpu(1)').context == mx.cpu(1)
    assert mx.nd.zeros((2,), ctx=mx.cpu(1)).context == mx.cpu(1)


def test_values_at_the_bounds_are_accepted():
    mx.nd.Dropout(mx.nd.ones(2), p=1.0)
    mx.nd.Dropout(mx.nd.ones(2), p=0.0)
    assert mx.nd.random.poisson(0, shape=(2,)).asnumpy().tolist() == [0, 0]
    assert mx.nd.random.uniform(1, 1, shape=(2,)).asnumpy().tolist() == [1, 1]
    assert (mx.sym.var('a', shape='(2, 3)') + 1).infer_shape()[1] == [(2, 3)]
    with mx.np_shape(True):
        assert (mx.nd.zeros((0, 3)) + mx.nd.zeros((0, 3))).shape == (0, 3)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=np.float32(0.9))
    opt.lr = 0.0
    opt.lr = np.float64(0.5)
    assert opt.learning_rate == 0.5


def test_a_shape_once_accepted_is_not_checked_again():
    x, w, b = mx.nd.ones((2, 4)), mx.nd.ones((3, 4)), mx.nd.ones(3)
    first = mx.nd.FullyConnected(x, w, b, num_hidden=3).asnumpy()
    np.testing.assert_array_equal(mx.nd.FullyConnected(x, w, b, num_hidden=3).asnumpy(), first)
    np.testing.assert_allclose(first, np.full((2, 3), 5.0))


def test_fp16_training_with_fp16_labels_works():
    """The refusal of mixed types leaves the MXNet way open: labels of the data's type."""
    mod = mx.mod.Module(mlp_sym())
    mod.bind(data_shapes=[mx.io.DataDesc('data', (5, 6), dtype='float16')],
             label_shapes=[mx.io.DataDesc('softmax_label', (5,), dtype='float16')])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'multi_precision': True})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(X[:5], dtype='float16')],
                                         [mx.nd.array(Y[:5], dtype='float16')]))
    mod.update()
    assert mod.get_outputs()[0].dtype == np.float16
    assert np.isfinite(mod.get_params()[0]['fc1_weight'].asnumpy()).all()


def test_profiler_dump_into_a_missing_folder_names_the_file(tmp_path):
    missing = str(tmp_path / 'missing' / 'p.json')

    def call():
        mx.profiler.set_config(filename=missing, profile_all=True)
        mx.profiler.set_state('run')
        mx.nd.ones(2).asnumpy()
        mx.profiler.set_state('stop')
        mx.profiler.dump()
    try:
        refusal(call, ['profiler', 'p.json', 'No such file'])
    finally:
        mx.profiler.set_state('stop')
        mx.profiler.set_config(filename=str(tmp_path / 'profile.json'), profile_all=False)
