"""Walk a Symbol's graph in order and convert each operator node into ONNX nodes.

Every value of the graph gets a static shape and dtype from mxmod's own inference; with dynamic
input dimensions a second inference, with large primes standing in for the free dimensions, tells
which dimensions of every value vary (see ``export_graph.factor_dims``)."""
import logging

import numpy as np

from ..base import MXNetError
from ..symbol.infer import infer_shapes, infer_types
from .base import find_exporter, onnx_dtype
from .export_graph import ExportGraph, MARKERS

# operators whose 'label' argument is only used for training; a variable feeding nothing else is
# an implicit label and not an input of the exported graph
LOSS_LABEL_INPUTS = {'SoftmaxOutput': 1, 'LinearRegressionOutput': 1, 'MAERegressionOutput': 1,
                     'LogisticRegressionOutput': 1, 'SVMOutput': 1}


class MXNode(object):
    """What a conversion function sees of one MXNet operator node.

    Attributes
    ----------
    name, op_name : str
    p : namespace of the operator's parsed parameters (defaults filled in)
    op : the mxmod operator instance
    inputs : list of str
        ONNX tensor names of the inputs (arguments then auxiliary states; None for a label).
    in_shapes, out_shapes : list of tuple
        Static shapes (from the shapes given to export_model).
    in_dtypes, out_dtypes : list of numpy.dtype
    in_dynamic, out_dynamic : list of tuple of bool
        Per dimension, True where it varies with the dynamic input dimensions.
    """
    __slots__ = ('name', 'op_name', 'op', 'p', 'inputs', 'in_shapes', 'out_shapes', 'in_dtypes',
                 'out_dtypes', 'in_dynamic', 'out_dynamic', 'out_names')

    def out(self, index=0):
        """The tensor name to give output ``index``."""
        return self.out_names[index]

    def markers(self, index=0):
        """Input ``index``'s static dims with a distinct large prime in place of each dynamic one
        (with the prime per axis, 0 for static axes)."""
        shape, dyn = self.in_shapes[index], self.in_dynamic[index]
        marks = [MARKERS[k] if d else 0 for k, d in enumerate(dyn)]
        return [m or s for m, s in zip(marks, shape)], marks


def implicit_labels(order, params):
    """Names of variables that only feed the label slot of loss layers and have no value."""
    uses = {}
    for node in order:
        if node.op is None:
            continue
        label_slot = LOSS_LABEL_INPUTS.get(node.op.op_name)
        for k, (src, _) in enumerate(node.inputs):
            if src.op is None:
                uses.setdefault(src.name, set()).add(k == label_slot)
    return {name for name, kinds in uses.items() if kinds == {True} and name not in params}


def output_names(sym):
    """ONNX names of the graph outputs: MXNet's output names without '_output', as MXNet 1.9.1's
    exporter names them."""
    names = []
    for name in sym.list_outputs():
        if name.endswith('_output'):
            name = name[:-len('_output')]
        elif len(name) > 7 and name[-8:-1] == '_output' and name[-1].isdigit():
            name = name[:-8] + name[-1]
        names.append(name)
    return names


class _Inference(object):
    """Static shapes, dtypes and dynamic-dimension masks of every entry of the graph."""

    def __init__(self, sym, known_shapes, known_types, dynamic_dims):
        self.shapes = infer_shapes(sym, known_shapes, True)
        self.types = infer_types(sym, known_types)
        self.dynamic = {}
        if dynamic_dims:
            marked = dict(known_shapes)
            for name, axes in dynamic_dims.items():
                shape = list(marked[name])
                for axis in axes:
                    shape[axis] = MARKERS[axis]
                marked[name] = tuple(shape)
            try:
                other = infer_shapes(sym, marked, True)
            except MXNetError:
                other = None
            for key, shape in self.shapes.items():
                if shape is None:
                    continue
                alt = None if other is None else other.get(key)
                if alt is None:   # unknown: every dimension is taken as dynamic
                    self.dynamic[key] = tuple(True for _ in shape)
                else:
                    self.dynamic[key] = tuple(a != b for a, b in zip(shape, alt))

    def entry(self, node, index):
        """(shape, dtype, dynamic mask) of output ``index`` of ``node``."""
        key = (id(node), index)
        shape = self.shapes.get(key)
        dtype = self.types.get(key)
        dyn = self.dynamic.get(key) or tuple(False for _ in (shape or ()))
        return shape, (None if dtype is None else np.dtype(dtype)), dyn


def _describe(node, inference, tensors, out_names):
    info = MXNode()
    info.name, info.op, info.op_name, info.p = node.name, node.op, node.op.op_name, node.op.p
    info.inputs = [tensors.get((id(src), idx)) for src, idx in node.inputs]
    ins = [inference.entry(src, idx) for src, idx in node.inputs]
    outs = [inference.entry(node, k) for k in range(len(node.op.list_outputs()))]
    info.in_shapes, info.in_dtypes, info.in_dynamic = _columns(ins)
    info.out_shapes, info.out_dtypes, info.out_dynamic = _columns(outs)
    info.out_names = out_names
    for k, shape in enumerate(info.out_shapes[:node.op.num_visible_outputs()]):
        if shape is None or 0 in shape:
            raise MXNetError('mx.onnx: the shape of output %d of %s %r could not be inferred from '
                             'the input shapes given (got %s)'
                             % (k, info.op_name, node.name, shape))
    return info


def _columns(rows):
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


class SymbolConverter(object):
    """Convert one Symbol with its parameters into an ONNX GraphProto.

    Parameters
    ----------
    sym : Symbol
    params : dict of str to numpy.ndarray
    opset : int
    verbose : bool
    """

    def __init__(self, sym, params, opset, verbose=False):
        self.sym = sym
        self.params = params
        self.order = sym._topo()  # pylint: disable=protected-access
        self.labels = implicit_labels(self.order, params)
        self.opset = opset
        self.verbose = verbose

    def input_names(self):
        """Names of the graph inputs (variables that are neither parameters nor implicit labels),
        in the order of ``Symbol.list_inputs``."""
        return [n.name for n in self.order if n.op is None and n.name not in self.params
                and n.name not in self.labels]

    def convert(self, in_shapes, in_types, dyn_shapes=None):
        """Build the GraphProto. ``dyn_shapes`` (per input: a shape with None or a name for each
        free dimension) makes those dimensions dynamic."""
        inputs = self.input_names()
        known_shapes = {n: tuple(v.shape) for n, v in self.params.items()}
        known_shapes.update(zip(inputs, in_shapes))
        known_types = {n: v.dtype for n, v in self.params.items()}
        known_types.update(zip(inputs, in_types))
        dyn_dims = {}
        if dyn_shapes is not None:
            for name, shape in zip(inputs, dyn_shapes):
                dyn_dims[name] = [k for k, d in enumerate(shape) if not isinstance(d, int)]
        inference = _Inference(self.sym, known_shapes, known_types, dyn_dims)
        graph = ExportGraph(self.opset, dynamic=bool(dyn_dims))
        tensors = self._add_variables(graph, inputs, in_shapes, in_types, dyn_shapes)
        heads = self._head_names(graph)
        for node in self.order:
            if node.op is not None:
                self._convert_node(graph, node, inference, tensors, heads)
        outputs = self._add_outputs(graph, inference, tensors, heads)
        return self._finish(graph, outputs)

    def _add_variables(self, graph, inputs, in_shapes, in_types, dyn_shapes):
        helper = graph.onnx.helper
        tensors = {}
        for name in [n.name for n in self.order if n.op is None]:
            graph.fresh(name)
        for node in self.order:
            if node.op is not None:
                continue
            key = (id(node), 0)
            if node.name in self.params:
                tensors[key] = graph.add_initializer(node.name, self.params[node.name])
            elif node.name not in self.labels:
                k = inputs.index(node.name)
                shape = in_shapes[k] if dyn_shapes is None else dyn_shapes[k]
                graph.inputs.append(helper.make_tensor_value_info(
                    node.name, onnx_dtype(in_types[k]), list(shape)))
                graph.dtypes[node.name] = np.dtype(in_types[k])
                tensors[key] = node.name
        return tensors

    def _head_names(self, graph):
        heads = {}
        for (node, index), name in zip(self.sym._outputs, output_names(self.sym)):  # pylint: disable=protected-access
            key = (id(node), index)
            if key not in heads and node.op is not None:
                heads[key] = graph.fresh(name)
        return heads

    def _convert_node(self, graph, node, inference, tensors, heads):
        count = len(node.op.list_outputs())
        out_names = []
        for k in range(count):
            key = (id(node), k)
            if key in heads:
                out_names.append(heads[key])
            else:
                out_names.append(graph.fresh(node.name if k == 0 else '%s%d' % (node.name, k)))
        info = _describe(node, inference, tensors, out_names)
        convert = find_exporter(info.op_name)
        if convert is None:
            raise MXNetError('mx.onnx: no ONNX conversion for operator %r (node %r)'
                             % (info.op_name, node.name))
        if self.verbose:
            logging.info('Converting %s %r', info.op_name, node.name)
        produced = convert(graph, info)
        if isinstance(produced, str):
            produced = [produced]
        for k, name in enumerate(produced):
            tensors[(id(node), k)] = name
            if info.out_dtypes[k] is not None and name not in graph.initializers:
                graph.dtypes[name] = info.out_dtypes[k]

    def _add_outputs(self, graph, inference, tensors, heads):
        helper = graph.onnx.helper
        outputs, done = [], set()
        for (node, index), name in zip(self.sym._outputs, output_names(self.sym)):  # pylint: disable=protected-access
            key = (id(node), index)
            tensor = tensors.get(key)
            if tensor is None:
                raise MXNetError('mx.onnx: output %r of the symbol has no value in the exported '
                                 'graph (is it a label?)' % name)
            wanted = heads.get(key) if key not in done else None
            if wanted is None:
                wanted = graph.fresh(name)
            if tensor != wanted:
                tensor = graph.add('Identity', [tensor], outputs=[wanted], name=wanted)
            done.add(key)
            shape, dtype, dyn = inference.entry(node, index)
            dims = [None if d else s for s, d in zip(shape, dyn)]
            outputs.append(helper.make_tensor_value_info(tensor, onnx_dtype(dtype), dims))
        return outputs

    def _finish(self, graph, outputs):
        onnx = graph.onnx
        used = {name for n in graph.nodes for name in n.input}
        used.update(o.name for o in outputs)
        inits = [onnx.numpy_helper.from_array(np.array(value, order="C"), name)
                 for name, value in graph.initializers.items() if name in used]
        return onnx.helper.make_graph(graph.nodes, 'mxnet_converted_model', graph.inputs, outputs,
                                      initializer=inits)
