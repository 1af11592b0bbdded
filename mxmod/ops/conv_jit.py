"""Convolution through the compiled kernels of :mod:`conv_kernels`: 2-D, one group, float32, on
channels-last memory, with the interface of :mod:`conv_cl` (NCHW-shaped arguments in any memory
order; results handed on as NCHW-shaped views of channels-last memory).

- forward: the channels-last input and the weight as (KH, KW, C, F) go to
  ``conv_kernels.forward``, which writes the output directly (with padding, one image at a time
  is copied into a small padded buffer that stays in cache; the batch is never padded); 3x3
  convolutions with stride 1 and padding 1 on even sizes and 16k channels use Winograd's
  F(2x2, 3x3) (``wino_kernels``) instead, with 16 multiply-adds per 2x2 outputs and channel
  pair instead of 36;
- data gradient, stride 1 (padding at most the dilated kernel's reach, the input not much larger
  than the output): the forward kernel again, correlating dy padded by ``(k-1)*dilate - pad``
  with the flipped, transposed weight;
- data gradient of one input channel, or of output rows under 8 pixels (where the above does
  not apply): a product with the weight into columns, added tap by tap (``_data_grad_gemm``);
- data gradient otherwise: ``conv_kernels.data_scatter`` adds each dy pixel's window into a
  padded buffer, cropped afterwards;
- weight gradient: ``conv_kernels.weight_grad`` (Winograd's, ``wino_wgrad``, where the forward
  uses Winograd) per group of images, the groups' partial gradients summed in group order (the
  groups depend on the batch alone, so results are the same for every thread count); bias
  gradient: per-filter sums of dy."""
import numpy

from . import conv_cl
from . import kpool
from . import convutil as cu
from .bn_math import channel_sum

__all__ = ['applies', 'forward', 'backward']

LANES = 16


def _kernels():
    from . import conv_kernels  # pylint: disable=import-outside-toplevel
    return conv_kernels


def _wino():
    from . import wino_kernels  # pylint: disable=import-outside-toplevel
    return wino_kernels


# Winograd F(2x2, 3x3): the transformed weight G g G^T of every (channel, filter) pair is
# kron(G, G) (16 x 9) times its 9 taps
_G = numpy.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_KRON_G = numpy.kron(_G, _G).astype(numpy.float32)


def _winograd_fits(kernel, stride, dilate, pad, x_shape):
    """3x3, stride 1, no dilation, padding 1, even image sizes, channels a multiple of 16."""
    return (tuple(kernel) == (3, 3) and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1)
            and tuple(pad) == (1, 1) and x_shape[1] % 2 == 0 and x_shape[2] % 2 == 0
            and x_shape[3] % LANES == 0)


def applies(x, w):
    """Whether these kernels compute a convolution of ``x`` with ``w`` (float32 data and weight;
    the caller has checked 2-D, one group)."""
    return x.dtype == numpy.float32 and w.dtype == numpy.float32


def _padded(n):
    return -(-n // LANES) * LANES


def _contiguous(xp, x4):
    """``x4`` (N, H, W, C) as a C-contiguous float32 array (itself when it is one already)."""
    return xp.ascontiguousarray(x4, dtype=numpy.float32)


def _filters_last(xp, w_taps, count):
    """(KH, KW, A, count) weight view -> C-contiguous (KH, KW, A, count rounded up to 16)."""
    pad = _padded(count) - count
    if not pad:
        return xp.ascontiguousarray(w_taps)
    out = xp.zeros(w_taps.shape[:3] + (count + pad,), dtype=numpy.float32)
    out[..., :count] = w_taps
    return out


def _scratch(xp, name, piece, size):
    """Scratch buffer ``name`` of the ``piece``-th piece of a kernel's work (one per piece)."""
    return cu.scratch(xp, name if piece == 0 else '%s.%d' % (name, piece), (size,), numpy.float32)


def _image_cuts(n, work):
    """Boundaries of the images each thread's piece of a kernel takes (kpool)."""
    return kpool.bounds(n, kpool.split(n, work))


def _run_forward(xp, x4, wk, bias, out_c, stride, dilate, pad):
    """The forward kernel on channels-last ``x4`` with the (KH, KW, C, Fp) weight ``wk``, the
    padding implicit; a new (N, Ho, Wo, out_c) array."""
    kernel = wk.shape[:2]
    fp = wk.shape[3]
    x = _contiguous(xp, x4)
    n, h, w, c = x.shape
    ho, wo = conv_cl.out_size((h, w), kernel, stride, dilate, pad)
    if fp == out_c:
        y = xp.empty((n, ho, wo, fp), dtype=numpy.float32)
    else:       # whole vectors of filters: the kernel writes Fp channels, the first out_c are kept
        y = cu.scratch(xp, 'jit_y', (n, ho, wo, fp), numpy.float32)
    if bias is None:
        bias = xp.zeros(fp, dtype=numpy.float32)
    image, out_image = h * w * c, ho * wo * fp
    xf, yf = x.reshape(-1), y.reshape(-1)
    cuts = _image_cuts(n, n * out_image * kernel[0] * kernel[1] * c)
    pieces = []
    if _winograd_fits(kernel, stride, dilate, pad, x.shape):
        u = xp.matmul(_KRON_G, wk.reshape(9, -1)).reshape(-1)
        for k, (n0, n1) in enumerate(zip(cuts[:-1], cuts[1:])):
            pieces.append((xf[n0 * image:n1 * image], u, bias, yf[n0 * out_image:n1 * out_image],
                           _scratch(xp, 'jit_image', k, (h + 2) * (w + 2) * c),
                           _scratch(xp, 'jit_wino_v', k, 16 * 8 * c),
                           _scratch(xp, 'jit_wino_m', k, 16 * 8 * fp), n1 - n0, h, w, c, fp))
        kpool.run(_wino().forward, pieces)
    else:
        size = (h + 2 * pad[0]) * (w + 2 * pad[1]) * c
        for k, (n0, n1) in enumerate(zip(cuts[:-1], cuts[1:])):
            pieces.append((xf[n0 * image:n1 * image], wk.reshape(-1), bias,
                           yf[n0 * out_image:n1 * out_image], _scratch(xp, 'jit_image', k, size),
                           n1 - n0, h, w, c, ho, wo, fp, kernel[0], kernel[1], stride[0],
                           stride[1], dilate[0], dilate[1], pad[0], pad[1]))
        kpool.run(_kernels().forward, pieces)
    if fp != out_c:
        y = xp.ascontiguousarray(y[..., :out_c])
    return y


def forward(xp, x, w, bias, stride, dilate, pad):
    """Convolution of NCHW-shaped ``x`` with ``w`` (F, C, KH, KW) (+ ``bias``); an NCHW-shaped
    view of a channels-last result."""
    f = w.shape[0]
    wk = _filters_last(xp, w.transpose(2, 3, 1, 0), f)
    if bias is not None:
        full = xp.zeros(wk.shape[3], dtype=numpy.float32)
        full[:f] = bias
        bias = full
    y = _run_forward(xp, conv_cl.nhwc(x), wk, bias, f, stride, dilate, pad)
    return conv_cl.as_nchw(y)


def _data_grad(xp, dy4, w, x_shape, stride, dilate, pad):
    """Gradient (N, H, W, C) of the input from channels-last dy (N, Ho, Wo, F)."""
    kernel = tuple(w.shape[2:])
    n, c, h, wd = x_shape
    if c == 1:
        return _data_grad_gemm(xp, dy4, w, x_shape, stride, dilate, pad)
    if (stride == (1, 1) and all(p <= (k - 1) * d for k, d, p in zip(kernel, dilate, pad))
            and h * wd <= 1.5 * dy4.shape[1] * dy4.shape[2]):
        back = tuple((k - 1) * d - p for k, d, p in zip(kernel, dilate, pad))
        wt = _filters_last(xp, w[:, :, ::-1, ::-1].transpose(2, 3, 0, 1), c)
        return _run_forward(xp, dy4, wt, None, c, (1, 1), dilate, back)
    if dy4.shape[2] < 8:
        return _data_grad_gemm(xp, dy4, w, x_shape, stride, dilate, pad)
    f = w.shape[0]
    wt = _filters_last(xp, w.transpose(2, 3, 0, 1), c)
    cp = wt.shape[3]
    dyc = xp.ascontiguousarray(dy4).reshape(-1)
    dxp = cu.scratch(xp, 'jit_dx', (n, h + 2 * pad[0], wd + 2 * pad[1], cp), numpy.float32)
    dx = xp.empty((n, h, wd, c), dtype=numpy.float32)     # never the scratch buffer itself
    from . import conv_scatter  # pylint: disable=import-outside-toplevel
    ho, wo = dy4.shape[1:3]

    def piece(n0, n1):
        part = dxp[n0:n1]
        part[...] = 0
        conv_scatter.data_scatter(dyc[n0 * ho * wo * f:n1 * ho * wo * f], wt.reshape(-1),
                                  part.reshape(-1), n1 - n0, ho, wo, f, dxp.shape[1],
                                  dxp.shape[2], cp, kernel[0], kernel[1], stride[0], stride[1],
                                  dilate[0], dilate[1])
        dx[n0:n1] = part[:, pad[0]:pad[0] + h, pad[1]:pad[1] + wd, :c]

    cuts = _image_cuts(n, n * ho * wo * f * cp * kernel[0] * kernel[1])
    kpool.run(piece, list(zip(cuts[:-1], cuts[1:])))
    return dx


# Bytes of data-gradient columns one product of _data_grad_gemm makes (images taken in chunks)
GEMM_COLUMNS = 4 << 20


def _data_grad_gemm(xp, dy4, w, x_shape, stride, dilate, pad):
    """Gradient (N, H, W, C) of the input as columns dy (N*Ho*Wo, F) @ W (F, KH*KW*C), added
    tap by tap into a padded buffer; the images shared among the kernel threads (BLAS on one
    thread meanwhile), each thread's in chunks of at most GEMM_COLUMNS bytes of columns. For
    one input channel (the scatter kernel's vectors run over channels, 15 of 16 lanes idle) and
    rows shorter than its 8-pixel blocks (a text convolution's output is one pixel wide) this
    is 2.5-20 times faster than the scatter."""
    n, c, h, wd = x_shape
    f, _, kh, kw = w.shape
    ho, wo = dy4.shape[1:3]
    wm = xp.ascontiguousarray(w.transpose(0, 2, 3, 1).reshape(f, kh * kw * c),
                              dtype=numpy.float32)
    dxp = xp.zeros((n, h + 2 * pad[0], wd + 2 * pad[1], c), dtype=numpy.float32)
    rows, cols = stride[0] * (ho - 1) + 1, stride[1] * (wo - 1) + 1
    chunk = max(1, GEMM_COLUMNS // (4 * ho * wo * kh * kw * c))

    def piece(first, last):
        for n0 in range(first, last, chunk):
            n1 = min(last, n0 + chunk)
            part = xp.matmul(dy4[n0:n1].reshape(-1, f), wm).reshape(n1 - n0, ho, wo, kh, kw, c)
            for i in range(kh):
                r = i * dilate[0]
                for j in range(kw):
                    s = j * dilate[1]
                    dxp[n0:n1, r:r + rows:stride[0], s:s + cols:stride[1]] += part[:, :, :, i, j]

    cuts = _image_cuts(n, n * ho * wo * f * kh * kw * c)
    kpool.run(piece, list(zip(cuts[:-1], cuts[1:])))
    return xp.ascontiguousarray(dxp[:, pad[0]:pad[0] + h, pad[1]:pad[1] + wd])


# Weight gradients are summed over images: the images are cut into at most GROUPS groups (set by
# the shapes alone, never by the thread count), each group's partial gradient is computed by the
# one-thread kernel into its own buffer (the first into the gradient itself), by whichever thread
# takes the group, and the partials are added in group order by the calling thread; so every
# thread count gives the same bits. A group is worth at least kpool.MIN_WORK multiply-adds.
# Each group beyond the first costs a partial's zeroing and addition and a kernel call (one
# thread, ResNet-20's layers: 10-35 us); in the network on two threads 2 groups measured best
# (weight gradients 95-101 ms per 256-sample epoch, 4 groups 105-112, 8 groups 110-132).
GROUPS = 2


def _image_groups(n, work):
    """Boundaries of the image groups of a weight gradient of ``work`` multiply-adds."""
    return kpool.bounds(n, max(1, min(GROUPS, n, int(work // kpool.MIN_WORK))))


def _grouped(xp, name, total, groups, work, compute):
    """Runs ``compute(piece, n0, n1, out)`` for every image group [n0, n1) into a zeroed
    (``total`` values) partial gradient of its own, the groups shared among the threads, and
    returns the partials summed in group order (a new array)."""
    count = len(groups) - 1
    out = [xp.zeros(total, dtype=numpy.float32)]
    out += [_scratch(xp, name, g, total) for g in range(1, count)]
    pieces = kpool.split(count, work)
    cuts = kpool.bounds(count, pieces)

    def piece(k, g0, g1):
        for g in range(g0, g1):
            if g:
                out[g][...] = 0
            compute(k, groups[g], groups[g + 1], out[g])
    kpool.run(piece, [(k, cuts[k], cuts[k + 1]) for k in range(pieces)])
    result = out[0]
    for part in out[1:]:
        result += part
    return result


def _weight_grad(xp, x4, dy4, w_shape, stride, dilate, pad):
    """Gradient (F, C, KH, KW) of the weight."""
    f, c, kh, kw = w_shape
    fp = _padded(f)
    n, h, w = x4.shape[:3]
    ho, wo = dy4.shape[1:3]
    if fp != f:
        dyp = cu.scratch(xp, 'jit_dyf', dy4.shape[:3] + (fp,), numpy.float32)

    def operands(n0, n1):
        """One group's images of x and dy as flat channels-last arrays (dy's filters padded to
        whole vectors), copied by the thread that takes the group where needed."""
        xg = _contiguous(xp, x4[n0:n1]).reshape(-1)
        if fp == f:
            return xg, _contiguous(xp, dy4[n0:n1]).reshape(-1)
        part = dyp[n0:n1]
        part[..., f:] = 0
        part[..., :f] = dy4[n0:n1]
        return xg, part.reshape(-1)

    if _winograd_fits((kh, kw), stride, dilate, pad, x4.shape) and (ho, wo) == (h, w):
        from . import wino_wgrad  # pylint: disable=import-outside-toplevel
        work = n * h * w * c * fp * 4
        size = (h + 2) * (w + 2) * c

        def wino(k, n0, n1, du):
            wino_wgrad.weight_grad(
                *operands(n0, n1), du, _scratch(xp, 'jit_image', k, size),
                _scratch(xp, 'jit_wino_v', k, 16 * wino_wgrad.TILES * c),
                _scratch(xp, 'jit_wino_m', k, 16 * wino_wgrad.TILES * fp), n1 - n0, h, w, c, fp)
        du = _grouped(xp, 'jit_wgrad_part', 16 * c * fp, _image_groups(n, work), work, wino)
        dw = xp.matmul(_KRON_G.T, du.reshape(16, -1)).reshape(kh, kw, c, fp)
        return xp.ascontiguousarray(dw[..., :f].transpose(3, 2, 0, 1))
    from . import conv_wgrad  # pylint: disable=import-outside-toplevel
    work = n * ho * wo * fp * kh * kw * c
    tail = (h, w, c, ho, wo, fp, kh, kw, stride[0], stride[1], dilate[0], dilate[1], pad[0],
            pad[1])

    def direct(k, n0, n1, dw):  # pylint: disable=unused-argument
        conv_wgrad.weight_grad(*operands(n0, n1), dw, numpy.empty(ho, dtype=numpy.int64),
                               n1 - n0, *tail)
    dw = _grouped(xp, 'jit_wgrad_part', kh * kw * c * fp, _image_groups(n, work), work, direct)
    dw = dw.reshape(kh, kw, c, fp)
    return xp.ascontiguousarray(dw[..., :f].transpose(3, 2, 0, 1))


def backward(xp, x, w, dy, need, stride, dilate, pad):
    """[data, weight, bias] gradients (None where not needed) of :func:`forward`: data as an
    NCHW-shaped view of channels-last memory, weight (F, C, KH, KW), bias (F,)."""
    dy4 = conv_cl.nhwc(dy)
    grads = [None, None, None]
    if need[1]:
        grads[1] = _weight_grad(xp, conv_cl.nhwc(x), dy4, w.shape, stride, dilate, pad)
    if need[0]:
        grads[0] = conv_cl.as_nchw(_data_grad(xp, dy4, w, x.shape, stride, dilate, pad))
    if need[2]:
        grads[2] = channel_sum(xp, dy4, 3).astype(dy.dtype)
    return grads
