"""The rest of the partial shape cases (see partial_shape_cases.py): reductions, ordering,
products and linear algebra, sequences and RNN, sources (zeros, arange, random), optimizer
updates, image and contrib operators."""
try:
    from .partial_shape_cases import case, unary, _pair
except ImportError:   # run as a top-level module by the fixture generator
    from partial_shape_cases import case, unary, _pair

# ---- reductions ------------------------------------------------------------------------------
_REDUCE_ATTRS = [{}, {'axis': 1}, {'axis': (0, 2)}, {'axis': 1, 'keepdims': True},
                 {'axis': 1, 'exclude': True}, {'axis': -1}, {'keepdims': True}]
for _op in ('sum', 'mean', 'max', 'min', 'prod', 'nansum', 'nanprod', '_square_sum'):
    for _attrs in _REDUCE_ATTRS:
        for _shape in [(0, 3, 4), (2, 0, 4), (0, 0, 0)]:
            case(_op, _attrs, {'data': _shape})
        case(_op, _attrs, {}, [(2, 4)])
for _attrs in [{}, {'axis': 1}, {'axis': (0, 1)}, {'ord': 1, 'axis': 1, 'keepdims': True}]:
    for _shape in [(0, 3, 4), (2, 0, 4)]:
        case('norm', _attrs, {'data': _shape})
    case('norm', _attrs, {}, [(2, 4)])
for _op in ('argmax', 'argmin'):
    for _attrs in [{}, {'axis': 1}, {'axis': 1, 'keepdims': True}, {'axis': -1}]:
        for _shape in [(0, 3, 4), (2, 0, 4)]:
            case(_op, _attrs, {'data': _shape})
        case(_op, _attrs, {}, [(2, 4)])
for _shape in [(0, 3), (2, 0), (0, 3, 4)]:
    case('argmax_channel', {}, {'data': _shape})
case('argmax_channel', {}, {}, [(2,)])
for _attrs in [{}, {'axes': (1,)}, {'axes': (0, 2), 'keepdims': True}]:
    for _shape in [(0, 3, 4), (2, 0, 4)]:
        case('moments', _attrs, {'data': _shape})
    case('moments', _attrs, {}, [(3,), None])

# ---- ordering --------------------------------------------------------------------------------
for _attrs in [{}, {'k': 2, 'ret_typ': 'value'}, {'k': 2, 'ret_typ': 'both', 'axis': 0},
               {'ret_typ': 'mask'}, {'k': 2, 'axis': None}]:
    for _shape in [(0, 5), (4, 0), (4, 5)]:
        case('topk', _attrs, {'data': _shape})
    case('topk', _attrs, {}, [(4, 1)])
for _op in ('sort', 'argsort'):
    for _attrs in [{}, {'axis': 0}, {'axis': None}]:
        for _shape in [(0, 5), (4, 0)]:
            case(_op, _attrs, {'data': _shape})
        case(_op, _attrs, {}, [(4, 5)])

# ---- products, linear algebra --------------------------------------------------------------
_DOT = [{}, {'transpose_a': True}, {'transpose_b': True}]
for _attrs in _DOT:
    for _a, _b in [((0, 3), (3, 4)), ((2, 3), (0, 4)), ((2, 0), (0, 4)), ((2, 3), None),
                   (None, (3, 4)), ((2, 3, 4), (4, 5)), ((0, 3, 4), (0, 5)), ((3,), (3,)),
                   ((0,), (0,)), ((2, 3), (4, 5)), ((0, 3), (3,))]:
        case('dot', _attrs, _pair(('lhs', 'rhs'), _a, _b))
    case('dot', _attrs, {'lhs': (2, 3)}, [(2, 4)])
    case('dot', _attrs, {}, [(2, 4)])
    for _a, _b in [((0, 2, 3), (0, 3, 4)), ((5, 2, 3), (0, 0, 4)), ((5, 0, 3), None),
                   ((5, 2, 3), (4, 3, 4)), ((0, 2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3))]:
        case('batch_dot', _attrs, _pair(('lhs', 'rhs'), _a, _b))
    case('batch_dot', _attrs, {}, [(5, 2, 4)])
for _attrs in [{}, {'transpose_a': True}, {'axis': -3}]:
    for _a, _b in [((0, 2, 3), (0, 3, 4)), ((5, 2, 3), (0, 0, 4)), ((5, 0, 3), None),
                   ((2, 3), (3, 4)), ((5, 2, 3), (4, 3, 4))]:
        case('_linalg_gemm2', _attrs, _pair(('A', 'B'), _a, _b))
        case('_linalg_gemm', _attrs, _pair(('A', 'B'), _a, _b))
    case('_linalg_gemm', _attrs, {'C': (0, 2, 4)})
    case('_linalg_gemm', _attrs, {'A': (5, 2, 3), 'B': (0, 3, 4), 'C': (0, 2, 0)})
    case('_linalg_gemm2', _attrs, {}, [(5, 2, 4)])
    case('_linalg_gemm', _attrs, {}, [(5, 2, 4)])
for _shapes in [{'a': (0, 3), 'b': (0, 4)}, {'a': (2, 3), 'b': (2, 0)}, {'a': (2, 3)},
                {'a': (2, 3), 'b': (4, 5)}]:
    case('khatri_rao', {'num_args': 2}, _shapes, inputs=['a', 'b'])
for _op in ('_linalg_potrf', '_linalg_potri', '_linalg_inverse', '_linalg_gelqf',
            '_linalg_syevd', '_linalg_det', '_linalg_slogdet', '_linalg_sumlogdiag',
            '_linalg_syrk', '_linalg_extractdiag', '_linalg_extracttrian', '_linalg_makediag',
            '_linalg_maketrian'):
    for _shape in [(0, 3, 3), (2, 0, 0), (2, 3, 0), (3, 3), (0, 3), (2, 3, 4), (6,), (0,)]:
        case(_op, {}, {'A': _shape})
    case(_op, {}, {}, [(2, 3, 3)])
for _op in ('_linalg_trmm', '_linalg_trsm'):
    for _attrs in [{}, {'rightside': True}]:
        for _a, _b in [((0, 3, 3), (2, 3, 4)), ((2, 3, 3), (0, 0, 4)), ((3, 3), None),
                       (None, (2, 3, 4)), ((2, 3, 3), (2, 4, 4))]:
            case(_op, _attrs, _pair(('A', 'B'), _a, _b))
        case(_op, _attrs, {}, [(2, 3, 3)])

# ---- sequences and RNN ----------------------------------------------------------------------
for _op in ('SequenceLast', 'SequenceMask', 'SequenceReverse'):
    for _attrs in [{}, {'axis': 1}]:
        for _shape in [(0, 2, 5), (4, 0, 5), (4, 2, 0), (4, 2)]:
            case(_op, _attrs, {'data': _shape})
        case(_op, _attrs, {}, [(4, 2, 5)])
    for _attrs in [{'use_sequence_length': True}, {'use_sequence_length': True, 'axis': 1}]:
        for _shapes in [{'data': (4, 0, 5)}, {'data': (0, 2, 5), 'sequence_length': (2,)},
                        {'sequence_length': (3,)}, {'data': (4, 2, 5), 'sequence_length': (3,)}]:
            case(_op, _attrs, _shapes)
for _mode in ('lstm', 'gru', 'rnn_tanh'):
    for _attrs in [{'state_size': 4, 'num_layers': 1, 'mode': _mode},
                   {'state_size': 4, 'num_layers': 2, 'mode': _mode, 'bidirectional': True,
                    'state_outputs': True}]:
        for _shapes in [{'data': (5, 0, 3)}, {'data': (0, 2, 3)}, {'data': (5, 2, 0)},
                        {'data': (5, 2, 3)}, {'data': (5, 0, 3), 'state': (0, 2, 4)},
                        {'state': (1, 2, 4)}, {'data': (5, 2, 3), 'parameters': (7,)}]:
            case('RNN', _attrs, _shapes)
        case('RNN', _attrs, {}, [(5, 2, 4)])
case('RNN', {'state_size': 4, 'num_layers': 1, 'mode': 'lstm', 'projection_size': 2},
     {'data': (5, 0, 3)})
case('RNN', {'state_size': 4, 'num_layers': 1, 'mode': 'lstm', 'use_sequence_length': True},
     {'data': (5, 0, 3)})

# ---- upsampling, resizing --------------------------------------------------------------------
for _shape in [(0, 3, 4, 4), (2, 0, 4, 4), (2, 3, 0, 4), (0, 0, 0, 0)]:
    case('UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 1}, {'data': _shape},
         inputs=['data'])
    case('UpSampling', {'scale': 2, 'sample_type': 'bilinear', 'num_filter': 3, 'num_args': 2},
         {'data': _shape}, inputs=['data', 'weight'])
case('UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 1}, {}, [(2, 3, 8, 8)],
     inputs=['data'])
for _shapes in [{'a': (0, 3, 4, 4), 'b': (0, 2, 2, 2)}, {'a': (2, 3, 4, 4), 'b': (2, 2, 0, 2)},
                {'a': (2, 3, 4, 4)}, {'b': (2, 2, 2, 2)}]:
    case('UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 2}, _shapes,
         inputs=['a', 'b'])
    case('UpSampling', {'scale': 2, 'sample_type': 'nearest', 'num_args': 2,
                        'multi_input_mode': 'sum'}, _shapes, inputs=['a', 'b'])
for _shape in [(0, 3, 8, 8), (2, 0, 8, 8), (2, 3, 0, 8)]:
    case('_contrib_BilinearResize2D', {'height': 4, 'width': 5}, {'data': _shape})
    case('_contrib_BilinearResize2D', {'scale_height': 2.0, 'scale_width': 2.0, 'mode': 'odd_scale'},
         {'data': _shape})
    case('_contrib_AdaptiveAvgPooling2D', {'output_size': (2, 3)}, {'data': _shape})
    case('_contrib_AdaptiveAvgPooling2D', {}, {'data': _shape})
case('_contrib_BilinearResize2D', {'height': 4, 'width': 5}, {}, [(2, 3, 4, 5)])
case('_contrib_AdaptiveAvgPooling2D', {'output_size': 2}, {}, [(2, 3, 2, 2)])
for _shape in [(0, 3, 8, 8), (2, 0, 8, 8), (2, 3, 0, 8)]:
    case('im2col', {'kernel': (3, 3)}, {'data': _shape})
for _shape in [(0, 27, 36), (2, 0, 36), (2, 27, 0)]:
    case('col2im', {'kernel': (3, 3), 'output_size': (8, 8)}, {'data': _shape})
case('im2col', {'kernel': (3, 3)}, {}, [(2, 27, 36)])
case('col2im', {'kernel': (3, 3), 'output_size': (8, 8)}, {}, [(2, 3, 8, 8)])

# ---- sources: zeros, arange, random ----------------------------------------------------------
for _op in ('_zeros', '_ones', '_full'):
    for _shape in [(2, 3), (0, 3), (0,)]:
        case(_op, {'shape': _shape, 'value': 1.0} if _op == '_full' else {'shape': _shape})
    _value = {'value': 1.0} if _op == '_full' else {}
    case(_op, dict(_value, shape=(0, 3)), {}, [(2, 3)])
    case(_op, _value, {}, [(2, 3)])
for _attrs in [{'start': 0, 'stop': 5}, {'start': 2, 'stop': 10, 'step': 3, 'repeat': 2},
               {'start': 0, 'infer_range': True}]:
    case('_arange', _attrs)
    case('_arange', _attrs, {}, [(10,)])
case('_eye', {'N': 3})
case('_eye', {'N': 3, 'M': 4, 'k': 1})
case('_linspace', {'start': 0, 'stop': 1, 'num': 5})
for _shape in [(0, 3), (2, 3, 0), (0,), None]:
    case('_contrib_arange_like', {}, {} if _shape is None else {'data': _shape})
    case('_contrib_arange_like', {'axis': 1}, {} if _shape is None else {'data': _shape})
_DISTS = {'exponential': {}, 'gamma': {}, 'generalized_negative_binomial': {},
          'negative_binomial': {}, 'normal': {}, 'poisson': {}, 'uniform': {}}
for _dist in _DISTS:
    for _shape in [(2, 3), (0, 3), (0,)]:
        case('_random_' + _dist, {'shape': _shape})
    case('_random_' + _dist, {'shape': (0, 3)}, {}, [(2, 3)])
    case('_random_' + _dist, {}, {}, [(2, 3)])
    unary('_random_%s_like' % _dist)
for _shape in [(2, 3), (0, 3)]:
    case('_random_randint', {'low': 0, 'high': 5, 'shape': _shape})
case('_random_randint', {'low': 0, 'high': 5}, {}, [(2, 3)])
_SAMPLE = {'exponential': ['lam'], 'gamma': ['alpha', 'beta'],
           'generalized_negative_binomial': ['mu', 'alpha'], 'negative_binomial': ['k', 'p'],
           'normal': ['mu', 'sigma'], 'poisson': ['lam'], 'uniform': ['low', 'high']}
for _dist, _params in _SAMPLE.items():
    for _attrs in [{}, {'shape': (2,)}, {'shape': (0, 2)}]:
        for _shape in [(0, 3), (3,), None]:
            case('_sample_' + _dist, _attrs, {} if _shape is None else {_params[0]: _shape})
        if len(_params) == 2:
            case('_sample_' + _dist, _attrs, {_params[1]: (0, 3)})
            case('_sample_' + _dist, _attrs, {_params[0]: (2, 3), _params[1]: (3,)})
        case('_sample_' + _dist, _attrs, {}, [(2, 3, 2)])
for _attrs in [{}, {'shape': (2,)}, {'get_prob': True}]:
    for _shape in [(0, 5), (5,), (2, 0)]:
        case('_sample_multinomial', _attrs, {'data': _shape})
    case('_sample_multinomial', _attrs, {}, [(4,)] + ([None] if 'get_prob' in _attrs else []))
case('_sample_unique_zipfian', {'range_max': 100, 'shape': (2, 5)})
case('_sample_unique_zipfian', {'range_max': 100, 'shape': (0, 5)})
unary('_shuffle')
_PDF = {'dirichlet': ['alpha'], 'exponential': ['lam'], 'gamma': ['alpha', 'beta'],
        'generalized_negative_binomial': ['mu', 'alpha'], 'negative_binomial': ['k', 'p'],
        'normal': ['mu', 'sigma'], 'poisson': ['lam'], 'uniform': ['low', 'high']}
for _dist, _params in _PDF.items():
    _op = '_random_pdf_' + _dist
    for _shapes in [{'sample': (0, 5)}, {'sample': (2, 5)}, {_params[0]: (2,)},
                    {'sample': (0, 5), _params[0]: (2,)}, {'sample': (2, 0), _params[-1]: (0,)},
                    {'sample': (2, 5), _params[0]: (3,)}]:
        if _dist == 'dirichlet':
            _shapes = {k: v + (4,) for k, v in _shapes.items()}
        case(_op, {}, _shapes)
    case(_op, {}, {}, [(2, 5)])

# ---- optimizer updates ----------------------------------------------------------------------
_UPDATES = {'sgd_update': (['weight', 'grad'], {'lr': 0.1}),
            'sgd_mom_update': (['weight', 'grad', 'mom'], {'lr': 0.1}),
            'mp_sgd_update': (['weight', 'grad', 'weight32'], {'lr': 0.1}),
            'mp_sgd_mom_update': (['weight', 'grad', 'mom', 'weight32'], {'lr': 0.1}),
            'nag_mom_update': (['weight', 'grad', 'mom'], {'lr': 0.1}),
            'mp_nag_mom_update': (['weight', 'grad', 'mom', 'weight32'], {'lr': 0.1}),
            'adam_update': (['weight', 'grad', 'mean', 'var'], {'lr': 0.1}),
            'rmsprop_update': (['weight', 'grad', 'n'], {'lr': 0.1}),
            'rmspropalex_update': (['weight', 'grad', 'n', 'g', 'delta'], {'lr': 0.1}),
            'ftrl_update': (['weight', 'grad', 'z', 'n'], {'lr': 0.1}),
            'ftml_update': (['weight', 'grad', 'd', 'v', 'z'], {'lr': 0.1, 't': 1}),
            'signsgd_update': (['weight', 'grad'], {'lr': 0.1}),
            'signum_update': (['weight', 'grad', 'mom'], {'lr': 0.1}),
            'lamb_update_phase1': (['weight', 'grad', 'mean', 'var'], {'t': 1, 'wd': 0.1}),
            'mp_lamb_update_phase1': (['weight', 'grad', 'mean', 'var', 'weight32'],
                                      {'t': 1, 'wd': 0.1}),
            'lamb_update_phase2': (['weight', 'g', 'r1', 'r2'], {'lr': 0.1}),
            'mp_lamb_update_phase2': (['weight', 'g', 'r1', 'r2', 'weight32'], {'lr': 0.1})}
for _op, (_args, _attrs) in _UPDATES.items():
    _ins = {a: a for a in _args}     # MXNet does not create the inputs of update operators
    case(_op, _attrs, {_args[0]: (0, 3), _args[1]: (2, 0)}, inputs=_ins)
    case(_op, _attrs, {_args[1]: (2, 3)}, inputs=_ins)
    case(_op, _attrs, {_args[-1]: (0, 3)}, inputs=_ins)
    case(_op, _attrs, {_args[0]: (2, 3), _args[1]: (2, 4)}, inputs=_ins)
    case(_op, _attrs, {}, [(2, 3)], inputs=_ins)
for _op, _per in [('multi_sgd_update', 2), ('multi_sgd_mom_update', 3),
                  ('multi_mp_sgd_update', 3), ('multi_mp_sgd_mom_update', 4)]:
    _names = ['x%d' % i for i in range(2 * _per)]
    _attrs = {'lrs': (0.1, 0.1), 'wds': (0.0, 0.0), 'num_weights': 2}
    _ins = {n: n for n in _names}
    case(_op, _attrs, {'x0': (0, 3), 'x1': (2, 0), 'x%d' % _per: (5,)}, inputs=_ins)
    case(_op, _attrs, {}, [(2, 3), None], inputs=_ins)
for _shapes in [{'a': (0, 3), 'b': (2,)}, {}]:
    case('multi_all_finite', {'num_arrays': 2}, _shapes, inputs=['a', 'b'])
    case('amp_multicast', {'num_outputs': 2}, _shapes, inputs=['a', 'b'])
case('amp_multicast', {'num_outputs': 2}, {}, [(2, 3), None], inputs=['a', 'b'])
for _shape in [(0, 3), (2, 3)]:
    case('all_finite', {}, {'data': _shape})
case('all_finite', {}, {}, [(1,)])

# ---- image operators (HWC or NHWC) ---------------------------------------------------------
_IMAGE = {'_image_to_tensor': {}, '_image_flip_left_right': {}, '_image_flip_top_bottom': {},
          '_image_random_flip_left_right': {}, '_image_random_flip_top_bottom': {},
          '_image_normalize': {'mean': (0.5, 0.5, 0.5), 'std': (0.2, 0.2, 0.2)},
          '_image_random_brightness': {'min_factor': 0.5, 'max_factor': 1.5},
          '_image_random_contrast': {'min_factor': 0.5, 'max_factor': 1.5},
          '_image_random_saturation': {'min_factor': 0.5, 'max_factor': 1.5},
          '_image_random_hue': {'min_factor': 0.5, 'max_factor': 1.5},
          '_image_random_color_jitter': {'brightness': 0.1, 'contrast': 0.1, 'saturation': 0.1,
                                         'hue': 0.1},
          '_image_adjust_lighting': {'alpha': (0.1, 0.1, 0.1)},
          '_image_random_lighting': {},
          '_image_resize': {'size': (4, 5)},
          '_image_crop': {'x': 1, 'y': 1, 'width': 3, 'height': 2}}
for _op, _attrs in _IMAGE.items():
    for _shape in [(0, 6, 3), (8, 0, 3), (8, 6, 0), (0, 8, 6, 3), (2, 8, 6, 3), (3, 8, 6)]:
        case(_op, _attrs, {'data': _shape})
    case(_op, _attrs, {}, [(8, 6, 3)])

# ---- spatial, detection and contrib ----------------------------------------------------------
for _shapes in [{'data': (0, 3, 8, 8), 'grid': (2, 2, 4, 4)}, {'data': (2, 3, 8, 8)},
                {'grid': (0, 2, 4, 4)}, {'data': (2, 0, 8, 8), 'grid': (0, 2, 4, 0)}]:
    case('BilinearSampler', {}, _shapes)
case('BilinearSampler', {}, {}, [(2, 3, 4, 4)])
for _attrs, _shape in [({'transform_type': 'affine', 'target_shape': (4, 5)}, (0, 6)),
                       ({'transform_type': 'affine', 'target_shape': (4, 5)}, (2, 0)),
                       ({'transform_type': 'warp'}, (0, 2, 4, 5)),
                       ({'transform_type': 'warp'}, (2, 2, 0, 5))]:
    case('GridGenerator', _attrs, {'data': _shape})
case('GridGenerator', {'transform_type': 'affine', 'target_shape': (4, 5)}, {}, [(2, 2, 4, 5)])
_ST = {'transform_type': 'affine', 'sampler_type': 'bilinear', 'target_shape': (4, 5)}
for _shapes in [{'data': (0, 3, 8, 8)}, {'data': (2, 3, 8, 8), 'loc': (0, 6)}, {'loc': (2, 6)},
                {'data': (2, 0, 8, 8), 'loc': (2, 6)}]:
    case('SpatialTransformer', _ST, _shapes)
for _shapes in [{'a': (0, 3, 8, 8)}, {'a': (2, 3, 0, 8)}, {}]:
    case('Crop', {'num_args': 1, 'h_w': (4, 5)}, _shapes, inputs=['a'])
    case('Crop', {'num_args': 2}, dict(_shapes, b=(2, 3, 4, 5)), inputs=['a', 'b'])
    case('Crop', {'num_args': 2, 'center_crop': True}, dict(_shapes, b=(0, 0, 4, 5)),
         inputs=['a', 'b'])
_CORR = {'kernel_size': 1, 'max_displacement': 2, 'stride1': 1, 'stride2': 1, 'pad_size': 2}
for _shapes in [{'data1': (0, 3, 8, 8)}, {'data1': (2, 3, 8, 8)}, {'data2': (2, 3, 8, 8)},
                {'data1': (2, 3, 0, 8), 'data2': (0, 3, 8, 8)}]:
    case('Correlation', _CORR, _shapes)
for _op, _attrs in [('ROIPooling', {'pooled_size': (2, 2), 'spatial_scale': 0.5}),
                    ('_contrib_ROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 0.5}),
                    ('_contrib_PSROIPooling', {'pooled_size': 2, 'spatial_scale': 0.5,
                                               'output_dim': 2}),
                    ('_contrib_RROIAlign', {'pooled_size': (2, 2), 'spatial_scale': 0.5})]:
    _rois = 6 if _op == '_contrib_RROIAlign' else 5
    for _shapes in [{'data': (0, 8, 8, 8), 'rois': (3, _rois)}, {'data': (2, 8, 8, 8)},
                    {'rois': (3, _rois)}, {'data': (2, 8, 0, 8), 'rois': (0, _rois)}]:
        case(_op, _attrs, _shapes)
    case(_op, _attrs, {}, [(3, 8, 2, 2)])
_DCN = {'kernel': (3, 3), 'num_filter': 4}
for _op in ('_contrib_DeformableConvolution', '_contrib_ModulatedDeformableConvolution'):
    for _shapes in [{'data': (0, 3, 8, 8)}, {'data': (2, 3, 8, 8)}, {'weight': (4, 3, 3, 3)},
                    {'data': (2, 0, 8, 8), 'offset': (2, 18, 6, 6)}]:
        case(_op, _DCN, _shapes)
for _shapes in [{'data': (0, 5, 6)}, {'data': (2, 5, 0)}, {'data': (5, 6)}, {}]:
    case('_contrib_box_nms', {}, _shapes)
case('_contrib_box_nms', {}, {}, [(2, 5, 6), None])
for _shapes in [{'lhs': (0, 4), 'rhs': (3, 4)}, {'lhs': (2, 5, 4), 'rhs': (0, 4)}, {'lhs': (2, 4)},
                {'lhs': (2, 3), 'rhs': (3, 4)}]:
    case('_contrib_box_iou', {}, _shapes)
for _shapes in [{'data': (0, 5, 6)}, {'data': (5, 0)}, {}]:
    case('_contrib_bipartite_matching', {'threshold': 0.5}, _shapes)
for _shapes in [{'data': (0, 5, 4), 'anchors': (1, 5, 4)}, {'data': (2, 5, 4)},
                {'anchors': (1, 5, 4)}]:
    case('_contrib_box_decode', {}, _shapes)
for _shapes in [{'samples': (0, 5), 'matches': (2, 5), 'anchors': (2, 5, 4), 'refs': (2, 3, 4)},
                {'samples': (2, 5)}, {'anchors': (2, 0, 4), 'means': (4,)}]:
    case('_contrib_box_encode', {}, _shapes)
for _shape in [(0, 3, 8, 8), (2, 3, 0, 8), (2, 3, 8, 8)]:
    case('_contrib_MultiBoxPrior', {'sizes': (0.5, 0.25), 'ratios': (1, 2)}, {'data': _shape})
for _shapes in [{'cls_prob': (0, 3, 10), 'loc_pred': (2, 40), 'anchor': (1, 10, 4)},
                {'cls_prob': (2, 3, 10)}, {'anchor': (1, 10, 4)}]:
    case('_contrib_MultiBoxDetection', {}, _shapes)
for _shapes in [{'anchor': (1, 10, 4), 'label': (0, 3, 5), 'cls_pred': (2, 3, 10)},
                {'anchor': (1, 10, 4), 'label': (2, 3, 5), 'cls_pred': (0, 3, 10)},
                {'anchor': (1, 10, 4)}]:
    case('_contrib_MultiBoxTarget', {}, _shapes)
for _op in ('_contrib_Proposal', '_contrib_MultiProposal'):
    for _shapes in [{'cls_prob': (1, 24, 4, 4), 'bbox_pred': (1, 48, 4, 4), 'im_info': (1, 3)},
                    {'cls_prob': (0, 24, 4, 4)}, {'cls_prob': (2, 24, 0, 4)}]:
        case(_op, {}, _shapes)
        case(_op, {'output_score': True, 'rpn_post_nms_top_n': 10}, _shapes)
for _shape in [(0, 3), (2, 0, 4), (2, 3)]:
    case('_contrib_index_array', {}, {'data': _shape})
    case('_contrib_index_array', {'axes': (1,)}, {'data': _shape})
case('_contrib_index_array', {}, {}, [(2, 3, 2)])
for _shapes in [{'old_tensor': (0, 4), 'index_vector': (2,), 'new_tensor': (2, 4)},
                {'old_tensor': (5, 4)}, {'new_tensor': (2, 0)}, {'old_tensor': (5, 4),
                                                                 'new_tensor': (2, 3)}]:
    case('_contrib_index_copy', {}, _shapes)
case('_contrib_index_copy', {}, {}, [(5, 4)])
for _shapes in [{'data': (0, 4), 'index': (3,)}, {'data': (3, 4)}, {'index': (3,)}]:
    case('_contrib_boolean_mask', {}, _shapes)
for _shapes in [{'a': (0, 3), 'b': (2, 3)}, {'a': (2, 3)}, {'a': (2, 3), 'b': (2, 4)}]:
    case('_contrib_allclose', {}, _shapes)
for _shape in [(0, 3), (2, 3)]:
    case('_contrib_getnnz', {}, {'data': _shape})
unary('_contrib_quadratic', {'a': 1.0})
for _op in ('_contrib_quantize', '_contrib_dequantize'):
    for _shapes in [{'data': (0, 3)}, {'data': (2, 3), 'min_range': (1,)}, {'min_range': (2,)},
                    {'data': (2, 3), 'max_range': (0,)}]:
        case(_op, {}, _shapes)
    case(_op, {}, {}, [(2, 3), None, None])
_HAWKES = ['lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length', 'max_time']
for _shapes in [{'lda': (0, 3), 'alpha': (3,), 'lags': (2, 7)}, {'lda': (2, 3)},
                {'lags': (2, 7)}, {'lda': (2, 3), 'lags': (0, 0), 'state': (2, 0)}]:
    case('_contrib_hawkesll', {}, _shapes)
for _op, _args in [('_contrib_interleaved_matmul_selfatt_qk', ['queries_keys_values']),
                   ('_contrib_interleaved_matmul_selfatt_valatt', ['queries_keys_values',
                                                                   'attention']),
                   ('_contrib_interleaved_matmul_encdec_qk', ['queries', 'keys_values']),
                   ('_contrib_interleaved_matmul_encdec_valatt', ['keys_values', 'attention'])]:
    for _shapes in [{_args[0]: (5, 0, 24)}, {_args[0]: (5, 2, 24)}, {_args[-1]: (4, 5, 5)}]:
        case(_op, {'heads': 2}, _shapes)
for _shapes in [{'data': (0, 3), 'indices': (2,)}, {'data': (4, 3)}, {'indices': (2,)}]:
    case('_sparse_retain', {}, _shapes)
unary('cast_storage', {'stype': 'default'})
unary('_CrossDeviceCopy')
for _attrs in [{'bin_cnt': 4, 'range': (0, 1)}]:
    for _shape in [(0, 3), (5,)]:
        case('_histogram', _attrs, {'data': _shape}, inputs=['data'])
for _shapes in [{'data': (0, 3)}, {'data': (5,), 'bins': (6,)}, {'bins': (0,)}]:
    case('_histogram', {}, _shapes)
for _attrs in [{}, {'axis': 1}, {'axis': 0}]:
    for _shape in [(0, 3), (2, 0)]:
        case('_np_cumsum', _attrs, {'a': _shape}, inputs={'a': 'a'})
    case('_np_cumsum', _attrs, {}, [(6,)], inputs={'a': 'a'})
for _shape in [(2, 0), (0, 5), (2, 5)]:
    case('_ravel_multi_index', {'shape': (3, 4)}, {'data': _shape})
for _shape in [(0,), (5,), (2, 0)]:
    case('_unravel_index', {'shape': (3, 4)}, {'data': _shape})
for _attrs in [{}, {'k': 1}, {'axis1': 1, 'axis2': 2}]:
    for _shape in [(0, 3), (4, 0), (0,), (3,), (2, 0, 4), (0, 3, 4)]:
        case('diag', _attrs, {'data': _shape})
