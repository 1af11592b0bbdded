"""Calls that MXNet 1.9.1 accepts (or refuses) around parameters and data descriptions, written
once for both libraries: ``run_all(mx)`` takes ``mxnet`` or ``mxmod`` and returns
{case: 'OK' | 'ValueError' | 'RuntimeError' | other exception name}.
fixtures/make_permissive_fixture.py records MXNet's answers; test_mxnet_permissive.py holds
mxmod to them.

- Parameter dicts with names the network lacks: ignored by init_params and by set_params
  (without allow_missing), refused by set_params(allow_missing=True) unless allow_extra; a
  SequentialModule hands each module the whole dicts (MXNet's example/stochastic-depth).
- Data descriptions as plain (name, shape) tuples or [name, shape] lists wherever MXNet takes a
  DataDesc: an iterator's provide_data/provide_label, a batch's (MXNet's example/nce-loss)."""
import logging
import warnings

import numpy as np

BATCH = 4


def _net(mx):
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    return fc, mx.sym.SoftmaxOutput(fc, name='softmax')


class _Batch(object):
    """A batch like nce-loss's SimpleBatch: data, label and provide_* as plain tuples."""

    def __init__(self, data, label, key=None):
        self.data, self.label, self.pad, self.index, self.bucket_key = data, label, 0, None, key

    @property
    def provide_data(self):
        return [('data', self.data[0].shape)]

    @property
    def provide_label(self):
        return [('softmax_label', self.label[0].shape)]


def _tuple_iter(mx, lists=False, keys=(None, None, None)):
    class TupleIter(mx.io.DataIter):
        """provide_data/provide_label as plain pairs; yields _Batch objects."""
        default_bucket_key = 5

        def __init__(self):
            super(TupleIter, self).__init__(BATCH)
            pair = list if lists else tuple
            self.provide_data = [pair(('data', (BATCH, 5)))]
            self.provide_label = [pair(('softmax_label', (BATCH,)))]

        def __iter__(self):
            rs = np.random.RandomState(0)
            for key in keys:
                width = key or 5
                yield _Batch([mx.nd.array(rs.rand(BATCH, width))],
                             [mx.nd.array(rs.randint(0, 3, BATCH))], key)

        def reset(self):
            pass
    return TupleIter()


def _module(mx, bound=True):
    mod = mx.mod.Module(_net(mx)[1])
    if bound:
        mod.bind([('data', (BATCH, 5))], [('softmax_label', (BATCH,))])
    return mod


def _params(mx):
    mod = _module(mx)
    mod.init_params()
    arg, aux = mod.get_params()
    return mod, arg, aux, dict(arg, extra=mx.nd.zeros((1,)))


def _sequential(mx):
    fc = _net(mx)[0]
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(fc, label_names=None))
    out = mx.sym.SoftmaxOutput(mx.sym.Variable('hidden'), name='softmax')
    seq.add(mx.mod.Module(out, data_names=['hidden']), take_labels=True, auto_wiring=True)
    seq.bind([('data', (BATCH, 5))], [('softmax_label', (BATCH,))])
    return seq


def _bucketing(mx):
    def gen(key):
        data = mx.sym.Variable('data')
        pooled = mx.sym.sum(mx.sym.reshape(data, shape=(0, -1, 1)), axis=1)
        fc = mx.sym.FullyConnected(pooled, num_hidden=3, name='fc')
        return mx.sym.SoftmaxOutput(fc, name='softmax'), ('data',), ('softmax_label',)
    return mx.mod.BucketingModule(gen, default_bucket_key=5)


def _extra_param_cases(mx):
    def init(**kw):
        return lambda: _module(mx).init_params(arg_params=_params(mx)[3], **kw)

    def set_(arg_fn, aux_fn=lambda a: a, **kw):
        def run():
            mod, arg, aux, _ = _params(mx)
            mod.set_params(arg_fn(arg), aux_fn(aux), **kw)
        return run

    def seq(method, **kw):
        def run():
            seq_mod = _sequential(mx)
            seq_mod.init_params()
            arg, aux = seq_mod.get_params()
            getattr(seq_mod, method)(arg_params=dict(arg, extra=mx.nd.zeros((1,))),
                                     aux_params=aux, force_init=True, **kw)
        return run
    extra = lambda a: dict(a, extra=mx.nd.zeros((1,)))  # noqa: E731
    aux_extra = lambda a: dict(a, extra=mx.nd.zeros((1,)))  # noqa: E731
    missing = lambda a: {'fc_weight': a['fc_weight']}  # noqa: E731
    return {
        'init_params_extra': init(),
        'init_params_extra_allow_missing': init(allow_missing=True),
        'set_params_extra': set_(extra),
        'set_params_extra_allow_extra_false': set_(extra, allow_extra=False),
        'set_params_extra_allow_missing': set_(extra, allow_missing=True),
        'set_params_extra_allow_missing_allow_extra': set_(extra, allow_missing=True,
                                                           allow_extra=True),
        'set_params_extra_aux': set_(lambda a: a, aux_extra),
        'set_params_extra_aux_allow_missing': set_(lambda a: a, aux_extra, allow_missing=True),
        'set_params_missing': set_(missing),
        'set_params_missing_and_extra': set_(lambda a: extra(missing(a))),
        'sequential_set_params_extra': seq('set_params'),
        'sequential_init_params_extra': seq('init_params'),
        'sequential_set_params_extra_allow_missing': seq('set_params', allow_missing=True),
    }


def _fit(mx, module_fn, it_fn, score=True):
    def run():
        mod = module_fn()
        mod.fit(it_fn(), num_epoch=1, eval_data=it_fn())
        if score:
            mod.score(it_fn(), 'acc')
    return run


def _tuple_cases(mx):
    module = lambda: mx.mod.Module(_net(mx)[1])  # noqa: E731

    def bucket_fit():
        mod = _bucketing(mx)
        mod.fit(_tuple_iter(mx, keys=(5, 3, 5, 2)), num_epoch=1)
        mod.score(_tuple_iter(mx, keys=(5, 3)), 'acc')

    def forward_new_batch_size():
        mod = _module(mx)
        mod.init_params()
        mod.forward(_Batch([mx.nd.ones((6, 5))], [mx.nd.ones((6,))]))
        assert mod.get_outputs()[0].shape == (6, 3)

    def sequential_fit():
        seq = mx.mod.SequentialModule()
        seq.add(mx.mod.Module(_net(mx)[0], label_names=None))
        out = mx.sym.SoftmaxOutput(mx.sym.Variable('hidden'), name='softmax')
        seq.add(mx.mod.Module(out, data_names=['hidden']), take_labels=True, auto_wiring=True)
        seq.bind(_tuple_iter(mx).provide_data, _tuple_iter(mx).provide_label)
        seq.init_params()
        seq.init_optimizer()
        batch = mx.io.DataBatch([mx.nd.ones((BATCH, 5))], [mx.nd.ones((BATCH,))],
                                provide_data=[('data', (BATCH, 5))],
                                provide_label=[('softmax_label', (BATCH,))])
        seq.forward_backward(batch)
        seq.update()
    return {
        'fit_tuples': _fit(mx, module, lambda: _tuple_iter(mx)),
        'fit_lists': _fit(mx, module, lambda: _tuple_iter(mx, lists=True)),
        'predict_tuples': lambda: _fitted(mx).predict(_tuple_iter(mx)),
        'iter_predict_tuples': lambda: list(_fitted(mx).iter_predict(_tuple_iter(mx))),
        'bind_lists': lambda: _module(mx, False).bind([['data', (BATCH, 5)]],
                                                      [['softmax_label', (BATCH,)]]),
        'bind_list_shapes': lambda: _module(mx, False).bind([('data', [BATCH, 5])],
                                                            [('softmax_label', [BATCH])]),
        'reshape_tuples': lambda: _fitted(mx).reshape([('data', (2, 5))],
                                                      [('softmax_label', (2,))]),
        'forward_new_batch_size': forward_new_batch_size,
        'bucketing_fit_tuples': bucket_fit,
        'sequential_tuples': sequential_fit,
    }


def _fitted(mx):
    mod = _module(mx)
    mod.init_params()
    return mod


def run_all(mx):
    """Every case's outcome, by name."""
    logging.getLogger().setLevel(logging.ERROR)
    outcomes = {}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name, call in sorted(dict(_extra_param_cases(mx), **_tuple_cases(mx)).items()):
            try:
                call()
                outcomes[name] = 'OK'
            except ValueError:
                outcomes[name] = 'ValueError'
            except RuntimeError:
                outcomes[name] = 'RuntimeError'
            except Exception as err:  # pylint: disable=broad-except
                outcomes[name] = type(err).__name__
    return outcomes
