"""A module whose every parameter and optimizer state holds one number, saved again and again,
so that a test can kill the saving process anywhere and tell from the files which save(s) they
come from. Run as a script it saves epoch 1 in a loop with values 1, 2, 3... and prints each
value once its save returned:
    python -m mxmod_tests.hardening.killable_save PREFIX
"""
import sys

import numpy as np

import mxmod as mx


def make_module():
    """A bound FC + softmax module with momentum SGD states."""
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3,
                                                     name='fc'), name='softmax')
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))]))
    mod.update()
    return mod


def fill(mod, value):
    """Set every parameter and every optimizer state array to ``value``."""
    args, auxs = mod.get_params()
    mod.set_params({k: mx.nd.full(v.shape, value) for k, v in args.items()}, auxs)
    for state in mod._updater.states.values():
        state[:] = value


def save(mod, prefix, value, epoch=1):
    fill(mod, value)
    mod.save_checkpoint(prefix, epoch, save_optimizer_states=True)


def loaded_value(prefix, epoch=1):
    """The one value of a loaded checkpoint (parameters and states agree), or an exception."""
    mod = mx.mod.Module.load(prefix, epoch, load_optimizer_states=True)
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    values = {float(v) for arr in mod.get_params()[0].values() for v in np.unique(arr.asnumpy())}
    values |= {float(v) for arr in mod._updater.states.values()
               for v in np.unique(arr.asnumpy())}
    assert len(values) == 1, 'the loaded checkpoint mixes saves: %s' % sorted(values)
    return values.pop()


def main(prefix):
    mod = make_module()
    value = 0
    while True:
        value += 1
        save(mod, prefix, value)
        print(value, flush=True)


if __name__ == '__main__':
    main(sys.argv[1])
