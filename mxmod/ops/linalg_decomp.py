"""The ``linalg`` factorisations and determinants: gelqf (LQ), syevd (symmetric eigenvalues),
inverse, det and slogdet, on batches of matrices in the trailing two axes, with MXNet's output
layouts (syevd's eigenvectors are rows whose largest entry is positive) and gradients (det and
slogdet send no gradient through singular matrices)."""
from ..base import MXNetError
from .base import mx_dim, register
from .linalg import LinalgOp, square_check, solve, symmetrize_from, t


@register
class LinalgGelqf(LinalgOp):
    """``A = L Q`` for (..., m, n) with m <= n: Q (..., m, n) has orthonormal rows, L (..., m, m)
    is lower triangular. Outputs Q then L."""
    op_name = '_linalg_gelqf'
    aliases = ('linalg_gelqf',)
    arguments = ('A',)
    outputs = ('output0', 'output1')

    def infer_shape(self, in_shapes, out_shapes):
        a = in_shapes[0]
        if a is None or len(a) < 2:
            return self._from_outputs(in_shapes, out_shapes)
        if mx_dim(a[-2]) > mx_dim(a[-1]):     # compared as MXNet does (-1 when unknown)
            raise MXNetError('linalg_gelqf: input must be (..., m, n) with m <= n, got %s'
                             % (tuple(a),))
        return in_shapes, [tuple(a), tuple(a[:-1]) + (a[-2],)]

    def _from_outputs(self, in_shapes, out_shapes):
        """MXNet's backward inference: A from Q once Q and L have one rank (>= 2)."""
        q, low = out_shapes
        if q is None or low is None or len(q) < 2 or len(q) != len(low):
            return in_shapes, out_shapes
        if ([mx_dim(d) for d in q[:-1]] != [mx_dim(d) for d in low[:-1]]
                or mx_dim(q[-2]) > mx_dim(q[-1]) or mx_dim(low[-2]) != mx_dim(low[-1])):
            raise MXNetError('linalg_gelqf: outputs Q %s and L %s do not fit an LQ factorization'
                             % (tuple(q), tuple(low)))
        return [q], out_shapes

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        q_t, r = xp.linalg.qr(t(xp, inputs[0]))
        return [xp.ascontiguousarray(t(xp, q_t)), xp.ascontiguousarray(t(xp, r))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        # dA = L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)
        xp = octx.xp
        q, low = outputs
        dq, dlow = (xp.zeros_like(o) if g is None else g for g, o in zip(out_grads, outputs))
        m = xp.matmul(t(xp, low), dlow) - xp.matmul(dq, t(xp, q))
        inner = dq + xp.matmul(symmetrize_from(xp, m, True), q)
        return [solve(xp, t(xp, low), inner)]


@register
class LinalgSyevd(LinalgOp):
    """``A = U^T diag(L) U`` for symmetric A (its lower triangle is read): eigenvectors as rows of
    U, eigenvalues L ascending; each row of U is signed so that its largest entry is positive."""
    op_name = '_linalg_syevd'
    aliases = ('linalg_syevd',)
    arguments = ('A',)
    outputs = ('output0', 'output1')

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: A's size is checked first, so A must be fully known
        a = in_shapes[0]
        if a is None or 0 in a:
            raise MXNetError('linalg_syevd: the shape of A must be fully known, got %s'
                             % ('an unknown shape' if a is None else tuple(a),))
        if len(a) < 2:
            return in_shapes, out_shapes
        square_check(self.op_name, a)
        return in_shapes, [tuple(a), tuple(a[:-1])]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        values, vectors = xp.linalg.eigh(inputs[0], UPLO='L')
        rows = t(xp, vectors)
        biggest = xp.argmax(xp.abs(rows), axis=-1)[..., None]
        sign = xp.sign(xp.take_along_axis(rows, biggest, axis=-1))
        rows = rows * xp.where(sign == 0, 1, sign)
        return [xp.ascontiguousarray(rows), values]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        # dA = U^T Y U, Y_ij = (X_ij - X_ji) / (2 max(L_i - L_j, eps)) (i > j), Y_ii = dL_i
        xp = octx.xp
        rows, values = outputs
        drows = xp.zeros_like(rows) if out_grads[0] is None else out_grads[0]
        dvalues = xp.zeros_like(values) if out_grads[1] is None else out_grads[1]
        x = xp.matmul(drows, t(xp, rows))
        eps = 1e-30 if values.dtype.itemsize == 4 else 1e-100
        gap = xp.maximum(values[..., :, None] - values[..., None, :], eps) * 2
        low = xp.tril((x - t(xp, x)) / gap, -1)
        n = values.shape[-1]
        y = low + t(xp, low) + xp.eye(n, dtype=values.dtype) * dvalues[..., None, :]
        return [xp.matmul(xp.matmul(t(xp, rows), y), rows)]


class _Square(LinalgOp):
    """One batch of square matrices in."""
    arguments = ('A',)

    def infer_shape(self, in_shapes, out_shapes):
        a = in_shapes[0]
        if a is None:
            return in_shapes, out_shapes
        square_check(self.op_name, a, partial=True)
        if len(a) == 2 and 0 in a and self.out_shape(a) == (1,):
            raise MXNetError('%s: the size of a single matrix must be known, got %s'
                             % (self.op_name, tuple(a)))
        return in_shapes, [self.out_shape(tuple(a))] * len(out_shapes)

    def out_shape(self, shape):
        return tuple(shape[:-2]) or (1,)


@register
class LinalgInverse(_Square):
    """The inverse of each matrix."""
    op_name = '_linalg_inverse'
    aliases = ('linalg_inverse',)
    backward_uses = ('outputs',)

    def out_shape(self, shape):
        return shape

    def forward(self, octx, inputs, aux):
        return [octx.xp.linalg.inv(inputs[0])]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, inv = octx.xp, outputs[0]
        return [-xp.matmul(xp.matmul(t(xp, inv), out_grads[0]), t(xp, inv))]


def _inverse_transposed(xp, a, singular):
    """inv(A)^T, with the identity standing in for singular matrices."""
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    safe = xp.where(singular[..., None, None], eye, a)
    return t(xp, xp.linalg.inv(safe))


@register
class LinalgDet(_Square):
    """The determinant of each matrix; the gradient ``det * inv(A)^T`` is zero where det is 0."""
    op_name = '_linalg_det'
    aliases = ('linalg_det',)
    outputs = ('output0',)

    def forward(self, octx, inputs, aux):
        a = inputs[0]
        return [octx.xp.linalg.det(a).reshape(self.out_shape(a.shape))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, a = octx.xp, inputs[0]
        det = outputs[0].reshape(a.shape[:-2])
        scale = (out_grads[0].reshape(a.shape[:-2]) * det)[..., None, None]
        return [scale * _inverse_transposed(xp, a, det == 0) * (det != 0)[..., None, None]]


@register
class LinalgSlogdet(_Square):
    """Sign and log absolute determinant of each matrix; the gradient of the log is
    ``inv(A)^T`` (zero for singular matrices), the sign has none."""
    op_name = '_linalg_slogdet'
    aliases = ('linalg_slogdet',)
    outputs = ('output0', 'output1')

    def forward(self, octx, inputs, aux):
        a = inputs[0]
        sign, logdet = octx.xp.linalg.slogdet(a)
        shape = self.out_shape(a.shape)
        return [sign.astype(a.dtype).reshape(shape), logdet.astype(a.dtype).reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, a = octx.xp, inputs[0]
        logdet = outputs[1].reshape(a.shape[:-2])
        dlog = out_grads[1]
        if dlog is None:
            return [xp.zeros_like(a)]
        singular = xp.isneginf(logdet)
        scale = (dlog.reshape(a.shape[:-2]) * ~singular)[..., None, None]
        return [scale * _inverse_transposed(xp, a, singular)]
