"""Channels-last kernels of 2-D convolution with one group: the layout in which numpy's products
are fastest and the column copies move the longest runs.

Columns are (N*Ho*Wo, kh*kw*C) rows copied from the zero-padded channels-last input (one strided
copy whose runs are kw*C values long); the forward product ``cols @ W^T`` gives the output
(N*Ho*Wo, F) channels-last directly, and the operator hands it on as an (N, F, Ho, Wo)-shaped view
of that memory. Elementwise operators keep the memory order of their inputs, so the next
convolution finds its input channels-last without a copy. Backward: the weight gradient is
``dy^T @ cols``; the data gradient of a stride-1 convolution is the correlation of dy (padded by
``(k-1)*dilate - pad``) with the flipped kernel, another forward-shaped product; otherwise the
columns ``dy @ W`` are added back window by window (col2im)."""
from .accum import acc_sum
from . import blas, convutil as cu


def nhwc(x):
    """The channels-last (N, H, W, C) view of an NCHW-shaped array."""
    return x.transpose(0, 2, 3, 1)


def as_nchw(y):
    """The NCHW-shaped view of a channels-last array."""
    return y.transpose(0, 3, 1, 2)


def pad_nhwc(xp, x, pad, name):
    """``x`` (N, H, W, C) zero-padded by ``pad`` on H and W, in the scratch buffer ``name``."""
    p0, p1 = pad
    if not p0 and not p1:
        return x
    n, h, w, c = x.shape
    out = cu.scratch(xp, name, (n, h + 2 * p0, w + 2 * p1, c), x.dtype)
    out[:, :p0] = 0
    out[:, h + p0:] = 0
    out[:, p0:h + p0, :p1] = 0
    out[:, p0:h + p0, w + p1:] = 0
    out[:, p0:h + p0, p1:w + p1] = x
    return out


def out_size(size, kernel, stride, dilate, pad):
    """Output spatial sizes of a convolution."""
    return tuple((n + 2 * p - (k - 1) * d - 1) // s + 1
                 for n, k, s, d, p in zip(size, kernel, stride, dilate, pad))


def columns(xp, x4, kernel, stride, dilate, pad, name):
    """The (N*Ho*Wo, kh*kw*C) columns of channels-last ``x4`` (N, H, W, C)."""
    n, c = x4.shape[0], x4.shape[3]
    out = out_size(x4.shape[1:3], kernel, stride, dilate, pad)
    xpad = pad_nhwc(xp, x4, pad, name + '_pad')
    if kernel == (1, 1) and stride == (1, 1):
        return xp.ascontiguousarray(xpad).reshape(-1, c)   # pointwise: the input is its columns
    sn, sh, sw, sc = xpad.strides
    view = xp.lib.stride_tricks.as_strided(
        xpad, shape=(n,) + out + tuple(kernel) + (c,),
        strides=(sn, sh * stride[0], sw * stride[1], sh * dilate[0], sw * dilate[1], sc))
    cols = cu.scratch(xp, name, view.shape, x4.dtype)
    cols[...] = view
    return cols.reshape(n * out[0] * out[1], -1)


def weight_rows(w):
    """Weight (F, C, kh, kw) as the (F, kh*kw*C) matrix that multiplies channels-last columns."""
    return w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1)


def forward(xp, x, w, bias, stride, dilate, pad):
    """Convolution of NCHW-shaped ``x`` with ``w`` (F, C, kh, kw); an NCHW-shaped channels-last
    result."""
    x4 = nhwc(x)
    kernel = tuple(w.shape[2:])
    out = out_size(x4.shape[1:3], kernel, stride, dilate, pad)
    cols = columns(xp, x4, kernel, stride, dilate, pad, 'cols')
    y = blas.matmul_for(xp)(cols, weight_rows(w).T)
    if bias is not None:
        y += bias
    return as_nchw(y.reshape((x.shape[0],) + out + (w.shape[0],)))


def _correlation_fits(kernel, stride, dilate, pad, x4_shape, dy4_shape):
    """Whether the data gradient is best computed as a correlation of dy: stride 1, the padding
    it needs is not negative, and its columns are not much larger than col2im's."""
    if stride != (1, 1) or any(p > (k - 1) * d for k, d, p in zip(kernel, dilate, pad)):
        return False
    in_cols = x4_shape[1] * x4_shape[2] * dy4_shape[3]
    out_cols = dy4_shape[1] * dy4_shape[2] * x4_shape[3]
    return in_cols <= 1.5 * out_cols


def data_grad(xp, dy4, dy2, w, x_shape, stride, dilate, pad):
    """Gradient (N, H, W, C) of the input from channels-last dy (N, Ho, Wo, F)."""
    kernel = tuple(w.shape[2:])
    x4_shape = (x_shape[0], x_shape[2], x_shape[3], x_shape[1])
    if _correlation_fits(kernel, stride, dilate, pad, x4_shape, dy4.shape):
        back = tuple((k - 1) * d - p for k, d, p in zip(kernel, dilate, pad))
        cols = columns(xp, dy4, kernel, (1, 1), dilate, back, 'dcols')
        flipped = w[:, :, ::-1, ::-1].transpose(1, 2, 3, 0).reshape(w.shape[1], -1)
        return blas.matmul_for(xp)(cols, flipped.T).reshape(x4_shape)
    dcols = blas.matmul_for(xp)(dy2, weight_rows(w))
    n, ho, wo = dy4.shape[:3]
    dcols = dcols.reshape((n, ho, wo) + kernel + (x4_shape[3],))
    h, wd = x4_shape[1:3]
    extra = [max(0, (o - 1) * s + (k - 1) * d + 1 - (size + 2 * p))
             for o, s, k, d, size, p in zip((ho, wo), stride, kernel, dilate, (h, wd), pad)]
    dxpad = xp.zeros((n, h + 2 * pad[0] + extra[0], wd + 2 * pad[1] + extra[1], x4_shape[3]),
                     dtype=dcols.dtype)
    for i in range(kernel[0]):
        rows = slice(i * dilate[0], i * dilate[0] + stride[0] * (ho - 1) + 1, stride[0])
        for j in range(kernel[1]):
            cols_ = slice(j * dilate[1], j * dilate[1] + stride[1] * (wo - 1) + 1, stride[1])
            dxpad[:, rows, cols_] += dcols[:, :, :, i, j]
    return dxpad[:, pad[0]:pad[0] + h, pad[1]:pad[1] + wd]


def backward(xp, x, w, dy, need, stride, dilate, pad):
    """[data, weight, bias] gradients (None where not needed) of :func:`forward`; data as an
    NCHW-shaped channels-last array, weight as (F, C, kh, kw), bias as (F,)."""
    dy4 = nhwc(dy)
    dy2 = xp.ascontiguousarray(dy4).reshape(-1, dy4.shape[3])
    dy4 = dy2.reshape(dy4.shape)
    kernel = tuple(w.shape[2:])
    grads = [None, None, None]
    if need[1]:
        cols = columns(xp, nhwc(x), kernel, stride, dilate, pad, 'cols')
        gw = blas.matmul_for(xp)(dy2.T, cols)
        gw = gw.reshape((w.shape[0],) + kernel + (w.shape[1],))
        grads[1] = xp.ascontiguousarray(gw.transpose(0, 3, 1, 2))
    if need[0]:
        grads[0] = as_nchw(data_grad(xp, dy4, dy2, w, x.shape, stride, dilate, pad))
    if need[2]:
        grads[2] = acc_sum(xp, dy2, 0)
    return grads
