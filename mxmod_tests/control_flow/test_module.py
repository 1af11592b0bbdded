"""Networks with mx.sym.contrib.foreach trained by mx.mod.Module and BucketingModule give the
parameters of the same networks unrolled by hand, step for step."""
import numpy as np

import mxmod as mx

N, D, H, CLASSES = 16, 3, 5, 2


def _step(x, h, params):
    w, u, b = params
    return mx.sym.tanh(mx.sym.FullyConnected(x, weight=w, bias=b, num_hidden=H) +
                       mx.sym.FullyConnected(h, weight=u, no_bias=True, num_hidden=H))


def _network(steps, looped):
    """A recurrent classifier of (batch, steps, D) data: the last hidden state, a dense layer
    and a softmax; the recurrence by foreach or unrolled."""
    data = mx.sym.var('data')
    params = (mx.sym.var('w'), mx.sym.var('u'), mx.sym.var('b'))
    zero = mx.sym.sum(data, axis=(1, 2), keepdims=True).reshape((-1, 1)) * 0
    h = mx.sym.broadcast_axis(zero, axis=1, size=H)
    if looped:
        major = mx.sym.transpose(data, axes=(1, 0, 2))
        _, states = mx.sym.contrib.foreach(lambda x, s: (s[0], [_step(x, s[0], params)]),
                                           major, [h])
        h = states[0]
    else:
        for x in mx.sym.split(data, num_outputs=steps, axis=1, squeeze_axis=True):
            h = _step(x, h, params)
    out = mx.sym.FullyConnected(h, num_hidden=CLASSES, name='out')
    return mx.sym.SoftmaxOutput(out, name='softmax')


def _start_params():
    rng = np.random.RandomState(7)
    shapes = {'w': (H, D), 'u': (H, H), 'b': (H,), 'out_weight': (CLASSES, H),
              'out_bias': (CLASSES,)}
    return {k: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for k, s in shapes.items()}


def _data(steps, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (N, steps, D)).astype(np.float32)
    return x, (x[:, -1].sum(axis=1) > x[:, 0].sum(axis=1)).astype(np.float32)


def _fit(looped, context):
    x, y = _data(4, 0)
    mod = mx.mod.Module(_network(4, looped), context=context)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=4), num_epoch=2, optimizer='sgd',
            optimizer_params={'learning_rate': 0.5}, arg_params=_start_params(),
            eval_metric='acc')
    return mod.get_params()[0], mod.score(mx.io.NDArrayIter(x, y, batch_size=4), 'acc')


def test_module_fit_equals_unrolled_network():
    (looped, looped_score), (unrolled, unrolled_score) = [_fit(flag, mx.cpu())
                                                          for flag in (True, False)]
    assert looped_score == unrolled_score
    for name, value in unrolled.items():
        assert not np.allclose(value.asnumpy(), _start_params()[name].asnumpy())
        np.testing.assert_allclose(looped[name].asnumpy(), value.asnumpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=name)


class _Buckets(mx.io.DataIter):
    """Batches of sequences of several lengths, each batch one length (its bucket key)."""

    def __init__(self, lengths):
        super().__init__(batch_size=N)
        self.batches = []
        for seed, steps in enumerate(lengths):
            x, y = _data(steps, seed)
            self.batches.append(mx.io.DataBatch(
                [mx.nd.array(x)], [mx.nd.array(y)], bucket_key=steps,
                provide_data=[mx.io.DataDesc('data', x.shape)],
                provide_label=[mx.io.DataDesc('softmax_label', y.shape)]))
        self.default_bucket_key = max(lengths)
        self.provide_data = [mx.io.DataDesc('data', (N, self.default_bucket_key, D))]
        self.provide_label = [mx.io.DataDesc('softmax_label', (N,))]
        self.cursor = 0

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor == len(self.batches):
            raise StopIteration
        self.cursor += 1
        return self.batches[self.cursor - 1]


def test_bucketing_module_fit_equals_unrolled_network():
    found = []
    for looped in (True, False):
        data = _Buckets([5, 3, 4, 3])
        mod = mx.mod.BucketingModule(
            lambda steps, looped=looped: (_network(steps, looped), ('data',), ('softmax_label',)),
            default_bucket_key=data.default_bucket_key, context=mx.cpu())
        mod.fit(data, num_epoch=2, optimizer='sgd', optimizer_params={'learning_rate': 0.5},
                arg_params=_start_params())
        found.append(mod.get_params()[0])
    for name, value in found[1].items():
        np.testing.assert_allclose(found[0][name].asnumpy(), value.asnumpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=name)


def test_module_on_two_emulated_gpus_matches_two_cpus():
    from mxmod_tests.gpu_emulation import emulated_gpus  # pylint: disable=import-outside-toplevel
    want, _ = _fit(True, [mx.cpu(0), mx.cpu(1)])
    with emulated_gpus(2):
        got, _ = _fit(True, [mx.gpu(0), mx.gpu(1)])
        got = {k: v.asnumpy() for k, v in got.items()}
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value.asnumpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
