"""``mx.nd.CachedOp``: a Symbol made callable on NDArrays.

Calling it runs the graph's operators imperatively, node by node, on the given arrays (the
symbol's inputs in ``list_inputs()`` order: arguments and auxiliary states as the graph meets
them). Each operator call is recorded for autograd like any ``mx.nd`` call, so gradients flow
through a CachedOp, and training mode follows ``autograd``'s, as MXNet's CachedOp does."""
from ..base import MXNetError
from .ndarray import NDArray
from .register import run_instance

__all__ = ['CachedOp']


def _input_names(op):
    """How MXNet's monitor names an operator's inputs: by argument name, or 'input<i>' for the
    operators registered without input names (the executor's table)."""
    from ..executor.monitoring import GENERIC_INPUT_NAMES  # pylint: disable=import-outside-toplevel
    names = op.list_arguments() + op.list_auxiliary_states()
    if getattr(op, 'monitor_generic_inputs', False) or op.op_name in GENERIC_INPUT_NAMES:
        return ['input%d' % i for i in range(len(names))]
    return names


class CachedOp(object):
    """A symbol compiled for imperative calls.

    Parameters
    ----------
    sym : Symbol
        The graph.
    flags : sequence of (str, value), optional
        MXNet's CachedOp flags (static_alloc, static_shape, ...). They tune memory planning in
        MXNet and do not change results; they are accepted and recorded.
    """

    def __init__(self, sym, flags=()):
        from ..symbol.symbol import Symbol  # pylint: disable=import-outside-toplevel
        if not isinstance(sym, Symbol):
            raise TypeError('CachedOp expects a Symbol, got %s' % type(sym).__name__)
        self._symbol = sym
        self._flags = [(str(k), str(v)) for k, v in flags]
        self._order = sym._topo()
        self._inputs = [n for n in self._order if n.op is None]
        self._monitor = None
        self._monitor_all = False

    def __call__(self, *args, **kwargs):
        out = kwargs.pop('out', None)
        kwargs.pop('default_ctx', None)
        if kwargs:
            raise TypeError('CachedOp.__call__ got unexpected keyword argument(s): '
                            + ', '.join(kwargs.keys()))
        if len(args) != len(self._inputs):
            raise MXNetError('CachedOp: expected %d inputs %s, got %d'
                             % (len(self._inputs), [n.name for n in self._inputs], len(args)))
        for node, arr in zip(self._inputs, args):
            if not isinstance(arr, NDArray):
                raise TypeError('CachedOp: input %r must be an NDArray, got %s'
                                % (node.name, type(arr).__name__))
        values = {(id(node), 0): arr for node, arr in zip(self._inputs, args)}
        for node in self._order:
            if node.op is None:
                continue
            ins = []
            for src, idx in node.inputs:
                key = (id(src), idx)
                if key not in values:
                    raise MXNetError('CachedOp: node %r reads output %d of %r, which is not '
                                     'visible' % (node.name, idx, src.name))
                ins.append(values[key])
            if self._monitor is not None and self._monitor_all:
                for name, arr in zip(_input_names(node.op), ins):
                    self._monitor('%s_%s' % (node.name, name), node.op.op_name, arr)
            res = run_instance(node.op, ins)
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            for i, arr in enumerate(res):
                values[(id(node), i)] = arr
                if self._monitor is not None:
                    self._monitor(node.output_name(i), node.op.op_name, arr)
        results = [values[(id(node), idx)] for node, idx in self._symbol._outputs]
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(results):
                raise MXNetError('CachedOp: %d output arrays given for %d outputs'
                                 % (len(outs), len(results)))
            for dst, val in zip(outs, results):
                dst[:] = val
            return out
        return results[0] if len(results) == 1 else results

    def _register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, NDArray)`` on every operator output (and input, with
        ``monitor_all``) during calls."""
        self._monitor = callback
        self._monitor_all = bool(monitor_all)
