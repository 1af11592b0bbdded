"""``mx.onnx``: export Symbols with their parameters to ONNX models (``export_model``), and import
ONNX models back as ``(sym, arg_params, aux_params)`` (``import_model``).

The conversions need the ``onnx`` package (``pip install "mxmod[onnx]"``); it is imported when a
function is called, so ``import mxmod`` works without it."""
from .export import export_model, get_operator_support
from .import_model import import_model, get_model_metadata
# the conversion tables fill as these modules load (they do not need onnx)
from . import mx2onnx_nn, mx2onnx_tensor, mx2onnx_math, mx2onnx_softmax, mx2onnx_rnn  # noqa: F401
from . import mx2onnx_seq  # noqa: F401
from . import onnx2mx_nn, onnx2mx_tensor, onnx2mx_shape, onnx2mx_rnn  # noqa: F401

__all__ = ['export_model', 'get_operator_support', 'import_model', 'get_model_metadata']
