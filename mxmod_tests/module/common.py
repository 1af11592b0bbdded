"""Small networks and data shared by the module tests."""
import numpy as np

import mxmod as mx


def mlp_sym(hidden=8, classes=3):
    """data -> FC(hidden) -> relu -> FC(classes) -> SoftmaxOutput (the golden fit_mlp network)."""
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=hidden, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=classes, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def toy_data(n=40, features=6, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.normal(0, 1, (n, features)).astype(np.float32),
            rng.randint(0, classes, (n,)).astype(np.float32))


def cpus(n):
    return [mx.cpu(i) for i in range(n)]
