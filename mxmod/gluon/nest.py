"""Nested inputs and outputs of HybridBlocks: flattening (nested lists of NDArrays/Symbols to
one list plus a format) and regrouping, and the type and context survey of the inputs."""
from ..ndarray import NDArray
from ..symbol import Symbol

__all__ = ['flatten', 'regroup', 'gather_type_ctx_info']


def gather_type_ctx_info(args):
    """(has_symbol, has_ndarray, set of contexts, first context) of nested ``args``."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if isinstance(args, Symbol):
        return True, False, set(), None
    if not isinstance(args, (list, tuple)):
        return False, False, set(), None
    has_sym = has_nd = False
    contexts, first = set(), None
    for arg in args:
        sym, arr, ctxs, ctx = gather_type_ctx_info(arg)
        has_sym, has_nd = has_sym or sym, has_nd or arr
        if first is None:
            first = ctx
        contexts |= ctxs
        if has_sym and has_nd:
            break
    return has_sym, has_nd, contexts, first


def flatten(args, what):
    """``(flat list, format)``: the format is 0 for an array, n > 1 for a Symbol with n
    outputs, -1 for None, or a list of formats for a list."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        count = len(args.list_outputs())
        return [args], count if count > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError('When hybridized, the input of HybridBlock %s must be (nested) list of '
                         'Symbol or NDArray, but got %s of type %s' % (what, args, type(args)))
    flat, fmts = [], []
    for arg in args:
        items, fmt = flatten(arg, what)
        flat.extend(items)
        fmts.append(fmt)
    return flat, fmts


def _take(args, fmt):
    if isinstance(fmt, int):
        if fmt < -1:
            raise ValueError('Unsupported encoded format %s.' % fmt)
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError('We do not support passing types that are not None when the '
                                 'initial HybridBlock has received NoneType and has been '
                                 'hybridized. Received arg = %s, fmt = %s.' % (args[0], fmt))
            return None, args[1:]
        return args[:fmt], args[fmt:]
    if not isinstance(args, (list, tuple)):
        raise ValueError('When hybridized, the output of HybridBlock must be (nested) list of '
                         'Symbol or NDArray, but got %s of type %s' % (args, type(args)))
    out = []
    for sub in fmt:
        item, args = _take(args, sub)
        out.append(item)
    return out, args


def regroup(args, fmt):
    """Inverse of ``flatten``: the nested structure ``fmt`` rebuilt from the flat ``args``."""
    return _take(args, fmt)[0]
