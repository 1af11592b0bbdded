"""The ``linalg`` operators built on products and triangular solves: gemm, potrf, potri, trsm,
trmm, syrk, sumlogdiag and the diagonal/triangle copies (extractdiag, makediag, extracttrian,
maketrian). All work on batches of matrices in the trailing two axes (gemm: the rows along
``axis``) and have MXNet's gradients: the triangular operators keep only their triangle, and
potrf/potri/syrk treat their symmetric argument as MXNet does."""
from ..base import MXNetError
from .base import mx_dim, Operator, Param, register, merge_shape
from .matrix import LinalgGemm2

_FLOATS = ('float32', 'float64')


def tri(xp, x, lower, k=0):
    """The lower (or upper) triangle of the trailing matrices, offset by ``k``."""
    return xp.tril(x, k) if lower else xp.triu(x, k)


def t(xp, x, flag=True):
    """The trailing matrices transposed when ``flag``."""
    return xp.swapaxes(x, -1, -2) if flag else x


def solve(xp, a, b, rightside=False):
    """``a^-1 b`` (or ``b a^-1`` with ``rightside``) for batches of square ``a``."""
    if rightside:
        return t(xp, xp.linalg.solve(t(xp, a), t(xp, b)))
    return xp.linalg.solve(a, b)


def symmetrize_from(xp, m, lower):
    """Copy the lower (upper) triangle of ``m`` onto the other side."""
    keep = xp.tril(m) if lower else xp.triu(m)
    return keep + t(xp, xp.tril(m, -1) if lower else xp.triu(m, 1))


def square_check(op, shape, partial=False):
    """Raise unless the trailing two dimensions form square matrices. With ``partial``
    (inference), dims compare as MXNet compares them: an unknown dim equals only an unknown
    dim (0 here, -1 there)."""
    if len(shape) < 2 or (shape[-1] and shape[-2] and shape[-1] != shape[-2]) or (
            partial and mx_dim(shape[-1]) != mx_dim(shape[-2])):
        raise MXNetError('%s: input must be a batch of square matrices (..., n, n), got shape %s'
                         % (op, tuple(shape)))


class LinalgOp(Operator):
    """Base: float32/float64 inputs, same-shape output by default."""
    backward_uses = ('inputs', 'outputs')

    def infer_type(self, in_types, out_types):
        known = [x for x in list(in_types) + list(out_types) if x is not None]
        if known and known[0] not in _FLOATS:
            raise MXNetError('%s supports float32 and float64 only, got %s'
                             % (self.op_name, known[0]))
        return super().infer_type(in_types, out_types)


@register
class LinalgGemm(LinalgGemm2):
    """``alpha * op(A) @ op(B) + beta * C`` with gemm2's ``axis`` and transposes."""
    op_name = '_linalg_gemm'
    aliases = ('linalg_gemm',)
    arguments = ('A', 'B', 'C')
    params = dict(LinalgGemm2.params, beta=Param('float', 1.0))

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: C takes the product's shape; nothing flows from C or the output
        _, outs = super().infer_shape(in_shapes[:2], [None])
        if outs[0] is None:
            return list(in_shapes), list(out_shapes)
        return list(in_shapes[:2]) + outs, outs

    def forward(self, octx, inputs, aux):
        prod = super().forward(octx, inputs[:2], aux)[0]
        c = inputs[2]
        return [prod + c * c.dtype.type(self.p.beta)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        da, db = super().backward(octx, out_grads, inputs[:2], outputs, aux)
        dy = out_grads[0]
        return [da, db, dy * dy.dtype.type(self.p.beta)]


class _Unary(LinalgOp):
    """One batch of square matrices in, one out."""
    arguments = ('A',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: input and output share one shape (squareness is checked when computing)
        a = merge_shape(self.op_name, 'A', in_shapes[0], out_shapes[0])
        return [a], [a]


@register
class LinalgPotrf(_Unary):
    """Cholesky factor: ``A = L L^T`` (``lower``) or ``A = U^T U``; the other triangle is zero."""
    op_name = '_linalg_potrf'
    aliases = ('linalg_potrf',)
    params = {'lower': Param('bool', True)}
    backward_uses = ('outputs',)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        try:
            low = xp.linalg.cholesky(inputs[0])
        except Exception as err:  # numpy's LinAlgError, cupy's own
            raise MXNetError('linalg_potrf: the input is not symmetric positive definite (%s)'
                             % err) from None
        return [low if self.p.lower else t(xp, low)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        # dA = 0.5 * L^-T copyLTU(L^T dL) L^-1, written for the lower factor
        xp, lower = octx.xp, self.p.lower
        low = outputs[0] if lower else t(xp, outputs[0])
        dlow = out_grads[0] if lower else t(xp, out_grads[0])
        m = symmetrize_from(xp, xp.matmul(t(xp, low), dlow), True)
        grad = 0.5 * solve(xp, low, solve(xp, t(xp, low), m), rightside=True)
        return [grad if lower else t(xp, grad)]


@register
class LinalgPotri(_Unary):
    """Inverse of ``L L^T`` (``lower``) or ``U^T U`` from the triangular factor."""
    op_name = '_linalg_potri'
    aliases = ('linalg_potri',)
    params = {'lower': Param('bool', True)}

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        factor = tri(xp, inputs[0], self.p.lower)
        inv = solve(xp, factor, xp.broadcast_to(xp.eye(factor.shape[-1], dtype=factor.dtype),
                                                factor.shape))
        return [xp.matmul(t(xp, inv), inv) if self.p.lower else xp.matmul(inv, t(xp, inv))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, lower = octx.xp, self.p.lower
        factor, inv, dy = tri(xp, inputs[0], lower), outputs[0], out_grads[0]
        sym = dy + t(xp, dy)
        if lower:
            grad = -solve(xp, t(xp, factor), xp.matmul(inv, sym), rightside=True)
        else:
            grad = -solve(xp, t(xp, factor), xp.matmul(sym, inv))
        return [tri(xp, grad, lower)]


class _Triangular(LinalgOp):
    """trsm/trmm: a triangular ``A`` (only its ``lower`` or upper triangle is read) and ``B``."""
    arguments = ('A', 'B')
    params = {'transpose': Param('bool', False), 'rightside': Param('bool', False),
              'lower': Param('bool', True), 'alpha': Param('float', 1.0)}

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards once A and B have one rank (>= 2), else A and B from the output;
        # dims compare as MXNet compares them (an unknown dim equals only an unknown dim)
        a, b = in_shapes
        out = out_shapes[0]
        if a is not None and b is not None and len(a) >= 2 and len(a) == len(b):
            square_check(self.op_name, a, partial=True)
            if [mx_dim(d) for d in a[:-2]] != [mx_dim(d) for d in b[:-2]]:
                raise MXNetError('%s: A %s and B %s must have the same batch dimensions'
                                 % (self.op_name, tuple(a), tuple(b)))
            k = b[-1] if self.p.rightside else b[-2]
            if mx_dim(a[-1]) != mx_dim(k):
                raise MXNetError('%s: A %s does not fit B %s (rightside=%s)'
                                 % (self.op_name, tuple(a), tuple(b), self.p.rightside))
            side = a[-2] if self.p.transpose else a[-1]
            if self.p.rightside:
                return [a, b], [tuple(a[:-2]) + (b[-2], side)]
            return [a, b], [tuple(a[:-2]) + (side, b[-1])]
        if out is not None and len(out) >= 2:
            n = out[-1] if self.p.rightside else out[-2]
            return [tuple(out[:-2]) + (n, n), tuple(out)], [out]
        return [a, b], [out]

    def op_a(self, xp, a):
        return t(xp, tri(xp, a, self.p.lower), self.p.transpose)

    def a_grad(self, xp, left, right):
        """The triangle of the gradient of ``op(A)`` from the factors of its outer product."""
        g = xp.matmul(left, t(xp, right))
        return tri(xp, t(xp, g, self.p.transpose), self.p.lower)


@register
class LinalgTrsm(_Triangular):
    """Solve ``op(A) X = alpha B`` (or ``X op(A) = alpha B`` with ``rightside``)."""
    op_name = '_linalg_trsm'
    aliases = ('linalg_trsm',)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        a, b = inputs
        return [solve(xp, self.op_a(xp, a), b * b.dtype.type(self.p.alpha), self.p.rightside)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (a, _), x, dy = octx.xp, inputs, outputs[0], out_grads[0]
        opa = self.op_a(xp, a)
        if self.p.rightside:     # X opA = aB: dB = a dX opA^-T, d opA = -X^T dB / a
            db = solve(xp, t(xp, opa), dy, rightside=True) * dy.dtype.type(self.p.alpha)
            da = self.a_grad(xp, t(xp, x), t(xp, db))
        else:                    # opA X = aB: dB = a opA^-T dX, d opA = -dB X^T / a
            db = solve(xp, t(xp, opa), dy) * dy.dtype.type(self.p.alpha)
            da = self.a_grad(xp, db, x)
        return [da * da.dtype.type(-1.0 / self.p.alpha), db]


@register
class LinalgTrmm(_Triangular):
    """``alpha op(A) B`` (or ``alpha B op(A)`` with ``rightside``) for a triangular ``A``."""
    op_name = '_linalg_trmm'
    aliases = ('linalg_trmm',)
    backward_uses = ('inputs',)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        a, b = inputs
        opa = self.op_a(xp, a)
        out = xp.matmul(b, opa) if self.p.rightside else xp.matmul(opa, b)
        return [out * out.dtype.type(self.p.alpha)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (a, b), dy = octx.xp, inputs, out_grads[0]
        opa, alpha = self.op_a(xp, a), dy.dtype.type(self.p.alpha)
        if self.p.rightside:
            return [self.a_grad(xp, t(xp, b), t(xp, dy)) * alpha,
                    xp.matmul(dy, t(xp, opa)) * alpha]
        return [self.a_grad(xp, dy, b) * alpha, xp.matmul(t(xp, opa), dy) * alpha]


@register
class LinalgSyrk(LinalgOp):
    """``alpha A A^T`` (or ``alpha A^T A`` with ``transpose``)."""
    op_name = '_linalg_syrk'
    aliases = ('linalg_syrk',)
    arguments = ('A',)
    params = {'transpose': Param('bool', False), 'alpha': Param('float', 1.0)}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        a = in_shapes[0]
        if a is None or len(a) < 2:     # MXNet infers nothing from fewer than 2 dims
            return in_shapes, out_shapes
        n = a[-1] if self.p.transpose else a[-2]
        return in_shapes, [merge_shape(self.op_name, 'output', tuple(a[:-2]) + (n, n),
                                       out_shapes[0])]

    def forward(self, octx, inputs, aux):
        xp, a = octx.xp, inputs[0]
        out = xp.matmul(t(xp, a), a) if self.p.transpose else xp.matmul(a, t(xp, a))
        return [out * out.dtype.type(self.p.alpha)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, a, dy = octx.xp, inputs[0], out_grads[0]
        sym = (dy + t(xp, dy)) * dy.dtype.type(self.p.alpha)
        return [xp.matmul(a, sym) if self.p.transpose else xp.matmul(sym, a)]


def _batch_reduced(shape):
    """MXNet's shape of a per-matrix scalar: the batch dimensions, or (1,) for one matrix."""
    return tuple(shape[:-2]) or (1,)


@register
class LinalgSumLogDiag(LinalgOp):
    """``sum(log(diag(A)))`` per matrix."""
    op_name = '_linalg_sumlogdiag'
    aliases = ('linalg_sumlogdiag',)
    arguments = ('A',)
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        a = in_shapes[0]
        if a is None or len(a) < 2:     # MXNet infers nothing from fewer than 2 dims
            return in_shapes, out_shapes
        return in_shapes, [merge_shape(self.op_name, 'output', _batch_reduced(a), out_shapes[0])]

    def forward(self, octx, inputs, aux):
        xp, a = octx.xp, inputs[0]
        out = xp.log(xp.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1)
        return [out.reshape(_batch_reduced(a.shape))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, a = octx.xp, inputs[0]
        n = a.shape[-1]
        dy = out_grads[0].reshape(a.shape[:-2] + (1, 1))
        eye = xp.eye(n, dtype=a.dtype)
        return [eye * dy / xp.where(eye > 0, a, 1)]
