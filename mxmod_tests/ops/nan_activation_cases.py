"""Activations at NaN and infinities, forward and data gradient, written once for both libraries:
``run_all(mx)`` takes ``mxnet`` or ``mxmod`` and returns {case: {'fwd': [...], 'grad': [...]}}
(NaN as the string 'nan' so the result is JSON). fixtures/make_nan_activation_fixture.py runs it
on MXNet 1.9.1; test_nan_activations.py compares mxmod with that record (and with a live MXNet
when the oracle venv is there).

MXNet's CPU build sends float32 Activation(relu/sigmoid/tanh/softrelu) and LeakyReLU(leaky/elu/
gelu) of 1 to 5 axes to MKL-DNN, whose relu gives 0 for NaN; its own kernels (other dtypes, 6
axes) keep NaN. Large cases (4480 elements) reach mxmod's compiled gradient kernels."""
import numpy as np

PATTERN = np.array([np.nan, -1.0, 0.0, 2.0, np.inf, -np.inf, 3.0])
LARGE = 640        # repeats of PATTERN in the large cases (4480 elements)


def _cases(mx):
    sym = mx.sym
    act = lambda kind: lambda d: sym.Activation(d, act_type=kind)  # noqa: E731
    leaky = lambda kind, **kw: lambda d: sym.LeakyReLU(d, act_type=kind, **kw)  # noqa: E731
    conv = lambda d: sym.Convolution(d, kernel=(1, 1), num_filter=7, no_bias=True, name='c')  # noqa
    fc = lambda d: sym.FullyConnected(d, num_hidden=7, no_bias=True, name='fc')  # noqa: E731
    bn = lambda d, g: sym.BatchNorm(d, fix_gamma=False, use_global_stats=g, name='bn')  # noqa
    rnn = lambda d: sym.RNN(d, sym.Variable('p'), sym.Variable('s'), state_size=7,  # noqa: E731
                            num_layers=1, mode='rnn_relu', name='r')
    cases = {}
    for ndim in range(1, 7):
        shape = (7,) + (1,) * (ndim - 1)
        cases['relu_%dd' % ndim] = (act('relu'), shape, 'float32', False)
        cases['leaky_%dd' % ndim] = (leaky('leaky', slope=0.1), shape, 'float32', False)
        cases['elu_%dd' % ndim] = (leaky('elu', slope=0.1), shape, 'float32', False)
    for dtype in ('float64', 'float16'):
        cases['relu_' + dtype] = (act('relu'), (7,), dtype, False)
    for kind in ('leaky', 'elu', 'selu', 'gelu'):
        cases[kind + '_float64'] = (leaky(kind, slope=0.1), (7,), 'float64', False)
    for kind in ('selu', 'gelu'):
        cases[kind] = (leaky(kind), (7,), 'float32', False)
    for dtype in ('float32', 'float64'):
        cases['prelu_' + dtype] = (lambda d: sym.LeakyReLU(d, act_type='prelu', name='p'),
                                   (1, 7), dtype, False)
        cases['sym_relu_' + dtype] = (sym.relu, (7,), dtype, False)
        cases['clip_' + dtype] = (lambda d: sym.clip(d, 0, 1e30), (7,), dtype, False)
        cases['rnn_relu_' + dtype] = (rnn, (1, 1, 7), dtype, False)
    for kind in ('sigmoid', 'tanh', 'softrelu', 'softsign'):
        cases[kind] = (act(kind), (7,), 'float32', False)
    cases['relu_inference'] = (act('relu'), (7,), 'float32', True)
    cases['bn_global_relu'] = (lambda d: act('relu')(bn(d, True)), (1, 7, 1, 1), 'float32', False)
    cases['bn_train_relu'] = (lambda d: act('relu')(bn(d, False)), (1, 7, 1, 1), 'float32', False)
    cases['fc_relu'] = (lambda d: act('relu')(fc(d)), (1, 7), 'float32', False)
    cases['fc_relu_inference'] = (lambda d: act('relu')(fc(d)), (1, 7), 'float32', True)
    cases['conv_relu'] = (lambda d: act('relu')(conv(d)), (1, 7, 1, 1), 'float32', False)
    for dtype in ('float32', 'float64'):      # mxmod's compiled relu gradient
        cases['relu_large_' + dtype] = (act('relu'), (LARGE, 7), dtype, False)
    cases['relu_large_6d'] = (act('relu'), (LARGE, 7, 1, 1, 1, 1), 'float32', False)
    cases['leaky_large'] = (leaky('leaky', slope=0.1), (LARGE, 7), 'float32', False)
    return cases


def _set_params(exe):
    for name, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
        if name.endswith('gamma') and name.startswith('p'):
            arr[:] = 0.25
        elif name.endswith(('gamma', '_var')):
            arr[:] = 1
        elif name.endswith(('beta', '_mean')) or name == 's':
            arr[:] = 0
        elif name.endswith('weight'):
            arr[:] = np.eye(arr.shape[0], int(np.prod(arr.shape[1:]))).reshape(arr.shape)
        elif name == 'p':       # RNN: input weights the identity, the rest 0
            flat = np.zeros(arr.shape)
            flat[:49] = np.eye(7).ravel()
            arr[:] = flat


def _encode(arr):
    """A NaN-safe list; a large case gives its first repeat of PATTERN, after checking that all
    repeats are equal."""
    arr = np.asarray(arr, dtype=np.float64).reshape(-1)
    if arr.size > PATTERN.size:
        rows = arr.reshape(-1, PATTERN.size)
        if not all(np.array_equal(r, rows[0], equal_nan=True) for r in rows):
            return 'not periodic'
        arr = rows[0]
    return ['nan' if np.isnan(v) else float(v) for v in arr]


def decode(values):
    """The inverse of the encoding of :func:`run_all`'s results."""
    return np.array([np.nan if v == 'nan' else v for v in values], dtype=np.float64)


def run_one(mx, build, shape, dtype, inference):
    """Bind ``build(data)`` on the CPU; forward (and backward with a head gradient of ones)."""
    data = mx.sym.Variable('data')
    size = int(np.prod(shape))
    x = np.tile(PATTERN, size // PATTERN.size).reshape(shape).astype(dtype)
    extra = {'s': (1, 1, 7)} if shape == (1, 1, 7) else {}
    types = {'data': dtype, 'p': dtype, 's': dtype} if extra else {'data': dtype}
    exe = build(data).simple_bind(mx.cpu(), data=shape, type_dict=types,
                                  grad_req='null' if inference else 'write', **extra)
    _set_params(exe)
    exe.arg_dict['data'][:] = x
    exe.forward(is_train=not inference)
    result = {'fwd': _encode(exe.outputs[0].asnumpy())}
    if not inference:
        exe.backward([mx.nd.ones(exe.outputs[0].shape, dtype=dtype)])
        result['grad'] = _encode(exe.grad_dict['data'].asnumpy())
    return result


def run_all(mx):
    """Every case's results, by name."""
    return {name: run_one(mx, *spec) for name, spec in sorted(_cases(mx).items())}
