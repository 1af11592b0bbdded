"""``mx.operator``: operators written in Python.

Subclass :class:`CustomOpProp` (names, shape/type inference, backward dependencies) and
:class:`CustomOp` (forward/backward on NDArrays), register the property with
``@mx.operator.register('name')`` and use it as ``mx.sym.Custom(..., op_type='name')`` or
``mx.nd.Custom(..., op_type='name')``."""
from collections import namedtuple

from .base import MXNetError
from .ops.base import OPS
from .ops.custom import register_prop, PROPS
from .operator_legacy import PythonOp, NumpyOp, NDArrayOp  # noqa: F401

__all__ = ['CustomOp', 'CustomOpProp', 'register', 'get_all_registered_operators',
           'get_operator_arguments', 'OperatorArguments', 'PythonOp', 'NumpyOp', 'NDArrayOp']


class CustomOp(object):
    """Base class of a custom operator's computation."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs.

        Parameters
        ----------
        is_train : bool
            Whether this is a training pass.
        req : list of str
            How to write each output: 'null', 'write', 'inplace' or 'add' (see :meth:`assign`).
        in_data, out_data, aux : list of NDArray
            Inputs, output buffers and auxiliary states.
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the input gradients.

        Parameters
        ----------
        req : list of str
            How to write each input gradient: 'null', 'write', 'inplace' or 'add'.
        out_grad, in_data, out_data, in_grad, aux : list of NDArray
            Output gradients, inputs, outputs, input-gradient buffers and auxiliary states.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says ('null' does nothing, 'add' accumulates)."""
        if req == 'null':
            return
        if req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            dst[:] += src
        else:
            raise ValueError("req must be 'null', 'write', 'inplace' or 'add', got %r" % (req,))


class CustomOpProp(object):
    """Base class of a custom operator's properties.

    Parameters
    ----------
    need_top_grad : bool, default True
        False for loss-like operators whose backward ignores the output gradient.
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """Return ``(in_shapes, out_shapes[, aux_shapes])``; by default every output has the first
        input's shape and there are no auxiliary states."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """Return ``(in_types, out_types[, aux_types])``; by default all take the first input's."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types: only dense ('default') arrays are supported."""
        for i, stype in enumerate(in_stype):
            if stype != 'default':
                raise ValueError('infer_storage_type: input %d has storage type %r; only '
                                 "'default' is supported" % (i, stype))
        return (in_stype, ['default'] * len(self.list_outputs()),
                ['default'] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of the backward pass: everything dense ('default')."""
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        return tuple(['default'] * len(part) for part in lists)

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ['output']

    def list_arguments(self):
        """Names of the inputs (default ``['data']``)."""
        return ['data']

    def list_auxiliary_states(self):
        """Names of the auxiliary states (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the arrays backward needs: the output gradients (when ``need_top_grad``), the
        inputs and the outputs."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """Return the :class:`CustomOp` for a context, input shapes (lists of ints) and input
        dtypes (MXNet's integer dtype codes)."""
        return CustomOp()


def register(reg_name):
    """Class decorator registering a :class:`CustomOpProp` subclass as ``op_type=reg_name``.

    Parameters
    ----------
    reg_name : str

    Returns
    -------
    callable
        The decorator; it returns the class unchanged.
    """
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError('mx.operator.register(%r) expects a CustomOpProp subclass, got %r'
                            % (reg_name, prop_cls))
        register_prop(reg_name, prop_cls)
        return prop_cls
    return do_register


register('custom_op')(CustomOpProp)


def get_all_registered_operators():
    """Names of every registered operator (built-in ones and their aliases).

    Returns
    -------
    list of str
    """
    return sorted(OPS)


def get_registered_custom_ops():
    """Names registered with :func:`register` (mxmod helper)."""
    return sorted(PROPS)


OperatorArguments = namedtuple('OperatorArguments', ['narg', 'names', 'types'])


def get_operator_arguments(op_name):
    """The arguments of a registered operator: its inputs, then its parameters.

    Parameters
    ----------
    op_name : str

    Returns
    -------
    OperatorArguments
        ``narg``, ``names`` and ``types`` as MXNet describes them (inputs are
        'NDArray-or-Symbol'; parameters e.g. "{'relu', 'sigmoid'}, required" or
        'int, optional, default=1').
    """
    if op_name not in OPS:
        raise MXNetError('operator %r is not registered' % (op_name,))
    cls = OPS[op_name]
    if 'num_args' in cls.params:
        inputs, kinds = ['data'], ['NDArray-or-Symbol[]']
    else:
        inputs = list(cls.arguments) + list(cls.aux_states)
        kinds = ['NDArray-or-Symbol'] * len(inputs)
    names = inputs + list(cls.params)
    types = kinds + [decl.help_line(name).split(' : ', 1)[1] for name, decl in cls.params.items()]
    return OperatorArguments(len(names), names, types)
