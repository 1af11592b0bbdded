"""``mx.onnx.export_model``: write a Symbol and its parameters as an ONNX model file."""
import logging
import os

import numpy as np

from ..base import MXNetError, string_types
from .base import EXPORTERS, check_opset, require_onnx
from .export_walk import SymbolConverter


def _load_symbol(sym):
    if isinstance(sym, string_types):
        from ..symbol import load  # pylint: disable=import-outside-toplevel
        return load(sym)
    from ..symbol import Symbol  # pylint: disable=import-outside-toplevel
    if not isinstance(sym, Symbol):
        raise MXNetError('mx.onnx.export_model: sym must be a Symbol or the path of a '
                         '-symbol.json file, got %s' % type(sym).__name__)
    return sym


def _as_numpy(value):
    return value.asnumpy() if hasattr(value, 'asnumpy') else np.asarray(value)


def _load_params(params):
    """One dict name -> numpy array from a .params path, a dict, or [arg_params, aux_params]."""
    if isinstance(params, string_types):
        from ..ndarray import load  # pylint: disable=import-outside-toplevel
        params = load(params)
        if not isinstance(params, dict):
            raise MXNetError('mx.onnx.export_model: the params file holds a list of arrays, '
                             'expected a dict of named parameters')
    if isinstance(params, (list, tuple)):
        if len(params) != 2 or not all(isinstance(p, dict) for p in params):
            raise MXNetError('mx.onnx.export_model: params given as a list must be '
                             '[arg_params, aux_params], got %d items' % len(params))
        merged = dict(params[0])
        merged.update(params[1])
        params = merged
    if not isinstance(params, dict):
        raise MXNetError('mx.onnx.export_model: params must be a dict, [arg_params, aux_params] '
                         'or the path of a .params file, got %s' % type(params).__name__)
    out = {}
    for name, value in params.items():
        if name.startswith(('arg:', 'aux:')):
            name = name[4:]
        out[name] = _as_numpy(value)
    return out


def _input_spec(converter, in_shapes, in_types, dynamic, dynamic_input_shapes):
    names = converter.input_names()
    if in_shapes is None:
        raise MXNetError('mx.onnx.export_model: in_shapes is required: give one shape for each '
                         'input %s' % names)
    in_shapes = [tuple(int(d) for d in s) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    in_types = [np.dtype(t) for t in in_types]
    if len(in_shapes) != len(names) or len(in_types) != len(names):
        raise MXNetError('mx.onnx.export_model: the model has %d inputs %s (parameters and '
                         'implicit labels excluded) but %d in_shapes and %d in_types were given'
                         % (len(names), names, len(in_shapes), len(in_types)))
    if not dynamic:
        if dynamic_input_shapes is not None:
            raise MXNetError('mx.onnx.export_model: dynamic_input_shapes is given but dynamic is '
                             'False; pass dynamic=True')
        return in_shapes, in_types, None
    if dynamic_input_shapes is None:
        dynamic_input_shapes = [tuple(None for _ in s) for s in in_shapes]
    if len(dynamic_input_shapes) != len(in_shapes):
        raise MXNetError('mx.onnx.export_model: %d dynamic_input_shapes for %d inputs'
                         % (len(dynamic_input_shapes), len(in_shapes)))
    dyn = []
    for name, static, shape in zip(names, in_shapes, dynamic_input_shapes):
        shape = tuple(shape)
        if len(shape) != len(static) or any(isinstance(d, int) and d != s
                                             for d, s in zip(shape, static)):
            raise MXNetError('mx.onnx.export_model: dynamic shape %s of input %r does not match '
                             'its shape %s' % (shape, name, static))
        dyn.append(shape)
    return in_shapes, in_types, dyn


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path='model.onnx',
                 verbose=False, dynamic=False, dynamic_input_shapes=None,
                 run_shape_inference=False, input_type=None, input_shape=None,
                 large_model=False, opset_version=None):
    """Export a Symbol and its parameters as an ONNX model file.

    Parameters
    ----------
    sym : Symbol or str
        The network, or the path of its ``-symbol.json`` file.
    params : dict, list or str
        The parameters: a dict of name to NDArray (arguments and auxiliary states, optionally with
        ``arg:``/``aux:`` prefixes), ``[arg_params, aux_params]``, or the path of a ``.params``
        file.
    in_shapes : list of tuple
        One shape per input of the model (its variables that are neither parameters nor the
        labels of loss layers), in the order of ``sym.list_inputs()``.
    in_types : numpy dtype or list of numpy dtype
        The input dtypes (one for all, or one per input).
    onnx_file_path : str
        Where to write the model.
    verbose : bool
        Log each converted node.
    dynamic : bool
        Leave input dimensions free (all of them, or those given by ``dynamic_input_shapes``).
    dynamic_input_shapes : list of tuple
        Per input, its shape with None (or a name) for each free dimension, e.g.
        ``[(None, 3, 224, 224)]`` for a free batch size.
    run_shape_inference : bool
        Annotate the model with ONNX's own shape inference (kept without it when that fails).
    input_type, input_shape :
        Old names of ``in_types`` and ``in_shapes``; they take precedence when given.
    large_model : bool
        Store the weights in a separate file ``<onnx_file_path>.data`` next to the model (for
        models over protobuf's 2 GB limit).
    opset_version : int, optional
        The ONNX opset to write (13 up to the newest the installed onnx knows, the default).

    Returns
    -------
    str
        ``onnx_file_path``.
    """
    onnx = require_onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    opset = check_opset(opset_version)
    sym = _load_symbol(sym)
    params = _load_params(params)
    converter = SymbolConverter(sym, params, opset, verbose=verbose)
    in_shapes, in_types, dyn = _input_spec(converter, in_shapes, in_types, dynamic,
                                           dynamic_input_shapes)
    graph = converter.convert(in_shapes, in_types, dyn)
    opsets = [onnx.helper.make_opsetid('', opset)]
    model = onnx.helper.make_model(graph, producer_name='mxmod', opset_imports=opsets)
    # the oldest IR version that holds this opset, so that older runtimes read the file too
    model.ir_version = max(7, onnx.helper.find_min_ir_version_for(opsets))
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as err:  # pylint: disable=broad-except
            logging.info('ONNX shape inference failed (%s); the model is written without it', err)
    _save(onnx, model, onnx_file_path, large_model)
    logging.info('Exported the model with input shapes %s to %s', in_shapes, onnx_file_path)
    return onnx_file_path


def _save(onnx, model, path, large_model):
    if large_model:
        location = os.path.basename(path) + '.data'
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=location, size_threshold=1024)
        onnx.checker.check_model(path)
    else:
        onnx.checker.check_model(model)
        onnx.save_model(model, path)


def get_operator_support(opset_version=None):
    """Names of the MXNet operators that ``export_model`` converts (at any supported opset).

    Parameters
    ----------
    opset_version : int, optional
        Checked to be supported; every conversion covers opsets 13 to the newest.

    Returns
    -------
    list of str
    """
    check_opset(opset_version)
    return sorted(EXPORTERS)
