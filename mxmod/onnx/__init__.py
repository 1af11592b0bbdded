"""``mx.onnx``: export Symbols with their parameters to ONNX models (``export_model``), and import
ONNX models back as ``(sym, arg_params, aux_params)`` (``import_model``).

The conversions need the ``onnx`` package (``pip install "mxmod[onnx]"``); it is imported when a
function is called, so ``import mxmod`` works without it."""
from .export import export_model, get_operator_support
from . import mx2onnx_nn, mx2onnx_tensor, mx2onnx_math, mx2onnx_softmax, mx2onnx_rnn  # noqa: F401

__all__ = ['export_model', 'get_operator_support']
