"""More partial shape cases (see partial_shape_cases.py): neural-network layers, shape and
indexing operators, reductions, linear algebra, random sampling and the contrib operators."""
try:
    from .partial_shape_cases import case, unary, _pair
except ImportError:   # run as a top-level module by the fixture generator
    from partial_shape_cases import case, unary, _pair

# ---- neural-network layers ---------------------------------------------------------------
for _flatten in (True, False):
    _fc = {'num_hidden': 4, 'flatten': _flatten}
    for _shapes in [{'data': (0, 10)}, {'data': (0, 3, 5)}, {'data': (2, 0)}, {'data': (2, 0, 5)},
                    {'data': (0, 0)}, {'weight': (4, 10)}, {'data': (0, 10), 'weight': (4, 0)},
                    {'data': (2, 3, 0), 'weight': (4, 5)}, {'data': (2, 10), 'bias': (4,)},
                    {'data': (0,)}, {'data': (2, 10), 'weight': (4, 11)}]:
        case('FullyConnected', _fc, _shapes)
    case('FullyConnected', _fc, {}, [(2, 4)])
    case('FullyConnected', _fc, {'weight': (4, 10)}, [(2, 4)])
    case('FullyConnected', _fc, {'data': (0, 3, 10)}, [(2, 3, 4)])
    case('FullyConnected', dict(_fc, no_bias=True), {'data': (0, 10)})
    case('FullyConnected', dict(_fc, no_bias=True), {'data': (2, 10)}, [(2, 0)])

_CONV = [({'kernel': (3, 3), 'num_filter': 8}, (0, 3, 14, 14)),
         ({'kernel': (3, 3), 'num_filter': 8, 'pad': (1, 1), 'stride': (2, 2)}, (0, 3, 0, 14)),
         ({'kernel': (3, 3), 'num_filter': 8}, (2, 0, 14, 14)),
         ({'kernel': (3, 3), 'num_filter': 8, 'num_group': 2}, (0, 4, 14, 14)),
         ({'kernel': (3,), 'num_filter': 8}, (0, 3, 10)),
         ({'kernel': (2, 2, 2), 'num_filter': 8, 'layout': 'NDHWC'}, (0, 5, 6, 6, 3)),
         ({'kernel': (2, 2, 2), 'num_filter': 4}, (0, 3, 6, 6, 0)),
         ({'kernel': (3, 3), 'num_filter': 8, 'layout': 'NHWC'}, (0, 14, 14, 3)),
         ({'kernel': (3, 3), 'num_filter': 8, 'no_bias': True, 'dilate': (2, 2)}, (0, 3, 14, 14)),
         ({'kernel': (3, 3), 'num_filter': 8}, (0, 0, 0, 0)),
         ({'kernel': (3, 3), 'num_filter': 8}, (2, 3, 2, 14))]
for _op in ('Convolution', 'Deconvolution'):
    for _attrs, _shape in _CONV:
        case(_op, _attrs, {'data': _shape})
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {'weight': (8, 3, 3, 3)})
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {'data': (0, 3, 14, 14), 'weight': (0, 3, 3, 3)})
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {}, [(2, 8, 12, 12)])
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {'data': (0, 3, 14, 14)}, [(2, 0, 0, 0)])
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {'data': (0,)})
    case(_op, {'kernel': (3, 3), 'num_filter': 8}, {'data': (2, 3, 14, 14), 'weight': (8, 4, 3, 3)})
case('Deconvolution', {'kernel': (3, 3), 'num_filter': 8, 'stride': (2, 2), 'adj': (1, 1)},
     {'data': (0, 3, 7, 0)})
case('Deconvolution', {'kernel': (4, 4), 'num_filter': 8, 'stride': (2, 2),
                       'target_shape': (14, 14)}, {'data': (0, 3, 7, 7)})
case('Deconvolution', {'kernel': (3, 3), 'num_filter': 8, 'no_bias': False}, {'data': (0, 3, 7, 7)})

_POOL = [{'kernel': (2, 2), 'pool_type': 'max'},
         {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'pool_type': 'avg'},
         {'kernel': (2, 2), 'pool_type': 'max', 'pooling_convention': 'full'},
         {'kernel': (1, 1), 'global_pool': True, 'pool_type': 'avg'},
         {'global_pool': True, 'pool_type': 'max'},
         {'kernel': (2,), 'pool_type': 'sum'},
         {'kernel': (2, 2, 2), 'pool_type': 'max'},
         {'kernel': (2, 2), 'pool_type': 'max', 'layout': 'NHWC'}]
for _attrs in _POOL:
    _nd = len(_attrs.get('kernel', (1, 1)))
    for _shape in [(0, 3) + (8,) * _nd, (2, 0) + (8,) * _nd, (2, 3) + (0,) * _nd,
                   (2, 3, 0) + (8,) * (_nd - 1), (0,) * (_nd + 2)]:
        case('Pooling', _attrs, {'data': _shape})
    case('Pooling', _attrs, {}, [(2, 3) + (4,) * _nd])
case('Pooling', {'kernel': (2, 2)}, {'data': (0, 3, 1, 8)})

for _op in ('BatchNorm', 'BatchNorm_v1', '_contrib_SyncBatchNorm', 'InstanceNorm', 'LayerNorm',
            'GroupNorm'):
    _attrs = {'key': 'k'} if _op == '_contrib_SyncBatchNorm' else {}
    if _op == 'GroupNorm':
        _attrs = {'num_groups': 2}
    for _shapes in [{'data': (0, 4, 5, 5)}, {'data': (2, 0, 5)}, {'data': (0, 4)},
                    {'gamma': (4,)}, {'data': (0, 0, 5), 'beta': (4,)}, {'data': (2, 4, 0, 3)},
                    {'data': (0, 4), 'gamma': (5,)}]:
        case(_op, _attrs, _shapes)
    case(_op, _attrs, {}, [(2, 4, 3)])
    case(_op, _attrs, {'data': (0, 4, 3)}, [(2, 0, 0)])
for _attrs in [{'axis': -1}, {'axis': 3}, {'axis': 0}, {'output_mean_var': True}]:
    case('BatchNorm', _attrs, {'data': (0, 4, 5, 6)})
    case('LayerNorm', _attrs, {'data': (0, 4, 5, 6)})
case('BatchNorm', {'output_mean_var': True}, {'data': (0, 0, 5)}, [None, (4,), None])
case('LayerNorm', {'output_mean_var': True}, {}, [None, (2, 3, 1), None])
case('GroupNorm', {'num_groups': 2, 'output_mean_var': True}, {'data': (0, 4, 5)})
case('BatchNorm', {}, {'moving_mean': (4,)})
case('BatchNorm', {}, {'data': (2, 4, 5), 'moving_var': (5,)})
for _shape in [(0, 4, 5), (2, 0), (0, 0, 0, 0)]:
    case('L2Normalization', {'mode': 'instance'}, {'data': _shape})
    case('L2Normalization', {'mode': 'channel'}, {'data': _shape})
    case('LRN', {'nsize': 3}, {'data': _shape})
case('L2Normalization', {}, {}, [(2, 3)])
case('LRN', {'nsize': 3}, {}, [(2, 3, 4, 4)])

for _act in ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'):
    unary('Activation', {'act_type': _act})
for _act in ('leaky', 'elu', 'selu', 'gelu', 'rrelu'):
    unary('LeakyReLU', {'act_type': _act})
for _shapes in [{'data': (0, 4, 5)}, {'data': (0, 4)}, {'gamma': (4,)}, {'data': (2, 0, 3)},
                {'data': (0,)}, {'data': (0, 4), 'gamma': (1,)}]:
    case('LeakyReLU', {'act_type': 'prelu'}, _shapes)
case('LeakyReLU', {'act_type': 'prelu'}, {}, [(2, 4)])

for _op in ('softmax', 'log_softmax', 'softmin'):
    unary(_op)
    unary(_op, {'axis': 1})
# only softmax takes a length input in MXNet 1.9.1 (log_softmax and softmin cannot be composed
# with one)
_LEN = {'data': 'data', 'length': 'length'}
for _shapes in [{'data': (0, 5), 'length': (0,)}, {'data': (2, 5)}, {'data': (2, 3, 5)},
                {'length': (2,)}, {'data': (0, 0), 'length': (3,)}]:
    case('softmax', {'use_length': True}, _shapes, inputs=_LEN)
case('softmax', {'use_length': True, 'axis': 1}, {'data': (2, 5, 3)}, inputs=_LEN)
case('softmax', {'use_length': True}, {}, [(2, 5)], inputs=_LEN)
unary('SoftmaxActivation')
unary('SoftmaxActivation', {'mode': 'channel'})

for _attrs in [{}, {'multi_output': True}, {'preserve_shape': True}, {'use_ignore': True}]:
    for _shapes in [{'data': (0, 5)}, {'data': (2, 5)}, {'data': (0, 5, 3)}, {'label': (2,)},
                    {'label': (0,)}, {'label': (2, 5)}, {'data': (2, 5), 'label': (3,)},
                    {'data': (2, 5, 3), 'label': (2, 3)}, {'data': (2, 5, 3)},
                    {'data': (2, 5), 'label': (2, 5)}, {'label': (2, 3)}]:
        case('SoftmaxOutput', _attrs, _shapes)
    case('SoftmaxOutput', _attrs, {}, [(2, 5)])
    case('SoftmaxOutput', _attrs, {'label': (2,)}, [(0, 5)])
for _op in ('LinearRegressionOutput', 'LogisticRegressionOutput', 'MAERegressionOutput'):
    for _shapes in [{'data': (0, 5)}, {'data': (2, 5)}, {'data': (2,)}, {'label': (2, 5)},
                    {'label': (2,)}, {'data': (2, 1)}, {'data': (0, 1), 'label': (4,)},
                    {'data': (2, 5), 'label': (3, 5)}, {'data': (2, 0), 'label': (0, 5)}]:
        case(_op, {}, _shapes)
    case(_op, {}, {}, [(2, 5)])
for _shapes in [{'data': (0, 5)}, {'data': (2, 5)}, {'label': (2,)}, {'data': (2, 5), 'label': (3,)},
                {'data': (2, 5, 3)}, {'label': (0,)}]:
    case('SVMOutput', {}, _shapes)
    case('softmax_cross_entropy', {}, _shapes)
case('SVMOutput', {}, {}, [(2, 5)])
case('softmax_cross_entropy', {}, {}, [(1,)])
unary('smooth_l1', {'scalar': 1.0})
for _shapes in [{'data': (0, 2, 5)}, {'data': (4, 2, 5)}, {'label': (2, 3)},
                {'data': (4, 0, 5), 'label': (2, 3)}, {'data': (4, 2, 5), 'label': (3, 3)}]:
    case('CTCLoss', {}, _shapes)
for _shapes in [{'data': (4, 2, 5)}, {'data': (4, 0, 5), 'data_lengths': (2,)},
                {'data': (4, 2, 5), 'label_lengths': (3,)}]:
    case('CTCLoss', {'use_data_lengths': True, 'use_label_lengths': True}, _shapes)
case('CTCLoss', {}, {}, [(2,), None])

# ---- embedding, one_hot, take, pick, gather_nd ---------------------------------------------
for _op in ('Embedding', '_contrib_SparseEmbedding'):
    for _shapes in [{'data': (0, 5)}, {'data': (2, 0)}, {'weight': (10, 4)}, {'data': (0,)},
                    {'data': (2, 5), 'weight': (10, 0)}, {'weight': (10, 5)}]:
        case(_op, {'input_dim': 10, 'output_dim': 4}, _shapes)
    case(_op, {'input_dim': 10, 'output_dim': 4}, {}, [(2, 5, 4)])
for _shape in [(0, 5), (2, 0), (0,)]:
    case('one_hot', {'depth': 6}, {'indices': _shape})
case('one_hot', {'depth': 6}, {}, [(2, 6)])
for _attrs in [{}, {'axis': 1}, {'axis': -1, 'mode': 'wrap'}]:
    for _shapes in [{'a': (0, 5), 'indices': (3,)}, {'a': (4, 0), 'indices': (0, 2)},
                    {'a': (4, 5)}, {'indices': (2, 3)}, {'a': (4, 5, 6), 'indices': (0,)}]:
        case('take', _attrs, _shapes)
    case('take', _attrs, {}, [(2, 5)])
    case('take', _attrs, {'a': (4, 5)}, [(3, 5)])
for _attrs in [{}, {'axis': 0}, {'axis': 1, 'keepdims': True}]:
    for _shapes in [{'data': (0, 5)}, {'data': (4, 5)}, {'index': (4,)}, {'data': (0, 5, 3)},
                    {'data': (4, 5), 'index': (3,)}, {'data': (4, 0), 'index': (0,)}]:
        case('pick', _attrs, _shapes)
    case('pick', _attrs, {}, [(4,)])
for _shapes in [{'data': (0, 5, 3), 'indices': (2, 4)}, {'data': (4, 5, 3), 'indices': (0, 4)},
                {'data': (4, 5), 'indices': (2, 0)}, {'indices': (2, 4)}, {'data': (4, 5)},
                {'data': (4, 5), 'indices': (3, 4)}]:
    case('gather_nd', {}, _shapes)
for _shapes in [{'data': (0,), 'indices': (2, 4)}, {'data': (4,), 'indices': (2, 0)},
                {'indices': (2, 4)}, {'data': (4, 3)}, {'data': (4, 3), 'indices': (2, 0)}]:
    case('scatter_nd', {'shape': (5, 6, 3)}, _shapes)
case('scatter_nd', {'shape': (5, 6)}, {}, [(5, 6)])
for _shapes in [{'a': (0, 5), 'indices': (4,)}, {'a': (4, 5)}, {'indices': (4,)},
                {'a': (4, 5), 'indices': (3,)}]:
    case('batch_take', {}, _shapes)

# ---- shape operators -----------------------------------------------------------------------
for _code in [(0, -1), (-1, 0), (-2,), (-3, -2), (-4, 2, -1, -2), (-4, -1, 2, -2), (0, 0, 2, 2),
              (6, -1), (-1,), (4, 0, -1), (0, -3), (-3, 0), (2, -1, 0), (0, 3, 4), (0, -4, 1, -1, 0)]:
    for _shape in [(6, 3, 4), (0, 3, 4), (6, 0, 4), (6, 3, 0), (0, 0, 4)]:
        case('Reshape', {'shape': _code}, {'data': _shape})
for _code in [(0, -1), (-1, 0), (0, 0, -1), (-1, 4), (2, -1, 0)]:
    for _shape in [(6, 3, 4), (6, 3, 0), (0, 3, 4)]:
        case('Reshape', {'shape': _code, 'reverse': True}, {'data': _shape})
case('Reshape', {'shape': (0, -1)}, {'data': (0, 3, 4)}, [(5, 12)])
case('Reshape', {'shape': (-1, 12)}, {'data': (0, 3, 4)}, [(5, 12)])
case('Reshape', {'shape': (-1, 12)}, {'data': (0, 0, 4)}, [(5, 12)])
case('Reshape', {'shape': (5, 12)}, {'data': (0, 3, 4)})
case('Reshape', {'shape': (5, 12)}, {}, None)
case('Reshape', {'shape': (-1, 12)}, {}, [(5, 12)])
case('Reshape', {'shape': (0, -1)}, {'data': (0, 3, 4)}, [(0, 12)])
case('Reshape', {'target_shape': (0, 12)}, {'data': (5, 3, 4)})
for _shape in [(0, 3, 4), (2, 0, 4), (0,), (2, 3, 4)]:
    case('Flatten', {}, {'data': _shape})
case('Flatten', {}, {}, [(2, 12)])
case('Flatten', {}, {'data': (0, 3, 4)}, [(2, 12)])
for _attrs in [{}, {'axes': (1, 0, 2)}, {'axes': (2, 0, 1)}]:
    for _shape in [(0, 3, 4), (2, 0, 4), (0, 0, 0)]:
        case('transpose', _attrs, {'data': _shape})
    case('transpose', _attrs, {}, [(4, 3, 2)])
    case('transpose', _attrs, {'data': (0, 3, 0)}, [(4, 3, 2)])
for _shape in [(0, 3, 4), (2, 0, 4)]:
    case('SwapAxis', {'dim1': 0, 'dim2': 2}, {'data': _shape})
case('SwapAxis', {'dim1': 0, 'dim2': 2}, {}, [(4, 3, 2)])
for _axis in (0, 1, -1, 3):
    case('expand_dims', {'axis': _axis}, {'data': (0, 3, 4)})
case('expand_dims', {'axis': 1}, {}, [(2, 1, 3)])
case('expand_dims', {'axis': 1}, {'data': (0, 3)}, [(2, 1, 0)])
for _attrs, _shape in [({}, (0, 1, 3)), ({}, (2, 1, 0)), ({'axis': 1}, (0, 1, 3)),
                       ({'axis': 0}, (0, 1, 3)), ({'axis': (1, 2)}, (0, 1, 1)), ({}, (1, 1))]:
    case('squeeze', _attrs, {'data': _shape})
case('squeeze', {'axis': 1}, {}, [(2, 3)])
for _axis in [(0,), (1,), (0, 2)]:
    case('reverse', {'axis': _axis}, {'data': (0, 3, 4)})
case('reverse', {'axis': (0,)}, {}, [(2, 3)])
for _attrs in [{'num_args': 2, 'dim': 1}, {'num_args': 2, 'dim': 0}, {'num_args': 2, 'dim': -1}]:
    for _a, _b in [((0, 3), (0, 4)), ((2, 3), (2, 0)), ((2, 3), None), ((0, 3), (2, 4)),
                   (None, None), ((2, 3), (3, 4)), ((0, 0), (0, 0)), ((2, 3, 4), (2, 3))]:
        case('Concat', _attrs, _pair(('a', 'b'), _a, _b), inputs=['a', 'b'])
    case('Concat', _attrs, {'a': (2, 3)}, [(2, 7)], inputs=['a', 'b'])
    case('Concat', _attrs, {'a': (2, 3)}, [(5, 3)], inputs=['a', 'b'])
    case('Concat', _attrs, {}, [(4, 6)], inputs=['a', 'b'])
    case('Concat', _attrs, {'a': (0, 3), 'b': (2, 0)}, [(0, 7)], inputs=['a', 'b'])
for _attrs in [{'num_args': 2}, {'num_args': 2, 'axis': 1}, {'num_args': 2, 'axis': -1}]:
    for _a, _b in [((0, 3), (2, 0)), ((2, 3), None), (None, None), ((2, 3), (2, 4)),
                   ((0, 0), (0, 0))]:
        case('stack', _attrs, _pair(('a', 'b'), _a, _b), inputs=['a', 'b'])
    case('stack', _attrs, {}, [(2, 2, 3)], inputs=['a', 'b'])
    case('stack', _attrs, {'a': (2, 0)}, [(2, 2, 3)], inputs=['a', 'b'])
for _attrs in [{'num_outputs': 2}, {'num_outputs': 2, 'axis': 0},
               {'num_outputs': 2, 'axis': 1, 'squeeze_axis': True},
               {'num_outputs': 3, 'axis': -1}]:
    for _shape in [(0, 6, 4), (2, 0, 4), (2, 6, 0), (0, 2, 6), (2, 5, 4)]:
        case('SliceChannel', _attrs, {'data': _shape})
    case('SliceChannel', _attrs, {}, [(2, 3, 2)])
    case('SliceChannel', _attrs, {'data': (0, 0, 6)}, [(3, 0, 0)])
for _attrs in [{'indices': (0, 2), 'axis': 1}, {'indices': (0, 1, 3), 'axis': 0},
               {'indices': (), 'sections': 2, 'axis': 1},
               {'indices': (), 'sections': 2, 'axis': 1, 'squeeze_axis': True},
               {'indices': (0, 2), 'axis': -1}]:
    for _shape in [(0, 6, 4), (2, 0, 4), (4, 6, 0), (2, 6, 4)]:
        case('_split_v2', _attrs, {'data': _shape})
    case('_split_v2', _attrs, {}, [(2, 2, 4)])
for _reps in [(2,), (2, 3), (1, 2, 3), (0, 2)]:
    for _shape in [(0, 3), (2, 0), (0, 0)]:
        case('tile', {'reps': _reps}, {'data': _shape})
case('tile', {'reps': (2, 3)}, {}, [(4, 9)])
for _attrs in [{'repeats': 2}, {'repeats': 2, 'axis': 1}, {'repeats': 2, 'axis': 0},
               {'repeats': 3, 'axis': -1}]:
    for _shape in [(0, 3), (2, 0), (2, 3)]:
        case('repeat', _attrs, {'data': _shape})
    case('repeat', _attrs, {}, [(4, 6)])
for _attrs in [{'mode': 'constant', 'pad_width': (0, 0, 0, 0, 1, 2, 3, 1)},
               {'mode': 'edge', 'pad_width': (0, 0, 0, 0, 1, 1, 1, 1)},
               {'mode': 'reflect', 'pad_width': (0, 0, 0, 0, 1, 1, 2, 2, 1, 1)}]:
    _nd = len(_attrs['pad_width']) // 2
    for _shape in [(0, 3) + (5,) * (_nd - 2), (2, 0) + (5,) * (_nd - 2),
                   (2, 3, 0) + (5,) * (_nd - 3)]:
        case('Pad', _attrs, {'data': _shape})
    case('Pad', _attrs, {}, [(2, 3) + (8,) * (_nd - 2)])
for _shapes in [{'lhs': (0, 6), 'rhs': (2, 3, 2)}, {'lhs': (2, 6), 'rhs': (0, 3, 2)},
                {'lhs': (2, 6), 'rhs': (2, 0, 2)}, {'rhs': (2, 3, 2)}, {'lhs': (2, 6)},
                {'lhs': (2, 6), 'rhs': (5, 3)}]:
    case('reshape_like', {}, _shapes)
case('reshape_like', {'lhs_begin': 1, 'lhs_end': 2, 'rhs_begin': 0, 'rhs_end': 2},
     {'lhs': (0, 6, 4), 'rhs': (2, 3)})
case('reshape_like', {}, {'lhs': (0, 6)}, [(4, 3)])
for _op in ('shape_array', 'size_array'):
    for _shape in [(0, 3), (2, 3, 4)]:
        case(_op, {}, {'data': _shape})
    case(_op, {}, {})
for _shape in [(0, 3, 4, 4), (2, 12, 0, 2), (2, 0, 2, 2)]:
    case('depth_to_space', {'block_size': 2}, {'data': _shape})
    case('space_to_depth', {'block_size': 2}, {'data': _shape})
case('depth_to_space', {'block_size': 2}, {}, [(2, 3, 4, 4)])
case('space_to_depth', {'block_size': 2}, {}, [(2, 12, 2, 2)])

# ---- slicing --------------------------------------------------------------------------------
for _attrs in [{'begin': (0, 1), 'end': (2, 3)}, {'begin': (None, 1), 'end': (None, 3)},
               {'begin': (1,), 'end': (None,)}, {'begin': (0, 0), 'end': (-1, 2), 'step': (1, 2)},
               {'begin': (None, None), 'end': (None, None), 'step': (-1, 1)}]:
    for _shape in [(0, 4), (4, 0), (0, 0, 3), (4, 5)]:
        case('slice', _attrs, {'data': _shape})
    case('slice', _attrs, {}, [(2, 2)])
for _attrs in [{'axis': 1, 'begin': 1, 'end': 3}, {'axis': 0, 'begin': 0, 'end': None},
               {'axis': -1, 'begin': -2, 'end': None}, {'axis': 0, 'begin': 1, 'end': -1}]:
    for _shape in [(0, 4), (4, 0), (0, 0, 3), (4, 5)]:
        case('slice_axis', _attrs, {'data': _shape})
    case('slice_axis', _attrs, {}, [(2, 2)])
for _attrs in [{}, {'axes': (0,)}, {'axes': (1, -1)}]:
    for _shapes in [{'data': (0, 5, 6), 'shape_like': (2, 3, 4)}, {'data': (4, 5, 6)},
                    {'data': (4, 5, 6), 'shape_like': (0, 3, 0)}, {'shape_like': (2, 3, 4)},
                    {'data': (4, 5, 6), 'shape_like': (2, 3)}]:
        case('slice_like', _attrs, _shapes)
    case('slice_like', _attrs, {'shape_like': (2, 3, 4)}, [(2, 3, 4)])
for _shapes in [{'lhs': (0, 5), 'rhs': (2, 2)}, {'lhs': (4, 5)}, {'rhs': (2, 2)},
                {'lhs': (4, 0), 'rhs': (0, 2)}, {'lhs': (4, 5), 'rhs': (2, 3)}]:
    case('_slice_assign', {'begin': (1, 1), 'end': (3, 3)}, _shapes)
case('_slice_assign', {'begin': (1, 1), 'end': (3, 3)}, {}, [(4, 5)])
for _shape in [(0, 5), (4, 0), (4, 5)]:
    case('_slice_assign_scalar', {'begin': (1, 1), 'end': (3, 3), 'scalar': 2}, {'data': _shape})
case('_slice_assign_scalar', {'begin': (1, 1), 'end': (3, 3)}, {}, [(4, 5)])
