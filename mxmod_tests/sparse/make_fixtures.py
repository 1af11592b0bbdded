"""Write the MXNet-made fixtures of the sparse tests (run with the oracle's Python):

    /tmp/mxnet-ref/bin/python mxmod_tests/sparse/make_fixtures.py

* ``sparse.params``: row_sparse and CSR arrays saved by ``mx.nd.save`` (the inputs are rebuilt in
  the tests from ``sparse_inputs.npz``);
* ``optimizers.npz``: weights and states after two updates with row_sparse gradients, for SGD
  (lazy and not, with momentum), Adam, AdaGrad and Ftrl, on row_sparse and dense weights;
* ``linear.npz``: parameters after training a small sparse linear model (CSR data x row_sparse
  weight, Module with SGD) for a few batches, and the batches used."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'fixtures')


def sparse_inputs():
    rng = np.random.RandomState(7)
    dense = rng.rand(6, 5).astype(np.float32) * (rng.rand(6, 5) > 0.6)
    rows = rng.rand(8, 3).astype(np.float32) * (rng.rand(8, 1) > 0.5)
    cube = rng.rand(4, 2, 3).astype(np.float64) * (rng.rand(4, 1, 1) > 0.5)
    return {'csr': dense, 'rsp': rows, 'rsp3': cube, 'empty': np.zeros((3, 4), np.float32),
            'csr_int': (dense * 10).astype(np.int32)}


def optimizer_cases():
    """(name, optimizer kwargs, weight stype) of the optimizer fixtures."""
    return [('sgd_lazy', ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}), 'row_sparse'),
            ('sgd_lazy_dense_w', ('sgd', {'learning_rate': 0.1, 'wd': 0.01}), 'default'),
            ('sgd_std', ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01,
                                 'lazy_update': False}), 'row_sparse'),
            ('adam_lazy', ('adam', {'learning_rate': 0.01, 'wd': 0.01}), 'row_sparse'),
            ('adagrad', ('adagrad', {'learning_rate': 0.1}), 'row_sparse'),
            ('ftrl', ('ftrl', {'learning_rate': 0.1, 'lamda1': 0.01, 'wd': 0.01}), 'row_sparse')]


def optimizer_inputs():
    rng = np.random.RandomState(3)
    weight = rng.rand(10, 4).astype(np.float32)
    grads = [(np.array([1, 4, 7]), rng.rand(3, 4).astype(np.float32) - 0.5),
             (np.array([0, 4]), rng.rand(2, 4).astype(np.float32) - 0.5)]
    return weight, grads


def linear_inputs():
    rng = np.random.RandomState(11)
    batches = []
    for _ in range(4):
        x = (rng.rand(16, 50) * (rng.rand(16, 50) > 0.9)).astype(np.float32)
        y = (rng.rand(16) > 0.5).astype(np.float32)
        batches.append((x, y))
    weight = (rng.rand(50, 2).astype(np.float32) - 0.5) * 0.1
    return batches, weight


def linear_symbol(mx):
    data = mx.sym.Variable('data', stype='csr')
    label = mx.sym.Variable('softmax_label')
    weight = mx.sym.Variable('weight', shape=(50, 2), stype='row_sparse')
    bias = mx.sym.Variable('bias', shape=(2,))
    out = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    return mx.sym.SoftmaxOutput(out, label, name='softmax')


def main():
    try:
        import mxnet as mx
    except ImportError:
        print('mxnet is not importable: run this with the oracle python')
        return 1
    os.makedirs(OUT, exist_ok=True)
    inputs = sparse_inputs()
    np.savez(os.path.join(OUT, 'sparse_inputs.npz'), **inputs)
    arrays = {'csr': mx.nd.array(inputs['csr']).tostype('csr'),
              'rsp': mx.nd.array(inputs['rsp']).tostype('row_sparse'),
              'rsp3': mx.nd.array(inputs['rsp3'], dtype=np.float64).tostype('row_sparse'),
              'empty': mx.nd.sparse.zeros('row_sparse', (3, 4)),
              'csr_int': mx.nd.array(inputs['csr_int'], dtype=np.int32).tostype('csr')}
    mx.nd.waitall()
    mx.nd.save(os.path.join(OUT, 'sparse.params'), arrays)

    weight, grads = optimizer_inputs()
    results = {}
    for name, (opt_name, kwargs), stype in optimizer_cases():
        updater = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kwargs))
        w = mx.nd.array(weight).tostype(stype)
        for rows, values in grads:
            g = mx.nd.sparse.row_sparse_array((values, rows), shape=weight.shape)
            updater(0, g, w)
        results[name] = w.asnumpy()
    np.savez(os.path.join(OUT, 'optimizers.npz'), **results)

    batches, w0 = linear_inputs()
    mod = mx.mod.Module(linear_symbol(mx), data_names=['data'], label_names=['softmax_label'])
    mod.bind(data_shapes=[('data', (16, 50))], label_shapes=[('softmax_label', (16,))])
    mod.init_params(arg_params={'weight': mx.nd.array(w0).tostype('row_sparse'),
                                'bias': mx.nd.zeros((2,))})
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    for x, y in batches:
        batch = mx.io.DataBatch([mx.nd.array(x).tostype('csr')], [mx.nd.array(y)])
        mod.forward_backward(batch)
        mod.update()
    args, _ = mod.get_params()
    np.savez(os.path.join(OUT, 'linear.npz'), weight=args['weight'].asnumpy(),
             bias=args['bias'].asnumpy())
    return 0


if __name__ == '__main__':
    sys.exit(main())
