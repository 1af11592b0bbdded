"""Inference results shared by the buckets of one BucketingModule (executor/inference_cache.py):
a bucket whose graph has the structure and input shapes of an earlier one takes its inferred
shapes and dtypes (checked against binding the symbol alone, without any sharing), other input
shapes or structures infer again, and unrolled buckets of different lengths never compare
structures."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.executor import bind as bind_module
from mxmod.executor import inference_cache


@pytest.fixture
def inferences(monkeypatch):
    """The number of shape/type inferences simple_bind runs (not those taken from a cache)."""
    calls = []
    original = bind_module._slot_info
    monkeypatch.setattr(bind_module, '_slot_info',
                        lambda *a: calls.append(a) or original(*a))
    return calls


def _mlp(hidden=8):
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=hidden, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='act')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _module(sym_gen, default, shapes_of, context=None):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=default,
                                 context=context or mx.cpu())
    data, label = shapes_of(default)
    mod.bind([('data', data)], [('softmax_label', label)])
    mod.init_params(mx.init.Xavier())
    return mod


def _switch(mod, key, shapes_of):
    data, label = shapes_of(key)
    mod.switch_bucket(key, [('data', data)], [('softmax_label', label)])
    return mod._buckets[key]._exec_group.execs[0]


def _alone(sym, data, label):
    """The same symbol bound by itself (no cache in force)."""
    assert inference_cache.current() is None
    return sym.simple_bind(mx.cpu(), data=data, softmax_label=label)


def _same_inference(exe, alone):
    assert exe._shapes == alone._shapes and exe._dtypes == alone._dtypes
    assert [a.shape for a in exe.arg_arrays] == [a.shape for a in alone.arg_arrays]
    assert [a.dtype for a in exe.arg_arrays] == [a.dtype for a in alone.arg_arrays]


def _fixed_batch(key):
    return (4, 5), (4,)


def test_same_structure_and_shapes_infer_once(inferences):
    """Keys whose symbols are alike (sym_gen builds a new one each time) and whose input shapes
    agree: only the first bind infers."""
    mod = _module(lambda key: (_mlp(), ('data',), ('softmax_label',)), 'a', _fixed_batch)
    assert len(inferences) == 1
    for key in ('b', 'c'):
        exe = _switch(mod, key, _fixed_batch)
        _same_inference(exe, _alone(_mlp(), (4, 5), (4,)))
    assert len(inferences) == 1 + 2      # the two _alone binds; the switches took the cache


def test_other_input_shapes_infer_again(inferences):
    def shapes_of(key):
        return (key, 5), (key,)
    mod = _module(lambda key: (_mlp(), ('data',), ('softmax_label',)), 6, shapes_of)
    for key in (2, 3, 2):
        exe = _switch(mod, key, shapes_of)
        assert exe.arg_dict['data'].shape == (key, 5)
        _same_inference(exe, _alone(_mlp(), (key, 5), (key,)))
    # 6, 2, 3 infer (the second 2 is the same module); plus three _alone binds
    assert len(inferences) == 3 + 3


def test_other_attributes_are_another_structure(inferences):
    """Same size, same variables, another num_hidden: inferred again, with its own shapes."""
    mod = _module(lambda key: (_mlp(hidden=key), ('data',), ('softmax_label',)), 8,
                  _fixed_batch)
    exe = _switch(mod, 4, _fixed_batch)
    assert exe.arg_dict['fc1_weight'].shape == (4, 5)
    assert len(inferences) == 2


def test_attributes_set_after_binding_are_not_trusted(inferences):
    shared = _mlp()
    mod = _module(lambda key: (shared, ('data',), ('softmax_label',)), 'a', _fixed_batch)
    shared.get_internals()['fc1_output']._set_attr(num_hidden='6')
    exe = _switch(mod, 'b', _fixed_batch)
    assert exe.arg_dict['fc1_weight'].shape == (6, 5)
    assert len(inferences) == 2


def test_unrolled_buckets_never_compare_structures(inferences, monkeypatch):
    compared = []
    original = inference_cache._signature
    monkeypatch.setattr(inference_cache, '_signature',
                        lambda order: compared.append(1) or original(order))
    cell = mx.rnn.LSTMCell(num_hidden=6, prefix='l_')

    def sym_gen(length):
        data = mx.sym.var('data')
        embed = mx.sym.Embedding(data, input_dim=10, output_dim=4, name='embed')
        cell.reset()
        outputs, _ = cell.unroll(length, embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 6)), num_hidden=10,
                                     name='pred')
        label = mx.sym.Reshape(mx.sym.var('softmax_label'), shape=(-1,))
        return mx.sym.SoftmaxOutput(pred, label, name='softmax'), ('data',), ('softmax_label',)

    def shapes_of(length):
        return (2, length), (2, length)
    mod = _module(sym_gen, 6, shapes_of)
    for length in (2, 3, 4, 5):
        exe = _switch(mod, length, shapes_of)
        _same_inference(exe, _alone(sym_gen(length)[0], *shapes_of(length)))
    assert compared == []


def test_devices_of_one_bucket_share(inferences):
    mod = _module(lambda key: (_mlp(), ('data',), ('softmax_label',)), 'a', _fixed_batch,
                  context=[mx.cpu(0), mx.cpu(1)])
    assert len(inferences) == 1     # the second device's slice has the first one's shapes
    execs = mod._buckets['a']._exec_group.execs
    assert execs[0]._shapes == execs[1]._shapes


def test_custom_operators_are_never_shared(inferences):
    class Identity(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0])

    @mx.operator.register('bucketing_inference_identity')
    class IdentityProp(mx.operator.CustomOpProp):  # pylint: disable=unused-variable
        def __init__(self):
            super().__init__(need_top_grad=True)

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Identity()

    def sym_gen(key):
        net = mx.sym.Custom(_mlp().get_internals()['fc2_output'],
                            op_type='bucketing_inference_identity')
        return mx.sym.SoftmaxOutput(net, name='softmax'), ('data',), ('softmax_label',)
    mod = _module(sym_gen, 'a', _fixed_batch)
    _switch(mod, 'b', _fixed_batch)
    assert len(inferences) == 2


def test_shared_inference_trains_like_separate_inference():
    """Two alike buckets trained through the cache give the parameters of the same training
    with the cache out of the way."""
    def run(use_cache):
        mx.random.seed(3)
        np.random.seed(3)
        mod = _module(lambda key: (_mlp(), ('data',), ('softmax_label',)), 'a', _fixed_batch)
        if not use_cache:
            mod._inference = None
        mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
        rng = np.random.RandomState(0)
        for step in range(6):
            batch = mx.io.DataBatch([mx.nd.array(rng.rand(4, 5))],
                                    [mx.nd.array(rng.randint(0, 3, size=4))],
                                    bucket_key='ab'[step % 2],
                                    provide_data=[('data', (4, 5))],
                                    provide_label=[('softmax_label', (4,))])
            mod.forward_backward(batch)
            mod.update()
        return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    cached, plain = run(True), run(False)
    for name in plain:
        np.testing.assert_array_equal(cached[name], plain[name])
