"""Shape, indexing and arithmetic cases (same form as layer_cases.CASES)."""
import numpy as np

import mxmod as mx

from .layer_cases import R, _d, _one, _x

sym = mx.sym


def _two(net, shape_a, shape_b, **kw):
    return lambda: (net(_d('a'), _d('b')), {'a': _x(*shape_a, **kw), 'b': _x(*shape_b, **kw)})


def _ints(high, *shape):
    return R.randint(0, high, shape).astype(np.float32)


SHAPE_CASES = {
    'flatten': _one(lambda d: sym.Flatten(d), 2, 3, 4),
    'reshape_copy_infer': _one(lambda d: sym.Reshape(d, shape=(0, -1)), 2, 3, 4),
    'reshape_rest': _one(lambda d: sym.Reshape(d, shape=(-2,)), 2, 3, 4),
    'reshape_merge': _one(lambda d: sym.Reshape(d, shape=(-3, -2)), 2, 3, 4, 5),
    'reshape_split': _one(lambda d: sym.Reshape(d, shape=(-4, 2, -1, -2)), 4, 3, 5),
    'reshape_reverse': _one(lambda d: sym.Reshape(d, shape=(-1, 0), reverse=True), 2, 3, 4),
    'reshape_plain': _one(lambda d: sym.Reshape(d, shape=(3, 8)), 2, 3, 4),
    'reshape_legacy': _one(lambda d: sym.Reshape(d, target_shape=(0, 6)), 2, 3, 4),
    'transpose': _one(lambda d: sym.transpose(d, axes=(1, 2, 0)), 2, 3, 4),
    'transpose_rev': _one(lambda d: sym.transpose(d), 2, 3, 4),
    'swapaxis': _one(lambda d: sym.SwapAxis(d, dim1=0, dim2=2), 2, 3, 4),
    'expand_dims': _one(lambda d: sym.expand_dims(d, axis=-1), 2, 3),
    'squeeze': _one(lambda d: sym.squeeze(d), 2, 1, 3, 1),
    'squeeze_axis': _one(lambda d: sym.squeeze(d, axis=(1,)), 2, 1, 3, 1),
    'squeeze_all': _one(lambda d: sym.squeeze(d), 1, 1),
    'concat': _two(lambda a, b: sym.Concat(a, b, dim=1), (2, 3), (2, 4)),
    'stack': _two(lambda a, b: sym.stack(a, b, axis=1), (2, 3), (2, 3)),
    'split': _one(lambda d: sym.Group(list(sym.SliceChannel(d, num_outputs=3, axis=1))),
                  2, 6, 2),
    'split_squeeze': _one(lambda d: sym.Group(list(sym.split(d, num_outputs=2, axis=-1,
                                                           squeeze_axis=True))), 2, 3, 2),
    'slice': _one(lambda d: sym.slice(d, begin=(0, 1), end=(None, -1)), 3, 5),
    'slice_step': _one(lambda d: sym.slice(d, begin=(None, 4), end=(None, None),
                                         step=(2, -2)), 5, 6),
    'slice_axis': _one(lambda d: sym.slice_axis(d, axis=1, begin=1, end='None') + sym.slice_axis(d, axis=1, begin=0, end=-1), 3, 5),
    'slice_like': _two(lambda a, b: sym.slice_like(a, b, axes=(1,)), (3, 5), (2, 3)),
    'reverse': _one(lambda d: sym.reverse(d, axis=(0, 2)), 2, 3, 4),
    'broadcast_to': _one(lambda d: sym.broadcast_to(d, shape=(0, 4, 3)), 2, 1, 3),
    'broadcast_axis': _one(lambda d: sym.broadcast_axis(d, axis=(1,), size=(5,)), 2, 1, 3),
    'broadcast_like': _two(lambda a, b: sym.broadcast_like(a, b), (2, 1), (2, 4)),
    'broadcast_like_axes': _two(lambda a, b: sym.broadcast_like(a, b, lhs_axes=(1,),
                                                                rhs_axes=(0,)), (2, 1), (4, 2)),
    'tile': _one(lambda d: sym.tile(d, reps=(2, 1, 3)), 2, 3),
    'repeat': _one(lambda d: sym.repeat(d, repeats=2, axis=1), 2, 3),
    'repeat_flat': _one(lambda d: sym.repeat(d, repeats=3), 2, 3),
    'pad_constant': _one(lambda d: sym.Pad(d, mode='constant', constant_value=1.5,
                                         pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), 1, 2, 3, 3),
    'pad_edge': _one(lambda d: sym.Pad(d, mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
                     1, 2, 3, 3),
    'pad_reflect': _one(lambda d: sym.Pad(d, mode='reflect', pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
                        1, 2, 3, 4),
    'cast': _one(lambda d: sym.Cast(d, dtype='float16'), 2, 3),
    'clip': _one(lambda d: sym.clip(d, a_min=-0.5, a_max=0.7), 3, 4),
    'identity_family': _one(lambda d: sym.BlockGrad(sym.identity(sym.MakeLoss(d))), 3, 4),
    'zeros_like_plus': _one(lambda d: sym.zeros_like(d) + sym.ones_like(d) * 2, 2, 3),
    'zeros_const': _one(lambda d: sym.broadcast_add(d + sym.zeros((2, 3)), sym.full((1, 3), 0.5)),
                        2, 3),
    'arange': _one(lambda d: sym.broadcast_add(d, sym.arange(0, 6, 2, repeat=1)), 2, 3),
    'shape_size': _one(lambda d: sym.Group([sym.shape_array(d), sym.size_array(d)]), 2, 3),
    'embedding': lambda: (sym.Embedding(_d(), input_dim=6, output_dim=4, name='embed'),
                          {'data': np.array([[0, 5, 2], [7, 1, -1]], dtype=np.float32)}),
    'take_clip': lambda: (sym.take(_d('a'), _d('b'), axis=1),
                          {'a': _x(3, 5), 'b': np.array([0, 4, 6, -2], dtype=np.float32)}),
    'take_wrap': lambda: (sym.take(_d('a'), _d('b'), mode='wrap'),
                          {'a': _x(5, 2), 'b': np.array([[0, 7], [-1, 3]], dtype=np.float32)}),
    'pick': lambda: (sym.pick(_d('a'), _d('b'), axis=1),
                     {'a': _x(3, 4), 'b': np.array([0, 3, 1], dtype=np.float32)}),
    'one_hot': lambda: (sym.one_hot(_d(), depth=5, on_value=2, off_value=-1),
                        {'data': np.array([0, 3, 4], dtype=np.float32)}),
    'where': lambda: (sym.where(_d('c'), _d('a'), _d('b')),
                      {'c': _ints(2, 3, 4), 'a': _x(3, 4), 'b': _x(3, 4)}),
    'where_rows': lambda: (sym.where(_d('c'), _d('a'), _d('b')),
                           {'c': np.array([1, 0, 1], np.float32), 'a': _x(3, 4), 'b': _x(3, 4)}),
}

def _seq(op, axis, lengths=True, **kw):
    def build():
        shape = (4, 3, 2) if axis == 0 else (3, 4, 2)
        data = _d('data')
        if not lengths:
            return op(data, axis=axis, **kw), {'data': _x(*shape)}
        net = op(data, _d('len'), use_sequence_length=True, axis=axis, **kw)
        return net, {'data': _x(*shape), 'len': np.array([4, 1, 2.7], np.float32)}
    return build


SEQUENCE_CASES = {
    'seq_mask': _seq(sym.SequenceMask, 0, value=-1.0),
    'seq_mask_axis1': _seq(sym.SequenceMask, 1),
    'seq_mask_plain': _seq(sym.SequenceMask, 0, lengths=False),
    'seq_last': _seq(sym.SequenceLast, 0),
    'seq_last_axis1': _seq(sym.SequenceLast, 1),
    'seq_last_plain': _seq(sym.SequenceLast, 1, lengths=False),
    'seq_reverse': _seq(sym.SequenceReverse, 0),
    'seq_reverse_plain': _seq(sym.SequenceReverse, 0, lengths=False),
    'upsample_nearest': _one(lambda d: sym.UpSampling(d, scale=2, sample_type='nearest',
                                                      num_args=1), 1, 2, 3, 3),
    'upsample_concat': _two(lambda a, b: sym.UpSampling(a, b, scale=2, sample_type='nearest',
                                                        num_args=2), (1, 2, 4, 4), (1, 3, 2, 2)),
    'upsample_sum': _two(lambda a, b: sym.UpSampling(a, b, scale=2, sample_type='nearest',
                                                     multi_input_mode='sum', num_args=2),
                         (1, 2, 4, 4), (1, 2, 2, 2)),
    'upsample_bilinear': _one(lambda d: sym.UpSampling(d, scale=2, sample_type='bilinear',
                                                       num_filter=2, num_args=1, name='up'),
                              1, 2, 3, 3),
}

MATH_CASES = {
    'elemwise': _two(lambda a, b: sym.elemwise_div(sym.elemwise_sub(a * b, a + b),
                                                   sym.abs(b) + 1), (3, 4), (3, 4)),
    'broadcast': _two(lambda a, b: sym.broadcast_mul(sym.broadcast_add(a, b),
                                                     sym.broadcast_sub(a, b)), (3, 4), (1, 4)),
    'broadcast_power': _two(lambda a, b: sym.broadcast_power(a, b), (3, 4), (3, 1), low=0.5,
                            high=2),
    'max_min': _two(lambda a, b: sym.broadcast_maximum(a, b) - sym.broadcast_minimum(a, b),
                    (3, 4), (1, 4)),
    'mod': _two(lambda a, b: sym.broadcast_mod(a, b), (3, 4), (3, 4), low=-5, high=5),
    'hypot': _two(lambda a, b: sym.broadcast_hypot(a, b), (3, 4), (3, 4)),
    'compare': _two(lambda a, b: sym.Group([sym.broadcast_equal(a, a), a > b, a >= b, a < b,
                                            a <= b, a != b]), (3, 4), (3, 4)),
    'logical': _two(lambda a, b: sym.Group([sym.broadcast_logical_and(a > 0, b > 0),
                                            sym.broadcast_logical_or(a > 0, b > 0),
                                            sym.broadcast_logical_xor(a > 0, b > 0)]),
                    (3, 4), (3, 4)),
    'scalar': _one(lambda d: ((d + 1.5) * 2 - 0.5) / 4, 3, 4),
    'rscalar': _one(lambda d: (3 - d) + (2 / d) + 2 ** d, 3, 4, low=0.5, high=2),
    'scalar_misc': _one(lambda d: sym.maximum(d, 0.2) + sym.minimum(d, 0.1) + d ** 2
                        + (d % 0.3) + (d == 0.5), 3, 4),
    'add_n': _two(lambda a, b: sym.add_n(a, b, a), (3, 4), (3, 4)),
    'unary': _one(lambda d: sym.Group([getattr(sym, f)(d) for f in (
        'abs', 'ceil', 'floor', 'exp', 'negative', 'sign', 'sin', 'cos', 'tan', 'arctan',
        'sinh', 'cosh', 'tanh', 'arcsinh', 'sigmoid', 'relu', 'softsign', 'square', 'expm1',
        'degrees', 'radians', 'trunc', 'fix', 'cbrt', 'rint', 'round')]), 3, 4),
    'unary_positive': _one(lambda d: sym.Group([getattr(sym, f)(d) for f in (
        'log', 'sqrt', 'reciprocal', 'rsqrt', 'log1p', 'log2', 'log10', 'rcbrt', 'arccosh')]),
        3, 4, low=1.1, high=3),
    'unary_unit': _one(lambda d: sym.Group([getattr(sym, f)(d) for f in (
        'arcsin', 'arccos', 'arctanh')]), 3, 4, low=-0.9, high=0.9),
    'reduce_axes': _one(lambda d: sym.Group([sym.sum(d, axis=1), sym.mean(d, axis=(0, 2),
                                                                            keepdims=True),
                                           sym.max(d, axis=1, exclude=True),
                                           sym.min(d), sym.prod(d, axis=-1)]), 2, 3, 4),
    'reduce_nan': lambda: (sym.Group([sym.nansum(_d('x'), axis=1), sym.nanprod(_d('y'))]),
                           {'x': np.array([[1, np.nan, 2], [0.5, 3, np.nan]], np.float32),
                            'y': np.array([[1, np.nan, 2], [0.5, 3, np.nan]], np.float32)}),
    'norm': _one(lambda d: sym.Group([sym.norm(d), sym.norm(d, ord=1, axis=1),
                                    sym.norm(d, axis=(1, 2), keepdims=True)]), 2, 3, 4),
    'argmax': _one(lambda d: sym.Group([sym.argmax(d, axis=1), sym.argmin(d, axis=0,
                                                                           keepdims=True),
                                      sym.argmax(d), sym.argmax_channel(d)]), 3, 4),
    'topk': _one(lambda d: sym.Group([sym.topk(d, k=2), sym.topk(d, k=2, ret_typ='value',
                                                                  axis=0, is_ascend=True)]
                                   + list(sym.topk(d, k=3, ret_typ='both'))), 3, 5),
    'sort': _one(lambda d: sym.Group([sym.sort(d), sym.argsort(d, axis=0, is_ascend=False)]),
                 3, 5),
    'dot': _two(lambda a, b: sym.dot(a, b), (3, 4), (4, 5)),
    'dot_t': _two(lambda a, b: sym.dot(a, b, transpose_a=True, transpose_b=True), (4, 3), (5, 4)),
    'dot_nd': _two(lambda a, b: sym.dot(a, b), (2, 3, 4), (4, 2, 5)),
    'batch_dot': _two(lambda a, b: sym.batch_dot(a, b, transpose_b=True), (2, 3, 4), (2, 5, 4)),
    'gemm2': _two(lambda a, b: sym.linalg_gemm2(a, b, transpose_a=True, alpha=0.5),
                  (2, 4, 3), (2, 4, 5)),
    'softmax': _one(lambda d: sym.Group([sym.softmax(d, axis=1), sym.softmax(d,
                                                                              temperature=2.0),
                                       sym.log_softmax(d), sym.softmin(d, axis=0)]),
                    2, 3, 4),
    'softmax_activation': _one(lambda d: sym.Group([sym.SoftmaxActivation(d),
                                                  sym.SoftmaxActivation(d, mode='channel')]),
                               2, 3, 4),
    'softmax_output_4d': _one(lambda d: sym.SoftmaxOutput(d, name='softmax'), 2, 3, 2, 2),
    'softmax_output_multi': _one(lambda d: sym.SoftmaxOutput(d, multi_output=True,
                                                           name='softmax'), 2, 3, 2, 2),
    'softmax_output_preserve': _one(lambda d: sym.SoftmaxOutput(d, preserve_shape=True,
                                                              name='softmax'), 2, 3, 4),
    'regression_outputs': _one(lambda d: sym.Group([
        sym.LogisticRegressionOutput(d, name='logistic'),
        sym.LinearRegressionOutput(d, name='linear'),
        sym.MAERegressionOutput(d, name='mae')]), 3, 4),
    'smooth_l1': _one(lambda d: sym.smooth_l1(d, scalar=2.0), 3, 4),
    'softmax_ce': lambda: (sym.softmax_cross_entropy(_d('a'), _d('b')),
                           {'a': _x(4, 5), 'b': np.array([0, 4, 2, 1], np.float32)}),
}
