"""``import_model``: read an ONNX model as ``(sym, arg_params, aux_params)`` for Module.

Every ONNX tensor becomes either a Symbol or a known numpy value (initializers, Constant nodes and
whatever is computed from known values only, which is folded with onnx's reference evaluator:
the shape arithmetic exporters emit). Known values that feed an operator as data become
parameters, named after their initializer."""
import numpy as np

from ..base import MXNetError, string_types
from .base import IMPORTERS, numpy_dtype, require_onnx, unique_name
from .import_dims import FOLLOWED, DimSources


class OnnxNode(object):
    """One ONNX node as a conversion sees it: op_type, name, inputs, outputs, attrs (a dict)."""
    __slots__ = ('op_type', 'name', 'inputs', 'outputs', 'attrs', 'proto')

    def __init__(self, proto, onnx):
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = {}
        for attr in proto.attribute:
            value = onnx.helper.get_attribute_value(attr)
            if isinstance(value, bytes):
                value = value.decode('utf-8')
            elif isinstance(value, list) and value and isinstance(value[0], bytes):
                value = [v.decode('utf-8') for v in value]
            self.attrs[attr.name] = value

    def attr(self, name, default=None):
        """An attribute's value, or ``default``."""
        return self.attrs.get(name, default)


def _static_shapes(onnx, model):
    """Tensor name -> shape (None for a free dimension) from the model and ONNX shape
    inference."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # pylint: disable=broad-except
        inferred = model
    graph = inferred.graph
    shapes = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        kind = info.type.WhichOneof('value')
        if kind != 'tensor_type' or not info.type.tensor_type.HasField('shape'):
            continue
        shapes[info.name] = tuple(d.dim_value if d.HasField('dim_value') else None
                                  for d in info.type.tensor_type.shape.dim)
    return shapes


class Importer(object):
    """Convert one ONNX ModelProto into a Symbol and its parameters."""

    def __init__(self, model):
        from .. import symbol  # pylint: disable=import-outside-toplevel
        self.onnx = require_onnx()
        self.sym = symbol
        self.model = model
        self.opset = max([o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')]
                         or [1])
        self.values = {}     # tensor name -> Symbol or numpy array
        self.params = {}     # parameter name -> numpy array
        self.shapes = _static_shapes(self.onnx, model)
        self.input_shapes = {}
        self.dims = DimSources()
        self._used_names = set()
        self._variables = {}

    # ---- tensors ------------------------------------------------------------------------------
    def is_const(self, name):
        """True when the tensor's value is known at import time."""
        return isinstance(self.values.get(name), np.ndarray)

    def const(self, name, node=None, what='input'):
        """The known value of a tensor; raises when it is computed at run time."""
        value = self.values.get(name)
        if not isinstance(value, np.ndarray):
            where = ' of %s %r' % (node.op_type, node.name) if node is not None else ''
            raise MXNetError('mx.onnx.import_model: the %s %r%s must be a constant (an '
                             'initializer or computed from constants)' % (what, name, where))
        return value

    def symbol(self, name):
        """The tensor as a Symbol (a known value becomes a parameter variable, one per tensor,
        named after it)."""
        value = self.values[name]
        if isinstance(value, np.ndarray):
            if name not in self._variables:
                self._variables[name] = self.parameter(value, name)
            return self._variables[name]
        return value

    def parameter(self, value, hint):
        """A new parameter variable holding ``value``."""
        name = self.unique(hint)
        self.params[name] = np.asarray(value)
        return self.sym.Variable(name, shape=tuple(np.shape(value)),
                                 dtype=np.asarray(value).dtype)

    def unique(self, hint):
        """A variable/node name not used yet."""
        return unique_name((hint or 'param').replace(':', '_'), self._used_names)

    def shape(self, name):
        """The static shape of a tensor (None for free dimensions), or None if unknown."""
        value = self.values.get(name)
        if isinstance(value, np.ndarray):
            return value.shape
        if name in self.shapes:
            return self.shapes[name]
        _, out, _ = value.infer_shape_partial(**self.input_shapes)
        if not out or out[0] is None or not out[0]:
            return None
        return tuple(d if d > 0 else None for d in out[0])

    def rank(self, name, node=None):
        """The rank of a tensor; raises when it is not known."""
        shape = self.shape(name)
        if shape is None:
            raise MXNetError('mx.onnx.import_model: the rank of %r (input of %s %r) is unknown'
                             % (name, node.op_type if node else '?', node.name if node else ''))
        return len(shape)

    def static_shape(self, name, node):
        """The full static shape of a tensor; raises when a dimension is free."""
        shape = self.shape(name)
        if shape is None or any(d is None for d in shape):
            raise MXNetError('mx.onnx.import_model: %s %r needs the static shape of %r, which is '
                             '%s' % (node.op_type, node.name, name, shape))
        return shape

    def node_name(self, node, suffix=''):
        """A name for the MXNet operator made from ``node``."""
        base = (node.name or node.outputs[0] or node.op_type.lower()) + suffix
        return self.unique(base.replace('/', '_').replace(':', '_'))

    # ---- the graph ------------------------------------------------------------------------------
    def load(self):
        """Convert the whole graph; returns (sym, arg_params, aux_params)."""
        graph = self.model.graph
        numpy_helper = self.onnx.numpy_helper
        for init in graph.initializer:
            self.values[init.name] = numpy_helper.to_array(init)
        for info in graph.input:
            if info.name in self.values:
                continue
            self._used_names.add(info.name)
            shape = self.shapes.get(info.name)
            elem = info.type.tensor_type.elem_type
            self.values[info.name] = self.sym.Variable(info.name, dtype=numpy_dtype(elem))
            if shape is not None and all(d is not None for d in shape):
                self.input_shapes[info.name] = shape
        for proto in graph.node:
            self._convert(OnnxNode(proto, self.onnx))
        outputs = [self.symbol(o.name) for o in graph.output]
        sym = outputs[0] if len(outputs) == 1 else self.sym.Group(outputs)
        return self._split_params(sym)

    def _convert(self, node):
        if node.op_type == 'Shape':
            self.values[node.outputs[0]] = self.dims.shape_of(self, node)
            return
        present = [i for i in node.inputs if i]
        if present and all(self.is_const(i) for i in present) and node.op_type != 'Constant':
            tracked = [i for i in present if self.dims.tracked(i)]
            followed = node.op_type in FOLLOWED and (node.op_type != 'Reshape' or
                                                     self.dims.tracked(present[0]))
            if not followed and any(self.dims.has_unknown(i) for i in tracked):
                raise MXNetError('mx.onnx.import_model: %s %r computes with a dimension that is '
                                 'only known at run time (from %s); give the model static input '
                                 'shapes' % (node.op_type, node.name, tracked))
            self._fold(node)
            if followed and tracked:
                self.dims.follow(self, node, self.values[node.outputs[0]])
            return
        convert = IMPORTERS.get(node.op_type)
        if convert is None:
            raise MXNetError('mx.onnx.import_model: no conversion for ONNX operator %r (node '
                             '%r)' % (node.op_type, node.name))
        produced = convert(self, node)
        if not isinstance(produced, (list, tuple)):
            produced = [produced]
        for name, value in zip(node.outputs, produced):
            if name:
                self.values[name] = value

    def _fold(self, node):
        """Compute a node whose inputs are all known with onnx's reference evaluator."""
        from onnx.reference import ReferenceEvaluator  # pylint: disable=import-outside-toplevel
        helper = self.onnx.helper
        names = [i for i in node.inputs if i]
        inputs = [helper.make_tensor_value_info(n, self.onnx.helper.np_dtype_to_tensor_dtype(
            self.values[n].dtype), self.values[n].shape) for n in names]
        outputs = [helper.make_empty_tensor_value_info(o) for o in node.outputs if o]
        graph = helper.make_graph([node.proto], 'fold', inputs, outputs)
        model = helper.make_model(graph, opset_imports=list(self.model.opset_import))
        results = ReferenceEvaluator(model).run(None, {n: self.values[n] for n in names})
        for name, value in zip([o for o in node.outputs if o], results):
            self.values[name] = np.asarray(value)

    def _split_params(self, sym):
        nd = __import__('mxmod.ndarray', fromlist=['array'])
        args = set(sym.list_arguments())
        auxs = set(sym.list_auxiliary_states())
        arg_params = {n: nd.array(v, dtype=v.dtype) for n, v in self.params.items() if n in args}
        aux_params = {n: nd.array(v, dtype=v.dtype) for n, v in self.params.items() if n in auxs}
        return sym, arg_params, aux_params


def _load(onnx, model_file):
    if isinstance(model_file, string_types):
        return onnx.load_model(model_file)
    if isinstance(model_file, onnx.ModelProto):
        return model_file
    raise MXNetError('mx.onnx.import_model: expected the path of an ONNX file or a ModelProto, '
                     'got %s' % type(model_file).__name__)


def import_model(model_file):
    """Import an ONNX model as an MXNet symbol and its parameters.

    Parameters
    ----------
    model_file : str or onnx.ModelProto
        The ONNX model file (or a loaded model).

    Returns
    -------
    sym : Symbol
        The network; its inputs are the model's graph inputs that have no initializer.
    arg_params : dict of str to NDArray
        The parameters that are arguments of ``sym``.
    aux_params : dict of str to NDArray
        The parameters that are auxiliary states (BatchNorm running statistics).
    """
    onnx = require_onnx()
    return Importer(_load(onnx, model_file)).load()


def get_model_metadata(model_file):
    """Names, shapes and element types of an ONNX model's inputs and outputs.

    Parameters
    ----------
    model_file : str or onnx.ModelProto

    Returns
    -------
    dict
        ``'input_tensor_data'``: list of ``(name, shape, onnx elem type)`` for the inputs that are
        not initializers; ``'output_tensor_data'``: list of ``(name, shape)``. Free dimensions are
        0, as MXNet reported them.
    """
    onnx = require_onnx()
    graph = _load(onnx, model_file).graph
    params = {init.name for init in graph.initializer}

    def dims(info):
        return tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
    inputs = [(i.name, dims(i), i.type.tensor_type.elem_type) for i in graph.input
              if i.name not in params]
    outputs = [(o.name, dims(o)) for o in graph.output]
    return {'input_tensor_data': inputs, 'output_tensor_data': outputs}
