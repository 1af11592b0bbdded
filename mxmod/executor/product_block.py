"""Several matrix products with shared operands run as one (fuse_products.py puts a
``ProductBlock`` step in place of the ``dot`` steps it stands for).

``count`` left-hand sides x_0 .. x_{n-1}, each (B, K), times the weights W_1 .. W_G of the
original products: the rows are stacked (a view when they already lie one after the other in
memory, else one copy) and multiplied in one call. Output (t, g) is dot(x_t, W_g).

- ``stacked`` (the W_g of one shape (K, H), joined by a ``stack`` step into (G, K, H)): one
  batched product (G, n B, H), so that every output is a C-ordered block (the elementwise steps
  reading them run unstrided); backward gathers the output gradients as (n B, G, H), whose
  (n B, G H) view makes the data gradient one product with the G weights side by side.
- otherwise (the W_g joined by a ``Concat`` step into (K, sum of widths)): one product
  (n B, K) by (K, N); output (t, g) is block t of the rows and the g-th group of columns.

The values are those of the separate products up to the order of the sums inside the products
(the weight gradient is one sum over all n B rows, the data gradient one over the G groups)."""
import numpy as np

from ..ops import blas
from ..ops.base import Operator
from .lstm_kernel import _time_major


class ProductBlock(Operator):
    """dot(x_t, W_g) for t < ``count`` and the weights' column groups ``widths``.

    Arguments: ``data0 .. data<count-1>`` (B, K) and ``weight``: (G, K, H) when ``stacked``,
    else (K, sum(widths)). Outputs: ``out<t>_<g>`` (B, widths[g]), t major, g minor."""
    op_name = '_fused_products'
    backward_uses = ('inputs',)

    def __init__(self, name, count, widths, stacked=False):  # pylint: disable=super-init-not-called
        self.attrs = {}
        self.p = None
        self.name = name
        self.count = count
        self.widths = tuple(widths)
        self.stacked = stacked
        self.shares_derived = (count,)       # the weight: its transpose is made once per pass
        offsets = np.cumsum((0,) + self.widths)
        self.columns = [(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]

    def describe(self):
        return 'products %s (%d x %d, fused)' % (self.name, self.count, len(self.widths))

    def list_arguments(self):
        return ['data%d' % t for t in range(self.count)] + ['weight']

    def list_outputs(self):
        return ['out%d_%d' % (t, g) for t in range(self.count) for g in range(len(self.widths))]

    def forward(self, octx, inputs, aux):
        n = self.count
        xs, w = inputs[:n], inputs[n]
        rows = xs[0].shape[0]
        X = xs[0] if n == 1 else _time_major(xs).reshape(n * rows, -1)
        octx.saved['rows'] = X
        if self.stacked:
            Y = np.matmul(X, w)
            return [Y[g, t * rows:(t + 1) * rows] for t in range(n) for g in range(len(w))]
        Y = _matmul(X, w)
        if len(self.widths) == 1:
            return [Y[t * rows:(t + 1) * rows] for t in range(n)] if n > 1 else [Y]
        return [Y[t * rows:(t + 1) * rows, a:b] for t in range(n) for a, b in self.columns]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        n = self.count
        X = octx.saved['rows']
        w = inputs[n]
        dY = self._gathered(out_grads, X.shape[0] // n, w)
        need = octx.need_grad or [True] * (n + 1)
        into = octx.grad_out or [None] * (n + 1)
        grads = [None] * (n + 1)
        if need[n]:
            if self.stacked:
                grads[n] = np.matmul(X.T, dY.transpose(1, 0, 2))
            else:
                grads[n] = _product_t(X, dY, into[n])
                if octx.grad_ready is not None and grads[n] is into[n]:
                    octx.grad_ready(n)
        if any(need[:n]):
            dX = self._data_grad(octx, dY, w)
            if n == 1:
                grads[0] = dX
            else:
                dX = dX.reshape(n, -1, dX.shape[1])
                for t in range(n):
                    if need[t]:
                        grads[t] = dX[t]
        return grads

    def _data_grad(self, octx, dY, w):
        """dY times the weights transposed (G H, K) or (N, K), made once per pass."""
        cache, key = octx.shared, ('products_t', id(w))
        hit = cache.get(key) if cache is not None else None
        if hit is None or hit[0] is not w:
            wt = w.transpose(0, 2, 1).reshape(-1, w.shape[1]) if self.stacked else w.T
            hit = (w, np.ascontiguousarray(wt))
            if cache is not None:
                cache[key] = hit
        return _matmul(dY.reshape(dY.shape[0], -1), hit[1])

    def _gathered(self, out_grads, rows, w):
        """The output gradients as one array, (count rows, G, H) when stacked, else
        (count rows, N); absent ones as zeros."""
        if len(out_grads) == 1 and out_grads[0] is not None:
            return out_grads[0][:, None, :] if self.stacked else out_grads[0]
        if self.stacked:
            dY = np.empty((self.count * rows, w.shape[0], w.shape[2]), w.dtype)
            parts = [(t, dY[t * rows:(t + 1) * rows, g]) for t in range(self.count)
                     for g in range(w.shape[0])]
        else:
            dY = np.empty((self.count * rows, w.shape[1]), w.dtype)
            parts = [(t, dY[t * rows:(t + 1) * rows, a:b]) for t in range(self.count)
                     for a, b in self.columns]
        for (_, block), g in zip(parts, out_grads):
            if g is None:
                block[...] = 0
            else:
                block[...] = g
        return dY


def _product_t(X, dY, out):
    """X^T dY, written into ``out`` (an argument's gradient array) when it fits."""
    if out is not None and out.dtype == dY.dtype and out.shape == (X.shape[1], dY.shape[1]) \
            and out.flags.c_contiguous:
        return _matmul(X.T, dY, out)
    return _matmul(X.T, dY)


# below this many multiply-adds numpy's own product (OpenBLAS) is used: MKL's, in its
# reproducible mode, took 2-4x longer on the products of small recurrent layers (32 x 32 by
# 32 x 128: 10.7 against 3.4 us; 32 x 64 by 64 x 256: 39.5 against 10.6 us)
SMALL = 1 << 21


def _matmul(a, b, out=None):
    if a.shape[0] * a.shape[1] * b.shape[-1] < SMALL:
        return np.matmul(a, b, out=out)
    return blas.matmul(a, b, out=out)
