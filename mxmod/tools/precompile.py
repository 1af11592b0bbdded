"""Compile mxmod's CPU kernels ahead: ``python -m mxmod.tools.precompile``.

numba compiles each of mxmod's kernels (convolution, BatchNorm, pooling, activation gradients,
the fused LSTM layers, Embedding gradients, SGD) the first time a process runs it and keeps the
machine code in its cache, so the first training run after an installation spends its first
step compiling. This tool does it at once: it trains a few small networks for two batches each
(a convolution network whose layers take every kernel path, an LSTM language model, an SGD update
large enough for the compiled step) with the kernels on one thread and on several, then lists the
kernels that have machine code. Run it after installing (and again after upgrading) mxmod, as the
user whose cache the programs will use (``NUMBA_CACHE_DIR`` when set, else next to the package
or in the user's cache directory).

Exit status 0 when every kernel has machine code afterwards, 1 otherwise (a kernel no sample
network reaches: it then compiles in the first program that uses it)."""
import argparse
import importlib
import inspect
import logging
import re
import sys
import time

import numpy as np

__all__ = ['KERNEL_MODULES', 'kernel_inventory', 'precompile', 'main']

# the modules holding mxmod's numba kernels
KERNEL_MODULES = ('act_kernels', 'bn_kernels', 'bn_par_kernels', 'bn_relu_kernels',
                  'conv_kernels', 'conv_scatter', 'conv_wgrad', 'index_kernels', 'kpool_spin',
                  'lstm_kernels', 'pool_kernels', 'sgd_kernels', 'sum_kernels', 'wino_kernels',
                  'wino_wgrad')

# kernels no float32 training program compiles on its own: the tests' entry point of the LSTM
# tanh, and the max pooling of float64 channels-last memory
NOT_NEEDED = ('lstm_kernels.tanh', 'pool_kernels.max_forward_last')


def _kernel_modules():
    """(module, {name bound in it: dispatcher}) for each of :data:`KERNEL_MODULES`."""
    from numba.core.registry import CPUDispatcher  # pylint: disable=import-outside-toplevel
    result = []
    for name in KERNEL_MODULES:
        module = importlib.import_module('mxmod.ops.' + name)
        result.append((module, {attr: value for attr, value in vars(module).items()
                                if isinstance(value, CPUDispatcher)}))
    return result


def kernel_inventory():
    """The entry points among mxmod's kernels (those that no other kernel calls: a kernel's
    callees are compiled into it, and are not loaded on their own from the cache) with their
    number of compiled (or cache-loaded) signatures in this process, as a dict
    ``'module.function' -> int``."""
    def key(fn):
        return '%s.%s' % (fn.py_func.__module__.rsplit('.', 1)[1], fn.py_func.__name__)
    kernels, called = {}, set()
    for module, bound in _kernel_modules():
        own = [fn for fn in bound.values() if fn.py_func.__module__ == module.__name__]
        for fn in own:
            kernels[key(fn)] = fn
            body = inspect.getsource(fn.py_func).split(':', 1)[1]    # past the def line
            called.update(key(other) for attr, other in bound.items()
                          if other is not fn and re.search(r'\b%s\(' % attr, body))
    return {name: len(fn.overloads) for name, fn in sorted(kernels.items())
            if name not in called}


def _conv_net(mx):
    """Convolutions: direct (3 input channels), Winograd (16), strided (data gradient by
    scatter), 1x1 (data gradient by the forward kernel); BatchNorm with and without a fused relu
    on channels-last memory; max pooling with disjoint and overlapping windows; tanh."""
    x = mx.sym.Variable('data')
    x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=16, name='c1')
    x = mx.sym.Activation(mx.sym.BatchNorm(x, name='bn1'), act_type='relu')
    x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=16, name='c2')
    x = mx.sym.Activation(mx.sym.BatchNorm(x, name='bn2'), act_type='relu')
    x = mx.sym.Convolution(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16, name='c3')
    x = mx.sym.BatchNorm(x, name='bn3')
    x = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type='max')
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max')
    x = mx.sym.Activation(x, act_type='tanh')
    x = mx.sym.Convolution(x, kernel=(1, 1), num_filter=8, name='c4')
    x = mx.sym.FullyConnected(mx.sym.flatten(x), num_hidden=10, name='fc')
    return mx.sym.SoftmaxOutput(x, name='softmax'), (16, 3, 64, 64), 10


def _plain_net(mx):
    """BatchNorm with and without a fused relu and max pooling on C-ordered (N, C, H, W) memory;
    relu and sigmoid gradients of fully connected layers."""
    x = mx.sym.Variable('data')
    x = mx.sym.BatchNorm(x, name='bn1')
    x = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type='max')
    x = mx.sym.BatchNorm(x, name='bn2')
    x = mx.sym.Activation(mx.sym.BatchNorm(x, name='bn3'), act_type='relu')
    x = mx.sym.FullyConnected(mx.sym.flatten(x), num_hidden=256, name='fc1')
    x = mx.sym.Activation(x, act_type='relu')
    x = mx.sym.FullyConnected(x, num_hidden=256, name='fc2')
    x = mx.sym.Activation(x, act_type='sigmoid')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(x, name='softmax'), (16, 16, 32, 32), 10


def _lstm_net(mx):
    """An Embedding, two unrolled LSTM layers (fused) and a softmax per step."""
    steps, vocab = 5, 50
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data, input_dim=vocab, output_dim=32, name='embed')
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=32, prefix='lstm_l%d_' % i))
    outputs, _ = stack.unroll(steps, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 32)), num_hidden=vocab,
                                 name='pred')
    net = mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name='softmax')
    return net, (16, steps), vocab


def _train(mx, build, batches=2, clip=None):
    net, shape, classes = build(mx)
    rng = np.random.RandomState(0)
    if len(shape) == 2:      # token ids and next-token labels
        data = rng.randint(0, classes, size=(shape[0] * batches,) + shape[1:]).astype('float32')
        label = rng.randint(0, classes, size=data.shape).astype('float32')
    else:
        data = rng.rand(shape[0] * batches, *shape[1:]).astype('float32')
        label = rng.randint(0, classes, size=shape[0] * batches).astype('float32')
    it = mx.io.NDArrayIter(data, label, batch_size=shape[0])
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(it, num_epoch=1, optimizer='sgd', progress_bar=False, batch_end_callback=[],
            optimizer_params=dict({'learning_rate': 0.01, 'momentum': 0.9},
                                  **({} if clip is None else {'clip_gradient': clip})))


def precompile(threads=(1, 2)):
    """Train the sample networks (with the kernels on each count of ``threads``); return the
    :func:`kernel_inventory` afterwards."""
    import mxmod as mx  # pylint: disable=import-outside-toplevel
    from mxmod.ops import jit  # pylint: disable=import-outside-toplevel
    if not jit.enabled():
        raise RuntimeError('the compiled kernels are off (numba missing, or MXMOD_NUMBA=0): '
                           'nothing to compile')
    gov = mx.threads.GOVERNOR
    mode, previous = gov.mode, gov.threads
    try:
        for count in threads:
            mx.threads.set_num_threads(count)
            for build in (_conv_net, _plain_net, _lstm_net):
                _train(mx, build)
        _train(mx, _plain_net, clip=1.0)
    finally:
        if mode == 'fixed':
            mx.threads.set_num_threads(previous)
        elif mode == 'auto':
            mx.threads.set_num_threads(None)
        else:
            gov.mode, gov.threads = mode, previous
    return kernel_inventory()


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog='python -m mxmod.tools.precompile',
                                     description="Compile mxmod's CPU kernels (numba) ahead.")
    parser.add_argument('--quiet', action='store_true', help='print only missing kernels')
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format='%(message)s')
    if not args.quiet:      # the compile notice, without the sample trainings' epoch lines
        logging.getLogger('mxmod').setLevel(logging.INFO)
    tic = time.time()
    inventory = precompile()
    missing = sorted(name for name, count in inventory.items()
                     if not count and name not in NOT_NEEDED)
    if not args.quiet:
        print('%d of %d kernels compiled or loaded from the cache in %.1f s'
              % (len(inventory) - len(missing), len(inventory), time.time() - tic))
    for name in missing:
        print('not reached by the sample networks (compiles when first used): %s' % name)
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
