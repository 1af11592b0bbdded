"""SVRG training runs for test_svrg.py, written against an ``mx`` module so that the same code
runs on mxmod and on MXNet 1.9.1; ``python mxmod_tests/contrib/svrg_scenarios.py`` (with MXNet's
interpreter) writes fixtures/svrg_mxnet.json, the parameters and metrics MXNet reached."""
import json
import os
import sys

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures', 'svrg_mxnet.json')


def _data(mx, count=45, batch=10):
    x = (np.arange(count * 2).reshape(count, 2) % 7 + 1).astype('float32')
    y = x.dot([1.0, 2.0]) + 0.5
    return mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name='lin_reg_label')


def _make(mx, svrg_module, context, update_freq=2):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('lin_reg_label')
    fc = mx.sym.FullyConnected(data, name='fc1', num_hidden=1)
    net = mx.sym.LinearRegressionOutput(fc, label, name='lro')
    return svrg_module(symbol=net, data_names=['data'], label_names=['lin_reg_label'],
                       context=context, update_freq=update_freq)


def _params(mod):
    return {k: v.asnumpy().tolist() for k, v in sorted(mod.get_params()[0].items())}


def manual(mx, svrg_module, kvstore, optimizer_params, contexts=1, epochs=3):
    """The intermediate-level loop of example/svrg_module/api_usage_example."""
    it = _data(mx)
    mod = _make(mx, svrg_module, [mx.cpu(i) for i in range(contexts)])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.Constant(0.1))
    kv = mx.kv.create('local') if kvstore == 'local-object' else kvstore
    mod.init_optimizer(kvstore=kv, optimizer='sgd', optimizer_params=optimizer_params)
    metric = mx.metric.create('mse')
    history = []
    for epoch in range(epochs):
        metric.reset()
        if epoch % mod.update_freq == 0:
            mod.update_full_grads(it)
        it.reset()
        for batch in it:
            mod.forward_backward(data_batch=batch)
            mod.update()
            mod.update_metric(metric, batch.label)
        history.append(metric.get()[1])
    return {'params': _params(mod), 'mse': history}


def fit(mx, svrg_module, epochs=3):
    """The high-level loop (SVRGModule.fit), momentum SGD, a batch-end callback."""
    it = _data(mx)
    mod = _make(mx, svrg_module, mx.cpu(), update_freq=1)
    metric = mx.metric.MSE()
    batches = []
    mod.fit(it, eval_data=_data(mx), eval_metric=metric, optimizer='sgd',
            optimizer_params=(('learning_rate', 0.02), ('momentum', 0.5)), num_epoch=epochs,
            initializer=mx.init.Constant(0.1), kvstore='local',
            batch_end_callback=lambda p: batches.append((p.epoch, p.nbatch)))
    return {'params': _params(mod), 'mse': [metric.get()[1]], 'batches': batches}


def scenarios(mx, svrg_module):
    """Every scenario's result, by name."""
    sgd = (('learning_rate', 0.025),)
    momentum = (('learning_rate', 0.01), ('momentum', 0.9))
    return {
        'no_kvstore': manual(mx, svrg_module, None, sgd),
        'local_string_one_device': manual(mx, svrg_module, 'local', momentum),
        'local_object_one_device': manual(mx, svrg_module, 'local-object', sgd),
        'local_two_devices': manual(mx, svrg_module, 'local', sgd, contexts=2),
        'fit': fit(mx, svrg_module),
    }


def main():
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    from mxnet.contrib.svrg_optimization.svrg_module import SVRGModule  # pylint: disable=import-outside-toplevel
    results = scenarios(mx, SVRGModule)
    with open(FIXTURE, 'w') as out:
        json.dump({'generator': 'mxmod_tests/contrib/svrg_scenarios.py', 'mxnet': mx.__version__,
                   'results': results}, out, indent=1)
    print('wrote', FIXTURE, file=sys.stderr)


if __name__ == '__main__':
    main()
