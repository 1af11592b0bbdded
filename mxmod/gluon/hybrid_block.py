"""Gluon's HybridBlock: ``hybrid_forward(F, x, *args, **params)`` runs with ``F = mx.nd`` on
NDArrays, or builds a graph with ``F = mx.sym``. After ``hybridize()`` the graph is built once
and run through mxmod's CachedOp (recorded operator by operator, so autograd sees it), which
gives the same outputs and gradients as the imperative calls."""
import warnings

from .. import ndarray, symbol
from ..ndarray import NDArray
from ..ndarray.cached_op import CachedOp
from .block import Block
from .nest import flatten, gather_type_ctx_info, regroup
from .parameter import DeferredInitializationError

__all__ = ['HybridBlock']


class HybridBlock(Block):
    """A Block whose computation ``hybrid_forward`` works on both NDArrays and Symbols, so it
    can be hybridized (run as one cached graph) and exported.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    # ---- the graph --------------------------------------------------------
    def _get_graph(self, *args):
        if not self._cached_graph:
            flat_args, self._in_format = flatten(args, 'input')
            real = sum(arg is not None for arg in flat_args)
            if real == 0:
                raise ValueError('All args are None and we do not support such a case. '
                                 'Received args=%s' % (args,))
            inputs, sym_inputs = [], []
            for arg in flat_args:
                if arg is None:
                    inputs.append(None)
                    continue
                var = symbol.var('data%d' % len(sym_inputs) if real > 1 else 'data')
                inputs.append(var)
                sym_inputs.append(var)
            grouped = regroup(inputs, self._in_format)
            params = {name: param.var() for name, param in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped, **params)
            out, self._out_format = flatten(out, 'output')
            self._cached_graph = sym_inputs, symbol.Group(out)
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        data_names = {var.name: i for i, var in enumerate(data)}
        input_names = out.list_inputs()
        expected = set(input_names)
        params = self.collect_params()
        unknown = [name for name in expected if name not in params and name not in data_names]
        if unknown:
            raise AssertionError('Unknown input to HybridBlock: %s' % unknown[0])
        if any(name not in expected for name in data_names):
            unused = ', '.join('%d-th' % i for name, i in data_names.items()
                               if name not in expected)
            warnings.warn('The %s input to HybridBlock is not used by any computation. Is this '
                          'intended?' % unused, stacklevel=4)
        unused = [name for name in params.keys() if name not in expected]
        if unused:
            warnings.warn('Parameter %s is not used by any computation. Is this intended?'
                          % ', '.join(unused), stacklevel=4)
        flat_args, _ = flatten(args, 'input')
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*flat_args)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()  # pylint: disable=protected-access
        self._cached_op_args = [(True, data_names[name]) if name in data_names
                                else (False, params[name]) for name in input_names]
        data_indices = [i for i, (is_arg, _) in enumerate(self._cached_op_args) if is_arg]
        param_indices = [i for i, (is_arg, _) in enumerate(self._cached_op_args) if not is_arg]
        flags = [('data_indices', data_indices), ('param_indices', param_indices)] + self._flags
        self._cached_op = CachedOp(out, flags)

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as err:
            raise ValueError('Deferred initialization failed because shape cannot be inferred. '
                             '%s' % err) from err

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache(*args)
        if self._callback:
            self._cached_op._register_op_hook(self._callback, self._monitor_all)  # pylint: disable=protected-access
        flat_args, fmt = flatten(args, 'input')
        if fmt != self._in_format:
            if not _compatible_formats(fmt, self._in_format):
                raise ValueError('The argument structure of HybridBlock does not match the '
                                 'cached version. Stored format = %s, input format = %s'
                                 % (fmt, self._in_format))
        present = [arg for arg in flat_args if arg is not None]
        cargs = [present[item] if is_arg else item.data()
                 for is_arg, item in self._cached_op_args]
        out = self._cached_op(*cargs)
        if isinstance(out, NDArray):
            out = [out]
        return regroup(out, self._out_format)

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError('Children of HybridBlock must also be HybridBlock, but %s has type '
                             '%s. If you are using Sequential, please try HybridSequential '
                             'instead.' % (block, type(block)))
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Run this block (and its HybridBlock children) as one cached graph from the next call.

        Parameters
        ----------
        active : bool, default True
            False turns hybridization off again.
        backend : str, optional
            Not supported (MXNet's subgraph backends are outside mxmod); must be None.
        clear : bool, default True
            Drop the graph cached so far.
        static_alloc, static_shape : bool, default False
        inline_limit : int, default 2
        forward_bulk_size, backward_bulk_size : int, optional
            MXNet's memory and scheduling hints; recorded as CachedOp flags (they do not
            change results).
        """
        if backend is not None:
            raise ValueError('hybridize(backend=%r): subgraph backends are not available in '
                             'mxmod; call hybridize() without backend' % (backend,))
        self._active = active
        self._flags = [('static_alloc', static_alloc), ('static_shape', static_shape),
                       ('inline_limit', inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(('forward_bulk_size', forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(('backward_bulk_size', backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn('"%s" is being hybridized while still having forward hook/pre-hook. '
                          'If "%s" is a child of HybridBlock, the hooks will not take effect.'
                          % (self, self))
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, **kwargs)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat_args, _ = flatten(args, 'input')
        present = [arg for arg in flat_args if arg is not None]
        with warnings.catch_warnings(record=True) as caught:
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{var.name: getattr(arr, attr) for var, arr in zip(inputs, present)})
        if arg_attrs is None:
            raise ValueError(str(caught[0].message) if caught else
                             '%s could not determine every input of %s'
                             % (infer_fn, self.name))
        found = dict(zip(out.list_arguments(), arg_attrs))
        found.update(zip(out.list_auxiliary_states(), aux_attrs))
        for param in self.collect_params().values():
            if param.name in found:
                setattr(param, attr, found[param.name])

    def infer_shape(self, *args):
        """Infer the shapes of the Parameters from the inputs' shapes."""
        self._infer_attrs('infer_shape', 'shape', *args)

    def infer_type(self, *args):
        """Infer the dtypes of the Parameters from the inputs' dtypes."""
        self._infer_attrs('infer_type', 'dtype', *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write the cached graph to ``path-symbol.json`` and the Parameters to
        ``path-%04d.params`` (names prefixed 'arg:' / 'aux:'), loadable by mx.mod.Module,
        ``mx.model.load_checkpoint`` and ``SymbolBlock.imports``.

        Parameters
        ----------
        path : str
        epoch : int, default 0
        remove_amp_cast : bool, default True
        """
        if not self._cached_graph:
            raise RuntimeError('Please first call block.hybridize() and then run forward with '
                               'this block at least once before calling export.')
        sym = self._cached_graph[1]
        sym.save('%s-symbol.json' % path, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arrays = {}
        params = [item for is_arg, item in self._cached_op_args if not is_arg] or \
            [param for param in self.collect_params().values()
             if param.name in arg_names or param.name in aux_names]
        for param in params:
            if param.name in arg_names:
                arrays['arg:%s' % param.name] = param._reduce()  # pylint: disable=protected-access
            elif param.name in aux_names:
                arrays['aux:%s' % param.name] = param._reduce()  # pylint: disable=protected-access
            else:
                warnings.warn('Parameter "%s" is not found in the graph. ' % param.name,
                              stacklevel=3)
        ndarray.save('%s-%04d.params' % (path, epoch), arrays)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` on every operator output (and input, with
        ``monitor_all``) of the hybridized graph."""
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    # ---- calls -------------------------------------------------------------
    def forward(self, x, *args):
        """Run ``hybrid_forward`` with ``F = mx.nd`` (through the cached graph when
        hybridized), or build its symbols with ``F = mx.sym`` for Symbol inputs."""
        has_sym, has_nd, contexts, first_ctx = gather_type_ctx_info([x] + list(args))
        if has_sym and has_nd:
            raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols types '
                             'for the input. Please check the type of the args.\n')
        if not has_sym and not has_nd:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the '
                             'input. Please check the type of the args.\n')
        if has_nd:
            if self._active:
                if len(contexts) > 1:
                    raise ValueError('Find multiple contexts in the input, After hybridized, the '
                                     'HybridBlock only supports one input context. You can '
                                     'print the ele.ctx in the input arguments to inspect their '
                                     'contexts. Find all contexts = %s' % contexts)
                with first_ctx:
                    return self._call_cached_op(x, *args)
            with first_ctx:
                try:
                    params = {k: v.data(first_ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for param in self.params.values():
                        param._finish_deferred_init()  # pylint: disable=protected-access
                    params = {k: v.data(first_ctx) for k, v in self._reg_params.items()}
                return self.hybrid_forward(ndarray, x, *args, **params)
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):  # pylint: disable=invalid-name
        """The computation, with ``F`` either mx.nd or mx.sym; defined by subclasses."""
        raise NotImplementedError('%s does not define hybrid_forward()' % type(self).__name__)


def _compatible_formats(fmt, stored):
    """Input formats that differ only by trailing None arguments are compatible."""
    if len(stored) > len(fmt):
        return fmt == stored[:len(fmt)] and all(f == -1 for f in stored[len(fmt):])
    if len(stored) < len(fmt):
        return fmt[:len(stored)] == stored and all(f == -1 for f in fmt[len(stored):])
    return False
