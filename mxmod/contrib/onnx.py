"""``mx.contrib.onnx``: MXNet 1.9.1's older home of the ONNX functions (``import_model``,
``get_model_metadata``, ``export_model``); they are those of ``mx.onnx``."""
from ..onnx import export_model, get_model_metadata, import_model

__all__ = ['import_model', 'get_model_metadata', 'export_model']
