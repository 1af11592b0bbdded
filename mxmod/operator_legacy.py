"""MXNet's deprecated Python operator API (``mx.operator.PythonOp``, ``NumpyOp``, ``NDArrayOp``),
kept for old scripts: ``op.get_symbol(*inputs)`` makes a symbol running the object's ``forward``
and ``backward`` (on numpy arrays for NumpyOp, on NDArrays for NDArrayOp), carried by the
``Custom`` operator under a name registered for the object."""
import itertools
import warnings

import numpy as np

__all__ = ['PythonOp', 'NumpyOp', 'NDArrayOp']

_COUNTER = itertools.count()


class PythonOp(object):
    """Base class of the deprecated Python operators.

    Parameters
    ----------
    need_top_grad : bool
        What ``need_top_grad()`` returns (False for loss layers: no head gradient is used).
    """

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn('PythonOp has been deprecated. Please use CustomOp')

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A symbol applying this operator to the input symbols ``args``."""
        from .ops.custom import register_prop  # pylint: disable=import-outside-toplevel
        name = '_python_op_%s_%d' % (type(self).__name__, next(_COUNTER))
        register_prop(name, _property_for(self))
        from .symbol import Custom  # pylint: disable=import-outside-toplevel,no-name-in-module
        return Custom(*args, op_type=name, **kwargs)

    def forward(self, in_data, out_data):
        """Compute ``out_data`` from ``in_data`` (override; default: copy the first input)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Compute ``in_grad`` (override; default: ones)."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """(input shapes, output shapes) from the input shapes (default: one output like the
        first input)."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Output names."""
        return ['output']

    def list_arguments(self):
        """Input names."""
        return ['data']

    def need_top_grad(self):
        """Whether backward uses the output gradient."""
        return self.need_top_grad_

    # how the arrays reach forward/backward: numpy copies (NumpyOp) or NDArrays (NDArrayOp)
    _as_numpy = True


class NumpyOp(PythonOp):
    """A Python operator whose forward/backward receive numpy arrays (writes into ``out_data``
    and ``in_grad`` are copied back)."""


class NDArrayOp(PythonOp):
    """A Python operator whose forward/backward receive NDArrays."""
    _as_numpy = False

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays backward reads (default: all of them)."""
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        return deps + list(in_data) + list(out_data)


def _call(op, method, groups, written):
    """Run ``op.<method>`` on the NDArray ``groups`` (as numpy copies for NumpyOp), copying the
    groups at the indices ``written`` back."""
    if not op._as_numpy:
        getattr(op, method)(*groups)
        return
    hosts = [[a.asnumpy() for a in group] for group in groups]
    getattr(op, method)(*hosts)
    for index in written:
        for dst, src in zip(groups[index], hosts[index]):
            dst[:] = np.asarray(src)


def _property_for(op):
    """A CustomOpProp class whose operator runs ``op``."""
    from .operator import CustomOp, CustomOpProp  # pylint: disable=import-outside-toplevel

    class _Run(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            _call(op, 'forward', [in_data, out_data], [1])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            _call(op, 'backward', [out_grad, in_data, out_data, in_grad], [3])

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=op.need_top_grad())

        def list_arguments(self):
            return op.list_arguments()

        def list_outputs(self):
            return op.list_outputs()

        def infer_shape(self, in_shape):
            return op.infer_shape(in_shape)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Run()
    return _Prop
