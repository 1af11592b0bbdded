"""The ``Custom`` operator: runs a Python ``CustomOpProp`` / ``CustomOp`` pair (``mx.operator``)
through the operator protocol.

The table of registered properties lives here (``register_prop``) so that the operator layer does
not import ``mxmod.operator``; ``mx.operator.register`` fills it. Arrays reach the user's code as
NDArrays wrapping the device arrays without copies; outputs and input gradients are zero-filled
NDArrays the user assigns into."""
import contextlib
import traceback

import numpy as np

from ..base import MXNetError
from ..profiler.hooks import custom_op
from ..sparse_storage import empty_storage, stype_of
from .base import Operator, Param, attr_str, merge_shape, register
from .sparse_registry import StorageRule

PROPS = {}

# MXNet's integer dtype codes, as CustomOpProp.create_operator receives them
DTYPE_CODES = {'float32': 0, 'float64': 1, 'float16': 2, 'uint8': 3, 'int32': 4, 'int8': 5,
               'int64': 6, 'bool': 7}


def register_prop(reg_name, prop_cls):
    """Make ``prop_cls`` (a CustomOpProp subclass) available as ``Custom(op_type=reg_name)``."""
    PROPS[reg_name] = prop_cls


def _wrap(data, ctx):
    """NDArray view of a device array (imported late: ndarray imports the operator table)."""
    from ..ndarray.ndarray import from_xp  # pylint: disable=import-outside-toplevel
    return from_xp(data, ctx)


@contextlib.contextmanager
def user_code(op_type, what):
    """Run the user's CustomOp/CustomOpProp code; an exception other than an MXNetError surfaces
    as an MXNetError naming the operator and the step, with the user's traceback, as in MXNet."""
    try:
        yield
    except MXNetError:
        raise
    except Exception as err:  # pylint: disable=broad-except
        raise MXNetError('Error in CustomOp %r (%s): %s: %s\n%s'
                         % (op_type, what, type(err).__name__, err,
                            ''.join(traceback.format_exception(type(err), err,
                                                               err.__traceback__)))) from err


def _dtype_name(value):
    return None if value is None else np.dtype(value).name


def _split_result(ret, counts, what):
    """Split an infer_* result of 2 or 3 lists into (inputs, outputs, aux), checking the lengths."""
    if len(ret) not in (2, 3):
        raise MXNetError('Custom: %s must return 2 or 3 lists, got %d' % (what, len(ret)))
    parts = list(ret) + ([[]] if len(ret) == 2 else [])
    for part, count, label in zip(parts, counts, ('input', 'output', 'auxiliary state')):
        if len(part) != count:
            raise MXNetError('Custom: %s returned %d %s entries, expected %d'
                             % (what, len(part), label, count))
    return parts


@register
class Custom(Operator, StorageRule):
    """Adapter from a registered CustomOpProp to the operator protocol.

    Every attribute other than ``op_type`` is passed to the property's constructor as a string."""
    op_name = 'Custom'
    params = {'op_type': Param('str')}
    accepts_any_params = True      # the symbol layer hands every attribute to __init__

    def __init__(self, attrs=None):
        attrs = dict(attrs or {})
        extra = {k: attr_str(v) for k, v in attrs.items()
                 if k != 'op_type' and not (k.startswith('__') and k.endswith('__'))}
        super().__init__({k: v for k, v in attrs.items() if k not in extra})
        prop_cls = PROPS.get(self.p.op_type)
        if prop_cls is None:
            raise MXNetError('Custom: no custom operator registered as %r; registered: %s. '
                             'Decorate its CustomOpProp with mx.operator.register(%r).'
                             % (self.p.op_type, sorted(PROPS), self.p.op_type))
        self.prop = prop_cls(**extra)
        self.attrs.update(extra)
        self.is_loss = not getattr(self.prop, 'need_top_grad_', True)
        self._operators = {}

    def describe(self):
        return 'Custom(%s)' % self.p.op_type

    def list_arguments(self):
        return list(self.prop.list_arguments())

    def list_outputs(self):
        return list(self.prop.list_outputs())

    def list_auxiliary_states(self):
        return list(self.prop.list_auxiliary_states())

    def _counts(self):
        return (len(self.list_arguments()), len(self.list_outputs()),
                len(self.list_auxiliary_states()))

    # ---- inference ------------------------------------------------------------------------------
    def _prop_shapes(self, arg_shapes):
        """The property's (inputs, outputs, aux) shapes for argument shapes (lists or [])."""
        with user_code(self.p.op_type, 'infer_shape'):
            ret = self.prop.infer_shape([list(s) if s is not None else [] for s in arg_shapes])
        parts = _split_result(ret, self._counts(), 'infer_shape')
        return [[tuple(int(d) for d in s) if s is not None and len(s) else None for s in part]
                for part in parts]

    def infer_shape(self, in_shapes, out_shapes):
        n_args = self._counts()[0]
        args = list(in_shapes[:n_args])
        try:
            ins, outs, auxs = self._prop_shapes(args)
        except Exception:   # pylint: disable=broad-except
            if all(s is not None and all(s) for s in args):
                raise
            return list(in_shapes), list(out_shapes)   # not enough known yet
        name = self.describe()
        names = self.list_arguments() + self.list_auxiliary_states()
        new_in = [merge_shape(name, n, s, w) for n, s, w in zip(names, in_shapes, ins + auxs)]
        new_out = [merge_shape(name, n, s, w)
                   for n, s, w in zip(self.list_outputs(), out_shapes, outs)]
        return new_in, new_out

    def _prop_types(self, arg_types):
        with user_code(self.p.op_type, 'infer_type'):
            ret = self.prop.infer_type([None if t is None else np.dtype(t).type
                                        for t in arg_types])
        parts = _split_result(ret, self._counts(), 'infer_type')
        return [[_dtype_name(t) for t in part] for part in parts]

    def infer_type(self, in_types, out_types):
        n_args = self._counts()[0]
        if n_args and all(t is None for t in in_types[:n_args]):
            return list(in_types), list(out_types)
        try:
            ins, outs, auxs = self._prop_types(list(in_types[:n_args]))
        except Exception:   # pylint: disable=broad-except
            if all(t is not None for t in in_types[:n_args]):
                raise
            return list(in_types), list(out_types)
        merged_in = [t or w for t, w in zip(in_types, ins + auxs)]
        return merged_in, [t or w for t, w in zip(out_types, outs)]

    # ---- computation ----------------------------------------------------------------------------
    def _operator(self, octx, inputs, aux):
        """The CustomOp for this context, shapes and dtypes (created once, then reused)."""
        arrays = list(inputs) + list(aux)
        shapes = [list(a.shape) for a in arrays]
        codes = [DTYPE_CODES.get(np.dtype(a.dtype).name, -1) for a in arrays]
        key = (octx.ctx, tuple(map(tuple, shapes)), tuple(codes))
        op = self._operators.get(key)
        if op is None:
            with user_code(self.p.op_type, 'create_operator'):
                op = self.prop.create_operator(octx.ctx, shapes, codes)
            self._operators[key] = op
        octx.saved['custom_op'] = op
        return op

    def forward(self, octx, inputs, aux):
        n_out = len(self.list_outputs())
        return self._forward(octx, inputs, aux, ['default'] * n_out)

    def _forward(self, octx, inputs, aux, out_stypes):
        xp, ctx = octx.xp, octx.ctx
        op = self._operator(octx, inputs, aux)
        _, out_shapes, _ = self._prop_shapes([x.shape for x in inputs])
        _, out_types, _ = self._prop_types([x.dtype for x in inputs])
        outs = [_wrap(empty_storage(xp, st, s, t or inputs[0].dtype), ctx)
                for s, t, st in zip(out_shapes, out_types, out_stypes)]
        wrap = [_wrap(x, ctx) for x in inputs]
        with ctx, custom_op(self.p.op_type, ctx), user_code(self.p.op_type, 'forward'):
            op.forward(is_train=octx.is_train, req=['write'] * len(outs), in_data=wrap,
                       out_data=outs, aux=[_wrap(a, ctx) for a in aux])
        return [o._data for o in outs]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return self._backward(octx, out_grads, inputs, outputs, aux,
                              ['default'] * len(inputs))

    def _backward(self, octx, out_grads, inputs, outputs, aux, grad_stypes):
        xp, ctx = octx.xp, octx.ctx
        op = octx.saved.get('custom_op') or self._operator(octx, inputs, aux)
        need = list(octx.need_grad) if octx.need_grad is not None else [True] * len(inputs)
        heads = [_wrap(g if g is not None else _zeros_like(xp, o), ctx)
                 for g, o in zip(list(out_grads) + [None] * len(outputs), outputs)]
        in_grad = [_wrap(empty_storage(xp, st, x.shape, x.dtype), ctx)
                   for x, st in zip(inputs, grad_stypes)]
        with ctx, custom_op(self.p.op_type, ctx, backward=True), \
                user_code(self.p.op_type, 'backward'):
            op.backward(req=['write' if n else 'null' for n in need], out_grad=heads,
                        in_data=[_wrap(x, ctx) for x in inputs],
                        out_data=[_wrap(o, ctx) for o in outputs], in_grad=in_grad,
                        aux=[_wrap(a, ctx) for a in aux])
        return [g._data if n else None for g, n in zip(in_grad, need)]

    # ---- storage types (the property's infer_storage_type[_backward]) ----------------------------
    def forward_stypes(self, op, in_stypes):
        n_args = self._counts()[0]
        with user_code(self.p.op_type, 'infer_storage_type'):
            ret = self.prop.infer_storage_type(list(in_stypes[:n_args]))
        _, outs, _ = _split_result(ret, self._counts(), 'infer_storage_type')
        return [str(s) for s in outs]

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        return self._forward(octx, inputs, aux, out_stypes)

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        n_args = self._counts()[0]
        args, auxs = list(in_stypes[:n_args]), list(in_stypes[n_args:])
        with user_code(self.p.op_type, 'infer_storage_type_backward'):
            ret = self.prop.infer_storage_type_backward(
                list(ograd_stypes), args, list(out_stypes), ['default'] * n_args, auxs)
        if len(ret) != 5:
            raise MXNetError('Custom: infer_storage_type_backward must return 5 lists (output '
                             'gradients, inputs, outputs, input gradients, auxiliary states), '
                             'got %d' % len(ret))
        grads = list(ret[3])
        if len(grads) != n_args:
            raise MXNetError('Custom: infer_storage_type_backward returned %d input gradient '
                             'storage types, expected %d' % (len(grads), n_args))
        return [str(s) for s in grads]

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        return self._backward(octx, out_grads, inputs, outputs, aux, grad_stypes)


def _zeros_like(xp, value):
    """Zeros of ``value``'s shape, dtype and storage type."""
    return empty_storage(xp, stype_of(value), value.shape, value.dtype)
