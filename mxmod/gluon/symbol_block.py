"""Gluon's SymbolBlock: a HybridBlock made from an existing Symbol (e.g. one exported by
``HybridBlock.export`` or saved by a Module), its free variables becoming Parameters."""
import copy

import numpy as np

from .. import symbol
from ..base import MXNetError, mx_real_t
from ..ndarray import NDArray
from ..symbol import Symbol
from .hybrid_block import HybridBlock
from .nest import flatten, regroup
from .parameter import CheckError
from .parameter_dict import ParameterDict

__all__ = ['SymbolBlock']


def _common_prefix(names):
    if not names:
        return ''
    prefix = names[0]
    for name in names[1:]:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _infer_param_types(inputs, out, arg_names, aux_names, default=mx_real_t):
    """dtypes of the arguments and auxiliary states, inferred from the inputs' declared
    dtypes where possible, else ``default``."""
    arg_types = aux_types = None
    known = {}
    for var in inputs:
        types = var.infer_type()[0]
        if not types or types[0] is None:
            known = None
            break
        known[var.name] = types[0]
    if known is not None:
        try:
            arg_types, _, aux_types = out.infer_type(**known)
        except MXNetError:
            arg_types = aux_types = None
    if arg_types is None or len(arg_types) != len(arg_names):
        arg_types = [default] * len(arg_names)
    if aux_types is None or len(aux_types) != len(aux_names):
        aux_types = [default] * len(aux_names)
    return arg_types, aux_types


class SymbolBlock(HybridBlock):
    """Run a Symbol as a Block.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
    inputs : Symbol or list of Symbol
        The variables fed by the call's arguments; every other variable is a Parameter.
    params : ParameterDict, optional
        Parameters to reuse (looked up by name before new ones are created).
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from a ``-symbol.json`` file (and its ``.params`` file).

        Parameters
        ----------
        symbol_file : str
        input_names : str or list of str
        param_file : str, optional
        ctx : Context or list of Context, optional
        allow_missing, ignore_extra : bool, default False

        Returns
        -------
        SymbolBlock
        """
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(name, dtype=mx_real_t) for name in input_names]
        else:
            inputs = [symbol.var(name) for name in input_names]
        block = SymbolBlock(sym, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source='saved')
        return block

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = flatten(inputs, 'input')
        out, self._out_format = flatten(outputs, 'output')
        input_names = set()
        for var in syms:
            if len(var.get_internals().list_outputs()) != 1:
                raise CheckError('Input symbols must be variable, but %s is an output of '
                                 'operators' % var)
            input_names.add(var.name)
        for item in out:
            for internal in item.get_internals():
                if internal.attr('__storage_type__') == '1':
                    raise CheckError("SymbolBlock doesn't support Parameter '%s' because its "
                                     "storage type is 'row_sparse'." % internal.name)
        out = symbol.Group(out) if len(out) > 1 else out[0]
        arg_names = out.list_arguments()
        aux_names = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_names, aux_names)
        for name, dtype in zip(arg_names, arg_types):
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True, dtype=dtype)
        for name, dtype in zip(aux_names, aux_types):
            if name not in input_names:
                self.params.get(name, grad_req='null', allow_deferred_init=True, dtype=dtype)
        self._cached_graph = syms, out
        cut = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[cut:]: value for key, value in self._params.items()}

    def __repr__(self):
        inputs, out = self._cached_graph
        return '%s(\n%s : %d -> %d\n)' % (type(self).__name__, out, len(inputs),
                                          len(out.list_outputs()))

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise CheckError('HybridBlock requires the first argument to forward be either '
                             'Symbol or NDArray, but got %s' % type(x))
        flat, fmt = flatten([x] + list(args), 'input')
        if fmt != self._in_format:
            raise CheckError('Invalid input format')
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{var.name: value for var, value in zip(self._cached_graph[0], flat)})  # pylint: disable=protected-access
        return regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name != 'float16':
            return
        # BatchNorm keeps its statistics and affine parameters in float32
        names = self._cached_graph[1].get_internals().list_inputs()
        for stats, siblings in (('running_var', ('running_mean', 'gamma', 'beta')),
                                ('moving_var', ('moving_mean', 'gamma', 'beta'))):
            for name in names:
                if not name.endswith(stats):
                    continue
                base = name[:-len(stats)]
                group = [name] + [base + sib for sib in siblings]
                if all(item in names for item in group):
                    for item in group:
                        self.params.get(item).cast('float32')

    def hybrid_forward(self, F, x, *args, **kwargs):  # pylint: disable=invalid-name
        raise NotImplementedError('SymbolBlock runs its symbol; it has no hybrid_forward')

    def reset_ctx(self, ctx):
        """Move every Parameter (those the cached graph uses included) to ``ctx``."""
        params = self.collect_params()
        for is_arg, item in self._cached_op_args:
            if not is_arg and item.name not in params:
                item.reset_ctx(ctx)
        for param in params.values():
            param.reset_ctx(ctx)
