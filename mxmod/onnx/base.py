"""Shared pieces of the ONNX converters: the optional ``onnx`` import, dtype mapping and the tables
of conversion functions (MXNet operator -> ONNX nodes, ONNX operator -> MXNet symbols)."""
import numpy as np

from ..base import MXNetError
from ..ops.base import OPS

#: the lowest ONNX opset the converters write and read
MIN_OPSET = 13
#: ONNX's "to the end" slice bounds
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

#: export conversions by MXNet operator name (canonical names, see ``mx_op_key``)
EXPORTERS = {}
#: import conversions by ONNX operator type
IMPORTERS = {}


def require_onnx():
    """Import and return the ``onnx`` package, or raise an ImportError that names the extra."""
    try:
        import onnx  # pylint: disable=import-outside-toplevel
    except ImportError as err:
        raise ImportError('mx.onnx needs the onnx package: pip install "mxmod[onnx]" '
                          '(or pip install onnx); importing it failed: %s' % err) from None
    return onnx


def default_opset():
    """The newest ONNX opset the installed onnx package knows."""
    return require_onnx().defs.onnx_opset_version()


def check_opset(opset_version):
    """Validate a requested opset (None means the installed onnx's newest) and return it."""
    newest = default_opset()
    if opset_version is None:
        return newest
    opset_version = int(opset_version)
    if not MIN_OPSET <= opset_version <= newest:
        raise MXNetError('mx.onnx: opset_version %d is not supported; expected %d to %d (the '
                         'newest the installed onnx %s knows)'
                         % (opset_version, MIN_OPSET, newest, require_onnx().__version__))
    return opset_version


def onnx_dtype(dtype):
    """The ONNX TensorProto element type of a numpy dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return require_onnx().TensorProto.BOOL
    return require_onnx().helper.np_dtype_to_tensor_dtype(dtype)


def numpy_dtype(elem_type):
    """The numpy dtype of an ONNX TensorProto element type."""
    return np.dtype(require_onnx().helper.tensor_dtype_to_np_dtype(elem_type))


def unique_name(hint, used):
    """``hint``, or ``hint_<k>`` for the first k that is not in the set ``used``; added to it."""
    name, k = hint, 0
    while name in used:
        k += 1
        name = '%s_%d' % (hint, k)
    used.add(name)
    return name


def mx_op_key(name):
    """The canonical name under which MXNet operator ``name`` (or one of its aliases) is known."""
    cls = OPS.get(name)
    return cls.op_name if cls is not None else name


def exports(*op_names):
    """Decorator: register ``fn(graph, node)`` as the export conversion of MXNet ``op_names``.

    Names of operators this build of mxmod does not have are kept under their own name, so that a
    conversion written for an operator added later is found once the operator exists."""
    def wrap(fn):
        for name in op_names:
            EXPORTERS[mx_op_key(name)] = fn
        return fn
    return wrap


def imports(*onnx_ops):
    """Decorator: register ``fn(importer, node)`` as the import conversion of ONNX ``onnx_ops``."""
    def wrap(fn):
        for name in onnx_ops:
            IMPORTERS[name] = fn
        return fn
    return wrap


def find_exporter(op_name):
    """The export conversion of an MXNet operator, or None."""
    fn = EXPORTERS.get(op_name)
    if fn is None and op_name in OPS:
        cls = OPS[op_name]
        for alias in (cls.op_name,) + tuple(cls.aliases):
            fn = fn or EXPORTERS.get(alias)
    return fn
