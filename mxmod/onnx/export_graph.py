"""The ONNX graph under construction during an export: unique names, nodes, initializers, and the
helpers whose form depends on the opset (Squeeze, Split, the reductions) or on dynamic shapes."""
import numpy as np

from ..base import MXNetError
from .base import INT64_MAX, INT64_MIN, onnx_dtype, require_onnx, unique_name  # noqa: F401


def _marker_primes(count):
    """``count`` distinct primes above a million: stand-ins for dynamic dimensions."""
    out, n = [], 1000003
    while len(out) < count:
        if all(n % k for k in range(3, int(n ** 0.5) + 1, 2)):
            out.append(n)
        n += 2
    return out


MARKERS = _marker_primes(16)


def factor_dims(dims, markers):
    """Split each of ``dims`` into ``(constant, [axes])``: the dim equals the constant times the
    product of the input dims whose stand-ins (``markers[axis]``) divide it."""
    terms = []
    for dim in dims:
        axes, rest = [], int(dim)
        for axis, mark in enumerate(markers):
            while mark and rest % mark == 0 and rest >= mark:
                axes.append(axis)
                rest //= mark
        terms.append((rest, axes))
    return terms


class ExportGraph(object):
    """Nodes and initializers of the ONNX graph being written.

    Parameters
    ----------
    opset : int
        The ONNX opset the nodes are written for.
    dynamic : bool
        True when some input dimensions are left free (shapes must then be computed at run time).
    """

    def __init__(self, opset, dynamic=False):
        self.onnx = require_onnx()
        self.opset = opset
        self.dynamic = dynamic
        self.nodes = []
        self.initializers = {}
        self.inputs = []
        self.dtypes = {}
        self._used = set()
        self._shape_cache = {}

    # ---- names ----------------------------------------------------------------------------
    def fresh(self, hint):
        """A tensor/node name not used yet, ``hint`` itself when free."""
        return unique_name(hint or 'tensor', self._used)

    # ---- nodes and constants ----------------------------------------------------------------
    def add(self, op_type, inputs, outputs=1, name=None, dtype=None, **attrs):
        """Append a node; returns its output name (one output) or list of names.

        ``outputs`` is a count (names made from ``name``) or a list of names taken as given (from
        ``fresh``, or '' for an unused optional output); ``dtype`` records the outputs' type."""
        base = name or op_type.lower()
        if isinstance(outputs, int):
            outputs = [self.fresh(base if k == 0 else '%s_out%d' % (base, k))
                       for k in range(outputs)]
        else:
            outputs = list(outputs)
        node_name = self.fresh('%s/%s' % (base, op_type))
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), outputs,
                                                     name=node_name, **attrs))
        if dtype is not None:
            for out in outputs:
                self.dtypes[out] = np.dtype(dtype)
        return outputs[0] if len(outputs) == 1 else outputs

    def add_initializer(self, name, array):
        """Store ``array`` as an initializer named exactly ``name``."""
        array = np.asarray(array)
        self._used.add(name)
        self.initializers[name] = array
        self.dtypes[name] = array.dtype
        return name

    def const(self, value, dtype=None, hint='const'):
        """A new initializer holding ``value``; returns its name."""
        array = np.array(value, dtype=dtype)
        return self.add_initializer(self.fresh(hint), array)

    def ints(self, values, hint='ints'):
        """A 1-D int64 constant."""
        return self.const(np.array(list(values), dtype=np.int64).reshape(-1), hint=hint)

    def scalar(self, value, dtype, hint='scalar'):
        """A 0-d constant of ``dtype`` (for arithmetic with a tensor of that dtype)."""
        return self.const(np.array(value, dtype=dtype), hint=hint)

    def value(self, name):
        """The numpy value of an initializer, or None for a computed tensor or graph input."""
        return self.initializers.get(name)

    def dtype(self, name):
        """The recorded element type of a tensor (None when unknown)."""
        return self.dtypes.get(name)

    def cast(self, x, dtype, name=None):
        """``x`` cast to ``dtype`` (no node when it already has it)."""
        if self.dtype(x) == np.dtype(dtype):
            return x
        return self.add('Cast', [x], name=name, to=onnx_dtype(dtype), dtype=dtype)

    # ---- forms that changed between opsets ------------------------------------------------------
    def squeeze(self, x, axes, name=None):
        """Squeeze ``axes`` of ``x``."""
        return self.add('Squeeze', [x, self.ints(axes, 'axes')], name=name)

    def unsqueeze(self, x, axes, name=None):
        """Insert size-1 ``axes`` into ``x``."""
        return self.add('Unsqueeze', [x, self.ints(axes, 'axes')], name=name)

    def reduce(self, op_type, x, axes, keepdims, name=None):
        """A Reduce* node over ``axes`` (None: every axis): axes became an input of ReduceSum at
        opset 13 and of the other reductions at opset 18."""
        takes_input = self.opset >= (13 if op_type == 'ReduceSum' else 18)
        if axes is None:
            return self.add(op_type, [x], name=name, keepdims=int(keepdims))
        if takes_input:
            return self.add(op_type, [x, self.ints(axes, 'axes')], name=name,
                            keepdims=int(keepdims))
        return self.add(op_type, [x], name=name, axes=list(axes), keepdims=int(keepdims))

    def split(self, x, axis, count, outputs, sizes=None, name=None):
        """Split ``x`` along ``axis`` into ``count`` parts (equal, or of ``sizes``)."""
        inputs = [x]
        if sizes is not None:
            inputs.append(self.ints(sizes, 'split'))
        num = count if sizes is None and self.opset >= 18 else None
        out = self.add('Split', inputs, outputs=outputs, name=name, axis=axis, num_outputs=num)
        return out if isinstance(out, list) else [out]

    # ---- shapes at run time -------------------------------------------------------------------
    def shape_of(self, x):
        """The Shape of tensor ``x`` (one node per tensor)."""
        if x not in self._shape_cache:
            self._shape_cache[x] = self.add('Shape', [x], name=x + '_shape', dtype=np.int64)
        return self._shape_cache[x]

    def shape_tensor(self, x, terms, for_reshape, name):
        """An int64 shape tensor from ``terms`` (see ``factor_dims``) over the dims of ``x``.

        Constant when every dim is known; for Reshape, 0 (copy the same axis) and one -1 are used
        where they suffice; otherwise the dims are gathered from ``Shape(x)`` at run time."""
        if all(not axes for _, axes in terms):
            return self.ints([c for c, _ in terms], name + '_shape')
        values, free = [], []
        for pos, (const, axes) in enumerate(terms):
            if not axes:
                values.append(const)
            elif const == 1 and axes == [pos]:
                values.append(0 if for_reshape else 1)
            else:
                values.append(None)
                free.append(pos)
        if for_reshape and len(free) == 1:
            values[free[0]] = -1
            return self.ints(values, name + '_shape')
        if not free:
            return self.ints(values, name + '_shape')
        return self._gathered_shape(x, terms, name)

    def _gathered_shape(self, x, terms, name):
        shape = self.shape_of(x)
        pieces = []
        for const, axes in terms:
            piece = None
            for axis in axes:
                dim = self.add('Gather', [shape, self.ints([axis], 'axis')], name=name + '_dim',
                               axis=0, dtype=np.int64)
                piece = dim if piece is None else self.add('Mul', [piece, dim], name=name + '_dim')
            if piece is None:
                piece = self.ints([const], name + '_dim')
            elif const != 1:
                piece = self.add('Mul', [piece, self.ints([const], 'k')], name=name + '_dim')
            pieces.append(piece)
        return self.add('Concat', pieces, name=name + '_shape', axis=0, dtype=np.int64)


def check_static(node, what):
    """Raise when a conversion needs a shape that is only known at run time."""
    raise MXNetError('mx.onnx: cannot export %s %r with dynamic input shapes: its %s depends on a '
                     'dynamic dimension' % (node.op_name, node.name, what))
