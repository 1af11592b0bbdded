"""Partial shape inference cases for every registered operator, written once for MXNet 1.9.1 and
mxmod (plain data: no import of either).

MXNet 1.x's legacy shapes: 0 is an unknown dimension and an unknown shape is ``()`` (``None``
here). A case builds one operator node named ``op`` whose inputs are variables (MXNet's
auto-created ``op_<argument>`` unless ``inputs`` names them), and gives some of them shapes;
``heads`` gives known shapes of its outputs (through ``elemwise_add(output, head<i>)``) so that
inference must run from the outputs back to the inputs. ``dtypes`` (optional) gives known input
dtypes for type inference.

fixtures/make_partial_shape_fixture.py runs every case on MXNet 1.9.1 and records its
``infer_shape_partial``/``infer_shape`` (and ``infer_type_partial``) results with the graph's
JSON in fixtures/partial_shapes_mxnet.json; test_partial_shapes.py loads each graph into mxmod
and compares; GRAPHS holds a few whole graphs (keras-mxnet's layers on a 0 batch dim). The cases
are split by operator family over this file,
partial_shape_cases_more.py and partial_shape_cases_rest.py; ``all_cases()`` gives them all."""
import importlib

CASES = []
_IDS = set()


def _keras_conv(sym):
    """keras-mxnet's Conv2D with a bias and BatchNorm/relu/pooling/dense on a 0 batch dim."""
    x = sym.var('x')
    c = sym.Convolution(x, kernel=(3, 3), num_filter=8, no_bias=True, name='c')
    y = sym.broadcast_add(c, sym.var('b'))
    y = sym.Activation(sym.BatchNorm(y, name='bn'), act_type='relu')
    y = sym.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type='max')
    y = sym.Flatten(y)
    d = sym.dot(y, sym.var('w'))
    return sym.broadcast_add(d, sym.var('wb'))


def _keras_dense_seq(sym):
    """Dense layers applied on the last axis of a (batch, time, features) input, concatenated."""
    x = sym.var('x')
    a = sym.FullyConnected(x, num_hidden=6, flatten=False, name='a')
    b = sym.broadcast_mul(sym.FullyConnected(x, num_hidden=4, flatten=False, name='b'),
                          sym.var('scale'))
    y = sym.Concat(a, b, dim=2)
    y = sym.softmax(sym.sum(y, axis=1), axis=-1)
    return sym.expand_dims(y, axis=1)


def _residual(sym):
    """A residual block: two branches added, then reshaped with special codes."""
    x = sym.var('x')
    a = sym.Convolution(x, kernel=(1, 1), num_filter=4, name='a')
    b = sym.Convolution(sym.Activation(x, act_type='relu'), kernel=(3, 3), pad=(1, 1),
                        num_filter=4, name='b')
    y = sym.elemwise_add(a, b)
    return sym.Reshape(y, shape=(0, -1))


# whole graphs (name -> (builder of the graph from a symbol namespace, known shapes))
GRAPHS = {
    'keras_conv': (_keras_conv, {'x': (0, 3, 16, 16), 'b': (1, 8, 1, 1), 'w': (392, 10),
                                 'wb': (10,)}),
    'keras_conv_nobatch': (_keras_conv, {'x': (2, 3, 16, 16), 'b': (1, 8, 1, 1)}),
    'keras_dense_seq': (_keras_dense_seq, {'x': (0, 5, 3), 'scale': (1, 1, 4)}),
    'keras_dense_seq_time': (_keras_dense_seq, {'x': (0, 0, 3)}),
    'residual': (_residual, {'x': (0, 3, 8, 8)}),
}


def all_cases():
    """Every case (the other case modules add theirs to CASES when imported), then the type
    cases derived from them."""
    if not _TYPED:
        for name in ('partial_shape_cases_more', 'partial_shape_cases_rest'):
            importlib.import_module('%s.%s' % (__package__, name) if __package__ else name)
        _type_cases()
        _TYPED.append(True)
    return CASES


_TYPED = []
# dtypes given to the first input ('#0': the operator's first argument) in the type cases
TYPE_SCENARIOS = [{}, {'#0': 'float64'}, {'#0': 'float16'}, {'#0': 'int32'}]


def _type_cases():
    """For the first case of each operator and attribute set: infer_type_partial with no dtype
    known, and with its first input float64, float16 or int32."""
    seen = set()
    for c in list(CASES):
        key = (c['op'], tuple(sorted(c['attrs'].items())))
        if key in seen or c['dtypes'] is not None:
            continue
        seen.add(key)
        for dtypes in TYPE_SCENARIOS:
            case(c['op'], c['attrs'], c['shapes'], None, c['inputs'], dtypes)


def case(op, attrs=None, shapes=None, heads=None, inputs=None, dtypes=None, tag=None):
    """Add one case.

    Parameters
    ----------
    op : str
        MXNet's registered operator name (``_contrib_box_nms``, ``broadcast_add``...).
    attrs : dict, optional
        Operator attributes (converted to strings as symbol JSON keeps them).
    shapes : dict, optional
        Known input shapes by argument name (``data``: the variable ``op_data``; with ``inputs``,
        the names given there); 0 is an unknown dimension.
    heads : list, optional
        Per output, its known shape or None.
    inputs : list of str or dict, optional
        Names of variables passed positionally (variadic operators: Concat, add_n...), or by
        keyword (argument -> variable name).
    dtypes : dict, optional
        Known input dtypes for infer_type_partial, keyed as ``shapes`` ('#i': the operator's
        i-th argument).
    tag : str, optional
        Distinguishes cases that would otherwise get the same id.
    """
    attrs = {k: v if isinstance(v, str) else _attr(v) for k, v in (attrs or {}).items()}
    new = {'op': op, 'attrs': attrs, 'shapes': dict(shapes or {}), 'heads': heads,
           'inputs': inputs, 'dtypes': dtypes, 'tag': tag}
    key = case_id(new)
    if key not in _IDS:      # scenario lists may produce one case twice
        _IDS.add(key)
        CASES.append(new)


def _attr(value):
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (tuple, list)):
        return '(' + ', '.join(str(v) for v in value) + (',)' if len(value) == 1 else ')')
    return str(value)


def case_id(c):
    """A readable id, unique within CASES."""
    parts = [c['op']]
    if c['attrs']:
        parts.append(','.join('%s=%s' % kv for kv in sorted(c['attrs'].items())))
    parts.append(' '.join('%s:%s' % (k, _short(v)) for k, v in sorted(c['shapes'].items())))
    if c['heads']:
        parts.append('heads:' + ' '.join(_short(h) for h in c['heads']))
    if c['dtypes'] is not None:
        parts.append('types:' + ','.join('%s=%s' % kv for kv in sorted(c['dtypes'].items())))
    if c['tag']:
        parts.append(c['tag'])
    return '|'.join(parts)


def _short(shape):
    return '?' if shape is None else 'x'.join(str(d) for d in shape) or '()'


# ---- shared shape scenarios ----------------------------------------------------------------
# Shapes of one input of a shape-preserving operator, and the same with the output known.
SAME = [(2, 3), (0, 3), (2, 0), (0, 0, 4), (0, 8, 14, 14)]
SAME_HEADS = [(None, (2, 3)), ((0, 3), (2, 3)), ((2, 0, 4), (2, 5, 4))]

# Pairs of shapes for broadcasting operators
BROADCAST_PAIRS = [
    ((0, 8, 14, 14), (1, 8, 1, 1)), ((2, 3), (2, 3)), ((0, 3), (2, 3)), ((2, 0), (2, 3)),
    ((0, 3), (0, 3)), ((0, 3), (1, 3)), ((0, 3), (3,)), ((0, 1), (0, 4)), ((2, 3), None),
    (None, (2, 3)), ((0, 3), None), ((0, 0), (0, 0)), ((2, 1, 0), (5, 1)), ((4,), (0, 2, 4)),
    ((2, 3), (4, 3)), ((0, 3), (4,)), ((1,), (0,)), ((5, 0), (1, 1)),
]
BROADCAST_HEADS = [
    ((None, None), (2, 3)), (((0, 3), None), (2, 3)), (((2, 3), None), (2, 3)),
    (((0, 1), (1, 3)), (2, 3)), (((1, 3), (0, 3)), (2, 3)),
]
# Pairs for operators that need one shape on both inputs (elemwise_*, _plus, _maximum...)
SAME_PAIRS = [
    ((2, 3), (2, 3)), ((0, 3), (2, 0)), ((0, 3), None), (None, (2, 3)), ((0, 0), (0, 0)),
    ((2, 3), (2, 4)), ((2, 3), (3,)), ((0, 8, 14, 14), (1, 8, 1, 1)),
]
SAME_PAIR_HEADS = [((None, None), (2, 3)), (((0, 3), None), (2, 3)), (((2, 0), (0, 3)), None)]


def unary(op, attrs=None):
    """Cases for an operator whose output has its one input's shape."""
    for shape in SAME:
        case(op, attrs, {'data': shape})
    for shape, head in SAME_HEADS:
        case(op, attrs, {} if shape is None else {'data': shape}, [head])
    case(op, attrs)


def binary(op, pairs, heads, names=('lhs', 'rhs')):
    """Cases for a two-input operator: shape pairs, then pairs with the output known."""
    for a, b in pairs:
        case(op, None, _pair(names, a, b))
    for (a, b), head in heads:
        case(op, None, _pair(names, a, b), [head])


def _pair(names, a, b):
    shapes = {}
    if a is not None:
        shapes[names[0]] = a
    if b is not None:
        shapes[names[1]] = b
    return shapes


# ---- elementwise -----------------------------------------------------------------------------
UNARY = ['BlockGrad', '_copy', 'abs', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan',
         'arctanh', 'cbrt', 'ceil', 'cos', 'cosh', 'degrees', 'exp', 'expm1', 'fix', 'floor',
         'log', 'log10', 'log1p', 'log2', 'negative', 'ones_like', 'radians', 'rcbrt',
         'reciprocal', 'relu', 'rint', 'round', 'rsqrt', 'sigmoid', 'sign', 'sin', 'sinh',
         'softsign', 'sqrt', 'square', 'tan', 'tanh', 'trunc', 'zeros_like', 'erf', 'erfinv',
         'gamma', 'gammaln', 'logical_not', 'make_loss', '_contrib_round_ste',
         '_contrib_sign_ste', '_contrib_div_sqrt_dim']
for _op in UNARY:
    unary(_op)
unary('hard_sigmoid', {'alpha': 0.3})
unary('_contrib_gradientmultiplier', {'scalar': 2.0})
unary('Cast', {'dtype': 'float16'})
unary('amp_cast', {'dtype': 'float16'})
unary('clip', {'a_min': 0, 'a_max': 1})
unary('MakeLoss', {'grad_scale': 2.0})
unary('Dropout', {'p': 0.5})
unary('Dropout', {'p': 0.5, 'mode': 'always'})

ARITH = ['add', 'sub', 'mul', 'div', 'mod', 'power', 'maximum', 'minimum', 'hypot', 'equal',
         'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal', 'logical_and',
         'logical_or', 'logical_xor']
for _name in ARITH:
    binary('broadcast_' + _name, BROADCAST_PAIRS, BROADCAST_HEADS)
for _name in ['elemwise_add', 'elemwise_sub', 'elemwise_mul', 'elemwise_div', '_mod', '_power',
              '_maximum', '_minimum', '_hypot', '_equal', '_not_equal', '_greater',
              '_greater_equal', '_lesser', '_lesser_equal', '_logical_and', '_logical_or',
              '_logical_xor', '_scatter_elemwise_div']:
    binary(_name, SAME_PAIRS, SAME_PAIR_HEADS)

SCALAR = ['_div_scalar', '_equal_scalar', '_greater_equal_scalar', '_greater_scalar',
          '_hypot_scalar', '_lesser_equal_scalar', '_lesser_scalar', '_logical_and_scalar',
          '_logical_or_scalar', '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar',
          '_minus_scalar', '_mod_scalar', '_mul_scalar', '_not_equal_scalar', '_plus_scalar',
          '_power_scalar', '_rdiv_scalar', '_rminus_scalar', '_rmod_scalar', '_rpower_scalar',
          '_scatter_minus_scalar', '_scatter_plus_scalar']
for _op in SCALAR:
    unary(_op, {'scalar': 2.0})

# broadcast_to / broadcast_like / broadcast_axis
for _shape, _target in [((0, 1), (2, 3)), ((2, 1), (0, 3)), ((1, 1), (2, 3)), ((0, 3), (2, 0)),
                        ((2, 1), (2, 3)), ((3,), (2, 3)), ((2, 1), (2, 3, 4)), (None, (2, 3)),
                        ((1, 0), (4, 0))]:
    case('broadcast_to', {'shape': _target}, {} if _shape is None else {'data': _shape})
case('broadcast_to', {'shape': (2, 3)}, {'data': (2, 1)}, [(2, 3)])
case('broadcast_to', {'shape': (0, 3)}, {}, [(2, 3)])
for _a, _b in [((0, 1), (2, 3)), ((2, 1), (0, 3)), ((1, 1), (2, 3)), ((2, 1), None),
               (None, (2, 3)), ((1, 3), (2, 0)), ((2, 3), (2, 3))]:
    case('broadcast_like', None, _pair(('lhs', 'rhs'), _a, _b))
case('broadcast_like', None, {'lhs': (1, 3)}, [(4, 3)])
for _a, _b, _axes in [((0, 1), (2, 1), ((1,), (1,))), ((2, 1, 1), (0, 3, 4), ((1,), (1,))),
                      ((2, 1), (5, 0), ((1,), (0,)))]:
    case('broadcast_like', {'lhs_axes': _axes[0], 'rhs_axes': _axes[1]},
         _pair(('lhs', 'rhs'), _a, _b))
for _shape in [(0, 1, 3), (2, 1, 0), (2, 1, 3)]:
    case('broadcast_axis', {'axis': 1, 'size': 4}, {'data': _shape})
case('broadcast_axis', {'axis': (0, 2), 'size': (2, 5)}, {'data': (1, 0, 1)})
case('broadcast_axis', {'axis': 1, 'size': 4}, {}, [(2, 4, 3)])
case('broadcast_axis', {'axis': 1, 'size': 4}, {'data': (0, 1, 3)}, [(2, 4, 3)])

# add_n / ElementWiseSum
for _shapes in [[(2, 3), (0, 3), None], [(0, 3), (2, 0), (0, 0)], [None, None, None],
                [(2, 3), (2, 4), None]]:
    case('add_n', {'num_args': 3}, {n: s for n, s in zip('abc', _shapes) if s is not None},
         inputs=['a', 'b', 'c'])
case('add_n', {'num_args': 3}, {'a': (0, 3)}, [(2, 3)], inputs=['a', 'b', 'c'])

# where / _identity_with_attr_like_rhs / _CrossDeviceCopy
for _c, _x, _y in [((0, 3), (2, 0), None), ((2,), (2, 3), (0, 3)), ((0,), (0, 3), None),
                   (None, (2, 3), None), ((2, 3), None, None), ((2, 3), (2, 4), None),
                   ((2, 3), (0, 3), None), ((2,), (0, 3), None), ((2,), (2, 0), (0, 0)),
                   ((3,), (2, 3), None), (None, None, (0, 4))]:
    case('where', None, {k: v for k, v in zip(('condition', 'x', 'y'), (_c, _x, _y))
                          if v is not None})
case('where', None, {}, [(2, 3)])
case('where', None, {'condition': (2,)}, [(2, 3)])
for _a, _b in [((0, 3), (2, 3)), ((2, 3), None), (None, (2, 0)), ((2, 3), (4,))]:
    case('_identity_with_attr_like_rhs', None, _pair(('lhs', 'rhs'), _a, _b))
case('_identity_with_attr_like_rhs', None, {}, [(2, 3)])
