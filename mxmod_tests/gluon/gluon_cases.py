"""Trainer, save/load and mx.np cases shared by the fixture generator (real MXNet 1.9.1) and
the tests (mxmod); each function takes the ``mx`` module to run with."""
import os

import numpy as np

# cases whose hybridized form MXNet itself cannot build (SDMLLoss reads x.shape; PoissonNLLLoss
# with compute_full uses *= on a Symbol)
NOT_HYBRIDIZABLE = {'sdml', 'poisson_nll_full'}

# name: (optimizer, optimizer_params, number of CPU contexts, Trainer keywords, update style)
TRAINER_CASES = {
    'sgd_momentum_wd': ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}, 1, {},
                        'step'),
    'adam': ('adam', {'learning_rate': 0.01}, 1, {}, 'step'),
    'sgd_two_contexts': ('sgd', {'learning_rate': 0.2}, 2, {}, 'step'),
    'nag_two_contexts_local_update': ('nag', {'learning_rate': 0.05, 'momentum': 0.8}, 2,
                                      {'update_on_kvstore': False}, 'step'),
    'rmsprop_bias_frozen': ('rmsprop', {'learning_rate': 0.01}, 1, {}, 'frozen_bias'),
    'sgd_allreduce_clip_update': ('sgd', {'learning_rate': 0.3}, 2,
                                  {'update_on_kvstore': False}, 'clip'),
}

TRAIN_X = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)
TRAIN_Y = np.cos(np.arange(12, dtype=np.float32)).reshape(6, 2)


def trainer_net(mx):
    """Two Dense layers with deterministic parameter values."""
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(4, in_units=3, activation='tanh'))
            net.add(mx.gluon.nn.Dense(2, in_units=4))
    return net


def set_values(mx, params, seed):
    rs = np.random.RandomState(seed)
    for name in sorted(params.keys()):
        low, high = (0.5, 1.5) if name.endswith('running_var') else (-0.5, 0.5)
        params[name].set_data(mx.nd.array(rs.uniform(low, high, params[name].shape)))


def run_trainer(mx, name):
    """Parameter values after each of three training steps ('step<i>:<param>') and the
    learning rates seen ('lr')."""
    optimizer, opt_params, num_ctx, kwargs, style = TRAINER_CASES[name]
    ctxs = [mx.cpu(i) for i in range(num_ctx)]
    net = trainer_net(mx)
    net.initialize(ctx=ctxs)
    params = net.collect_params()
    set_values(mx, params, 11)
    if style == 'frozen_bias':
        params.setattr('lr_mult', 1.0)
        net.collect_params('.*bias').setattr('grad_req', 'null')
    trainer = mx.gluon.Trainer(params, optimizer, dict(opt_params), **kwargs)
    loss = mx.gluon.loss.L2Loss()
    result = {}
    rates = []
    for step in range(3):
        if step == 2:
            trainer.set_learning_rate(trainer.learning_rate * 0.5)
        rates.append(trainer.learning_rate)
        xs = mx.gluon.utils.split_and_load(mx.nd.array(TRAIN_X), ctxs)
        ys = mx.gluon.utils.split_and_load(mx.nd.array(TRAIN_Y), ctxs)
        with mx.autograd.record():
            losses = [loss(net(x), y) for x, y in zip(xs, ys)]
        mx.autograd.backward(losses)
        if style == 'clip':
            trainer.allreduce_grads()
            grads = [p.grad(ctxs[0]) for p in params.values()]
            mx.gluon.utils.clip_global_norm(grads, 0.5)
            for param in params.values():
                for grad in param.list_grad()[1:]:
                    grad[:] = param.grad(ctxs[0])
            trainer.update(TRAIN_X.shape[0])
        else:
            trainer.step(TRAIN_X.shape[0])
        for pname, param in params.items():
            result['step%d:%s' % (step, pname)] = param.data(ctxs[-1]).asnumpy()
    result['lr'] = np.array(rates)
    return result


SAVELOAD_INPUT = np.linspace(-2, 2, 20, dtype=np.float32).reshape(5, 4)


def saveload_net(mx):
    """A hybridized net with deterministic parameters that has run once."""
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential(prefix='model_')
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, in_units=4, activation='relu'))
            net.add(mx.gluon.nn.BatchNorm(in_channels=3))
            net.add(mx.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    set_values(mx, net.collect_params(), 3)
    net.hybridize()
    net(mx.nd.array(SAVELOAD_INPUT))
    return net


def write_files(mx, folder):
    """The files Gluon writes for ``saveload_net``; name -> path."""
    net = saveload_net(mx)
    files = {'save_parameters': os.path.join(folder, 'net.params'),
             'paramdict_save': os.path.join(folder, 'dict.params'),
             'paramdict_save_stripped': os.path.join(folder, 'stripped.params'),
             'export_symbol': os.path.join(folder, 'exp-symbol.json'),
             'export_params': os.path.join(folder, 'exp-0003.params')}
    net.save_parameters(files['save_parameters'])
    net.collect_params().save(files['paramdict_save'])
    net.collect_params().save(files['paramdict_save_stripped'], strip_prefix='model_')
    net.export(os.path.join(folder, 'exp'), epoch=3)
    return files


NP_EXPRESSIONS = [
    'np.ones(shape=())', 'np.ones((0, 1, 2))', 'np.zeros((2, 3), dtype="int32")',
    'np.full((2,), 3)', 'np.full((2, 2), 2.5, dtype="float64")', 'np.empty((2, 0))',
    'np.array([1, 2, 3])', 'np.array([[1.5, 2]], dtype="float64")', 'np.array(3.5)',
    'np.array([True, False])', 'np.arange(4)', 'np.arange(1, 2, 0.25)',
    'np.eye(3, 2, k=-1)', 'np.linspace(0, 1, 5)', 'np.linspace(0, 1, 4, endpoint=False)',
    'np.zeros_like(np.array([[1, 2]], dtype="int32"))', 'np.ones_like(np.array([1., 2.]))',
    'i / 2', 'i + 1.5', 'i * 2', 'i + f', 'f > 1', 'i == 2', 'f.sum()', 'i.sum()',
    'f.mean(axis=0)', 'm.sum(axis=1)', 'm.max(axis=(0, 1))', 'm.mean(keepdims=True)',
    'f[0]', 'f[1:]', 'm[1]', 'm[:, 0]', 'm[1, 2]', 'f.reshape(3, 1)', 'm.reshape((-1,))',
    'm.T', '-f', 'abs(f - 2)', 'f ** 2', '2 ** f', 'f.astype("int32")', 'm.transpose(1, 0)',
    'm.swapaxes(0, 1)', 'f.clip(1.5, 2.5)', 'm.flatten()', 'np.ones((1, 3, 1)).squeeze()',
    'f.copy()', 'mx.nd.ones((2,)).as_np_ndarray()', 'm.as_nd_ndarray().as_np_ndarray()',
]


def np_results(mx):
    """For each of NP_EXPRESSIONS (numpy shape semantics on): repr, str of the dtype, shape,
    type name and values."""
    env = {'mx': mx, 'np': mx.np, 'i': mx.np.array([1, 2, 3], dtype='int32'),
           'f': mx.np.array([1., 2., 3.]),
           'm': mx.np.array(np.arange(6, dtype=np.float32).reshape(2, 3))}
    results = {}
    for expr in NP_EXPRESSIONS:
        value = eval(expr, env)  # pylint: disable=eval-used
        results[expr] = {'repr': repr(value), 'dtype': str(value.dtype),
                         'shape': list(value.shape), 'type': type(value).__name__,
                         'values': value.asnumpy().astype(np.float64).tolist()}
    return results
