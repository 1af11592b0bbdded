"""A transcript of Gluon's Block and Parameter behaviour: each step appends a line (values,
reprs, names, or an error's type and message). The fixture generator records it with real
MXNet 1.9.1 and the test compares mxmod's transcript line by line."""
import contextlib
import io
import warnings

import numpy as np


def _attempt(lines, label, func):
    try:
        value = func()
    except Exception as err:  # pylint: disable=broad-except
        lines.append('%s -> %s: %s' % (label, _builtin_type(err), str(err).split('\n')[0]))
        return None
    lines.append('%s -> %s' % (label, _show(value)))
    return value


def _builtin_type(err):
    """AssertionError, MXNetError or the built-in class of ``err``: mxmod's errors for the
    checks MXNet asserts are AssertionErrors that are also MXNetErrors."""
    if isinstance(err, AssertionError):
        return 'AssertionError'
    if any(cls.__name__ == 'MXNetError' for cls in type(err).__mro__):
        return 'MXNetError'
    return next(cls.__name__ for cls in type(err).__mro__ if cls.__module__ == 'builtins')


def _show(value):
    if hasattr(value, 'asnumpy'):
        arr = value.asnumpy()
        return 'array%s %s' % (list(arr.shape), np.round(arr.astype(np.float64), 5).tolist())
    if isinstance(value, (list, tuple)) and value and hasattr(value[0], 'asnumpy'):
        return [_show(v) for v in value]
    return repr(value)


def _warned(lines, label, func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        func()
    messages = [str(w.message) for w in caught if not issubclass(w.category, (
        DeprecationWarning, ImportWarning, ResourceWarning, PendingDeprecationWarning))]
    lines.append('%s warned %s' % (label, messages))


def parameters(mx, lines):
    """Parameter and ParameterDict."""
    param = mx.gluon.Parameter('weight', shape=(2, 3), init=mx.init.Constant(0.5))
    _attempt(lines, 'data before init', param.data)
    param.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    _attempt(lines, 'list_ctx', param.list_ctx)
    _attempt(lines, 'data cpu1', lambda: param.data(mx.cpu(1)))
    _attempt(lines, 'data cpu2', lambda: param.data(mx.cpu(2)))
    _attempt(lines, 'list_grad', param.list_grad)
    _warned(lines, 'initialize again', param.initialize)
    param.set_data(mx.nd.ones((2, 3)) * 2)
    _attempt(lines, 'list_data after set_data', param.list_data)
    _attempt(lines, 'set_data wrong shape', lambda: param.set_data(mx.nd.ones((3, 3))))
    param.reset_ctx(mx.cpu(0))
    _attempt(lines, 'after reset_ctx', lambda: (param.list_ctx(), param.data()))
    param.cast('float64')
    _attempt(lines, 'cast', lambda: (param.dtype, param.data().dtype, param.grad().dtype))
    param.grad_req = 'null'
    _attempt(lines, 'grad with null', param.grad)
    deferred = mx.gluon.Parameter('d', shape=(0, 4), allow_deferred_init=True)
    deferred.initialize(init=mx.init.One())
    _attempt(lines, 'deferred data', deferred.data)
    _attempt(lines, 'deferred list_ctx', deferred.list_ctx)
    deferred.shape = (3, 4)
    deferred._finish_deferred_init()  # pylint: disable=protected-access
    _attempt(lines, 'deferred finished', deferred.data)
    _attempt(lines, 'unknown shape', lambda: mx.gluon.Parameter('u', shape=(0, 2)).initialize())
    _attempt(lines, 'bad grad_req', lambda: mx.gluon.Parameter('b', grad_req='sometimes'))
    const = mx.gluon.Constant('const', [[1, 2], [3, 4]])
    const.initialize()
    _attempt(lines, 'constant', lambda: (repr(const), const.grad_req, const.data()))
    _warned(lines, 'constant grad_req', lambda: setattr(const, 'grad_req', 'write'))
    pdict = mx.gluon.ParameterDict('net_')
    first = pdict.get('w', shape=(3, 0))
    _attempt(lines, 'get merges shape', lambda: (pdict.get('w', shape=(3, 5)) is first,
                                                first.shape))
    _attempt(lines, 'get conflict', lambda: pdict.get('w', shape=(4, 5)))
    _attempt(lines, 'get_constant', lambda: repr(pdict.get_constant('c', [1, 2])))
    _attempt(lines, 'get_constant missing', lambda: pdict.get_constant('missing'))
    _attempt(lines, 'repr', lambda: repr(pdict))
    pdict.setattr('lr_mult', 0.5)
    _attempt(lines, 'setattr', lambda: [p.lr_mult for p in pdict.values()])
    pdict.initialize(mx.init.Zero())
    _attempt(lines, 'dict list_ctx', pdict.list_ctx)
    _attempt(lines, 'keys', lambda: list(pdict.keys()))


def blocks(mx, lines):
    """Names, children, collect_params, hooks, errors of Blocks and HybridBlocks."""
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Conv2D(4, 3, activation='relu'))
            net.add(mx.gluon.nn.BatchNorm())
            net.add(mx.gluon.nn.Dense(2))
        other = mx.gluon.nn.Dense(3, prefix='custom_')
        shared = mx.gluon.nn.Dense(3, params=other.collect_params())
    _attempt(lines, 'prefixes', lambda: [net.prefix, net[0].prefix, net[0].act.prefix,
                                         net[2].name, other.prefix, shared.prefix])
    _attempt(lines, 'shared params', lambda: list(shared.collect_params().keys()))
    _attempt(lines, 'select', lambda: list(net.collect_params('.*weight|.*bias').keys()))
    _attempt(lines, 'slice', lambda: repr(net[1:]))
    _attempt(lines, 'len', lambda: len(net))
    net.initialize(mx.init.Xavier())
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        net.summary(mx.nd.ones((2, 3, 6, 6)))
    lines.extend(buf.getvalue().split('\n'))
    _attempt(lines, 'repr', lambda: repr(net))
    _attempt(lines, 'params repr', lambda: repr(net.collect_params()))
    seen = []
    pre = net.register_forward_pre_hook(lambda blk, inp: seen.append(('pre', blk.name)))
    post = net[2].register_forward_hook(lambda blk, inp, out: seen.append(('post', out.shape)))
    net(mx.nd.ones((1, 3, 6, 6)))
    pre.detach()
    net(mx.nd.ones((1, 3, 6, 6)))
    post.detach()
    lines.append('hooks %r' % seen)
    _attempt(lines, 'apply', lambda: net.apply(lambda b: seen.append(b.name)) and seen[-5:])
    _attempt(lines, 'add plain Block', lambda: net.add(mx.gluon.nn.Lambda('relu')))
    _attempt(lines, 'retype child', lambda: setattr(net, 'x', 1) or setattr(
        net[2], 'act', mx.gluon.nn.Dense(1)))
    _attempt(lines, 'mixed inputs', lambda: net[2](mx.nd.ones((1, 2)), mx.sym.var('a')))
    sym = net(mx.sym.var('data'))
    _attempt(lines, 'symbolic call', lambda: (sym.list_arguments(), sym.list_outputs()))
    net.cast('float64')
    _attempt(lines, 'cast', lambda: net(mx.nd.ones((1, 3, 6, 6), dtype='float64')).dtype)
    _attempt(lines, 'cast params', lambda: [p.dtype for p in net.collect_params().values()])
    net.hybridize()
    _attempt(lines, 'hybridized float64', lambda: net(mx.nd.ones((1, 3, 6, 6),
                                                                 dtype='float64')).shape)
    _attempt(lines, 'wrong structure', lambda: net(mx.nd.ones((1, 3, 6, 6), dtype='float64'),
                                                  mx.nd.ones((1,), dtype='float64')))
    with mx.name.NameManager():
        dense = mx.gluon.nn.Dense(4)
    dense.initialize()
    dense.infer_shape(mx.nd.ones((2, 7)))
    _attempt(lines, 'infer_shape', lambda: dense.weight.shape)
    _warned(lines, 'unused parameter', lambda: _unused(mx))


def _unused(mx):
    class Unused(mx.gluon.HybridBlock):
        """A block with a Parameter its computation does not read."""

        def __init__(self):
            super(Unused, self).__init__(prefix='unused_')
            with self.name_scope():
                self.extra = self.params.get('extra', shape=(2,))

        def hybrid_forward(self, F, x, extra):  # pylint: disable=invalid-name,unused-argument
            return x * 2

    block = Unused()
    block.initialize()
    block.hybridize()
    block(mx.nd.ones((2,)))


def autograd_modes(mx, lines):
    """grad_req 'add' accumulation, zero_grad, and training mode inside hybridized blocks."""
    with mx.name.NameManager():
        dense = mx.gluon.nn.Dense(2, in_units=3)
    dense.initialize(mx.init.One())
    dense.collect_params().setattr('grad_req', 'add')
    for _ in range(2):
        with mx.autograd.record():
            out = dense(mx.nd.array([[1, 2, 3]])).sum()
        out.backward()
    _attempt(lines, 'accumulated', dense.weight.grad)
    dense.collect_params().zero_grad()
    _attempt(lines, 'zero_grad', dense.weight.grad)
    with mx.name.NameManager():
        norm = mx.gluon.nn.BatchNorm(in_channels=2)
    norm.initialize()
    norm.hybridize()
    x = mx.nd.array([[1, 2], [3, 6]])
    with mx.autograd.record():
        norm(x)
    _attempt(lines, 'running stats', lambda: (norm.running_mean.data(),
                                              norm.running_var.data()))
    _attempt(lines, 'predict', lambda: norm(x))


def transcript(mx):
    """All lines."""
    lines = []
    for part in (parameters, blocks, autograd_modes):
        lines.append('== %s' % part.__name__)
        part(mx, lines)
    return lines
