"""Matrix products: dot (MXNet's N-d rule), batch_dot, linalg_gemm2 and khatri_rao.

MXNet's ``dot`` views its operands as matrices: ``lhs`` as (prod(shape[:-1]), shape[-1]) (or, with
``transpose_a``, as (shape[0], prod(shape[1:])) transposed), ``rhs`` as (shape[0], prod(shape[1:]))
(or, with ``transpose_b``, (prod(shape[:-1]), shape[-1]) transposed). The output keeps the
uncontracted dimensions of both, in order."""

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape, mx_dim
from . import blas


def _prod(dims):
    total = 1
    for d in dims:
        total *= d
    return total


def _split(shape, first):
    """(rows, cols) dims of an operand viewed as a matrix: split after the first axis or before
    the last one."""
    shape = tuple(shape)
    if len(shape) == 1:
        return ((shape[0],), (1,)) if first else ((1,), (shape[0],))
    return (shape[:1], shape[1:]) if first else (shape[:-1], shape[-1:])


def _same_dim(op, what, a, b):
    """``a``, which must equal ``b`` as MXNet compares dims: an unknown dim (0 here, -1 there)
    equals only an unknown dim."""
    if mx_dim(a) != mx_dim(b):
        raise MXNetError('%s: shape mismatch for %s: %s vs %s'
                         % (op, what, a or 'unknown', b or 'unknown'))
    return a


@register
class Dot(Operator):
    """Matrix product of two arrays of any rank (see the module docstring); 1-D by 1-D is the inner
    product with shape (1,). ``forward_stype`` is accepted and ignored (dense only)."""
    op_name = 'dot'
    arguments = ('lhs', 'rhs')
    params = {'transpose_a': Param('bool', False), 'transpose_b': Param('bool', False),
              'forward_stype': Param('str?', None, (None, 'default', 'row_sparse', 'csr'))}
    backward_uses = ('inputs',)

    def _views(self, lshape, rshape):
        """Matrix views (dims) of both operands and the output shape."""
        ta, tb = self.p.transpose_a, self.p.transpose_b
        if len(lshape) == 1 and len(rshape) == 1:
            if ta or tb:
                raise MXNetError('dot: cannot transpose 1-D vectors')
            return ((1,), tuple(lshape)), (tuple(rshape), (1,)), (1,)
        lview = _split(lshape, ta)
        rview = _split(rshape, not tb)
        out = ()
        if len(lshape) > 1:
            out += lview[1] if ta else lview[0]
        if len(rshape) > 1:
            out += rview[0] if tb else rview[1]
        return lview, rview, out

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the output from both operands (nothing flows back to them); the contracted
        # dims must be known (MXNet multiplies them out) and agree
        lshape, rshape = in_shapes
        if lshape is None or rshape is None:
            return in_shapes, out_shapes
        if not lshape or not rshape:
            raise MXNetError('dot: scalar (0-d) operands are not supported, got %s and %s'
                             % (tuple(lshape), tuple(rshape)))
        lview, rview, out = self._views(lshape, rshape)
        if len(lshape) == 1 and len(rshape) == 1:
            _same_dim('dot', 'the vectors\' length', lshape[0], rshape[0])
            return in_shapes, [out]
        inner_l = lview[0] if self.p.transpose_a else lview[1]
        inner_r = rview[1] if self.p.transpose_b else rview[0]
        if not all(inner_l) or not all(inner_r) or _prod(inner_l) != _prod(inner_r):
            raise MXNetError('dot: shape error: %s x %s (transpose_a=%s, transpose_b=%s): the'
                             ' contracted dims %s and %s must be known and of one size'
                             % (tuple(lshape), tuple(rshape), self.p.transpose_a,
                                self.p.transpose_b, inner_l, inner_r))
        return in_shapes, [out]

    def _matrices(self, lhs, rhs):
        lview, rview, out = self._views(lhs.shape, rhs.shape)
        a = lhs.reshape(_prod(lview[0]), _prod(lview[1]))
        b = rhs.reshape(_prod(rview[0]), _prod(rview[1]))
        return (a.T if self.p.transpose_a else a), (b.T if self.p.transpose_b else b), out

    def forward(self, octx, inputs, aux):
        lhs, rhs = inputs
        a, b, out = self._matrices(lhs, rhs)
        return [blas.matmul_for(octx.xp)(a, b).reshape(out)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        lhs, rhs = inputs
        a, b, _ = self._matrices(lhs, rhs)
        dy = out_grads[0].reshape(a.shape[0], b.shape[1])
        mm = blas.matmul_for(octx.xp)
        da = mm(dy, b.T)
        db = mm(a.T, dy)
        da = da.T if self.p.transpose_a else da
        db = db.T if self.p.transpose_b else db
        return [da.reshape(lhs.shape), db.reshape(rhs.shape)]


def _batch_shape(op, lshape, rshape, ta, tb):
    """Output shape of a batched matrix product over the last two axes (0 = unknown)."""
    if len(lshape) != len(rshape) or len(lshape) < 3:
        raise MXNetError('%s: operands must have the same number (>= 3) of dimensions, got %s and %s'
                         % (op, tuple(lshape), tuple(rshape)))
    lead = tuple(_same_dim(op, 'batch dimension', a, b) for a, b in zip(lshape[:-2], rshape[:-2]))
    m, kl = (lshape[-1], lshape[-2]) if ta else (lshape[-2], lshape[-1])
    kr, n = (rshape[-1], rshape[-2]) if tb else (rshape[-2], rshape[-1])
    _same_dim(op, 'contracted axis (%s x %s, transpose_a=%s, transpose_b=%s)'
                % (tuple(lshape), tuple(rshape), ta, tb), kl, kr)
    return lead + (m, n)


def _t(xp, x, flag):
    return xp.swapaxes(x, -1, -2) if flag else x


@register
class BatchDot(Operator):
    """Batched matrix product over the last two axes of two N-d (N >= 3) arrays."""
    op_name = 'batch_dot'
    arguments = ('lhs', 'rhs')
    params = {'transpose_a': Param('bool', False), 'transpose_b': Param('bool', False),
              'forward_stype': Param('str?', None, (None, 'default', 'row_sparse', 'csr'))}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        lshape, rshape = in_shapes
        if lshape is None or rshape is None:
            return in_shapes, out_shapes
        if len(lshape) >= 3 and len(lshape) == len(rshape) and not (lshape[-1] and rshape[-2]):
            return in_shapes, out_shapes    # MXNet infers nothing until these two are known
        out = _batch_shape(self.op_name, lshape, rshape, self.p.transpose_a, self.p.transpose_b)
        return in_shapes, [merge_shape(self.op_name, 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        xp, (lhs, rhs) = octx.xp, inputs
        _batch_shape(self.op_name, lhs.shape, rhs.shape, self.p.transpose_a, self.p.transpose_b)
        return [xp.matmul(_t(xp, lhs, self.p.transpose_a), _t(xp, rhs, self.p.transpose_b))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (lhs, rhs), dy = octx.xp, inputs, out_grads[0]
        a, b = _t(xp, lhs, self.p.transpose_a), _t(xp, rhs, self.p.transpose_b)
        da = xp.matmul(dy, xp.swapaxes(b, -1, -2))
        db = xp.matmul(xp.swapaxes(a, -1, -2), dy)
        return [_t(xp, da, self.p.transpose_a), _t(xp, db, self.p.transpose_b)]


@register
class LinalgGemm2(Operator):
    """``alpha * op(A) @ op(B)`` on the matrices whose rows run along ``axis`` and columns along
    the last axis (as if ``axis`` were swapped with the second-to-last), batched over the other
    (equal) dimensions."""
    op_name = '_linalg_gemm2'
    aliases = ('linalg_gemm2',)
    arguments = ('A', 'B')
    params = {'transpose_a': Param('bool', False), 'transpose_b': Param('bool', False),
              'alpha': Param('float', 1.0), 'axis': Param('int', -2)}
    backward_uses = ('inputs',)

    def _row_axis(self, ndim):
        axis = self.p.axis + ndim if self.p.axis < 0 else self.p.axis
        if not 0 <= axis < ndim - 1:
            raise MXNetError('linalg_gemm2: axis %d is invalid for %d-D inputs (it must name a'
                             ' dimension before the last)' % (self.p.axis, ndim))
        return axis

    def _swapped(self, shape):
        shape = list(shape)
        axis = self._row_axis(len(shape))
        shape[axis], shape[-2] = shape[-2], shape[axis]
        return tuple(shape)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards once A and B have one rank (>= 2); other ranks infer nothing
        a, b = in_shapes
        if a is None or b is None or len(a) < 2 or len(a) != len(b):
            return in_shapes, out_shapes
        ma, mb = self._swapped(a), self._swapped(b)
        lead = tuple(_same_dim(self.op_name, 'batch dimension', x, y)
                     for x, y in zip(ma[:-2], mb[:-2]))
        out = _batch_shape(self.op_name, (1,) + lead + ma[-2:], (1,) + lead + mb[-2:],
                           self.p.transpose_a, self.p.transpose_b)[1:]
        return in_shapes, [merge_shape(self.op_name, 'output', out_shapes[0], self._swapped(out))]

    def _move(self, xp, x):
        return xp.swapaxes(x, self._row_axis(x.ndim), -2)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        a, b = (self._move(xp, x) for x in inputs)
        out = xp.matmul(_t(xp, a, self.p.transpose_a), _t(xp, b, self.p.transpose_b))
        out = out * out.dtype.type(self.p.alpha)
        return [self._move(xp, out)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        a, b = (self._move(xp, x) for x in inputs)
        dy = self._move(xp, out_grads[0]) * out_grads[0].dtype.type(self.p.alpha)
        oa, ob = _t(xp, a, self.p.transpose_a), _t(xp, b, self.p.transpose_b)
        da = _t(xp, xp.matmul(dy, xp.swapaxes(ob, -1, -2)), self.p.transpose_a)
        db = _t(xp, xp.matmul(xp.swapaxes(oa, -1, -2), dy), self.p.transpose_b)
        return [self._move(xp, da), self._move(xp, db)]


@register
class KhatriRao(Operator):
    """Column-wise Kronecker product of ``num_args`` matrices (m_i, n) -> (prod m_i, n). MXNet
    registers no gradient for it; this one has the exact gradient."""
    op_name = 'khatri_rao'
    params = {'num_args': Param('int')}
    backward_uses = ('inputs',)

    def list_arguments(self):
        return ['arg%d' % i for i in range(self.p.num_args)]

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: every input's shape must be there and their columns agree (an unknown
        # number equals only an unknown one)
        for i, s in enumerate(in_shapes):
            if s is None or len(s) != 2:
                raise MXNetError('khatri_rao: input %d must be 2-D, got %s'
                                 % (i, 'an unknown shape' if s is None else tuple(s)))
        cols = in_shapes[0][1]
        for s in in_shapes:
            _same_dim(self.op_name, 'number of columns', cols, s[1])
        rows = _prod(s[0] for s in in_shapes)
        return in_shapes, [merge_shape(self.op_name, 'output', out_shapes[0], (rows, cols))]

    def forward(self, octx, inputs, aux):
        out = inputs[0]
        for mat in inputs[1:]:
            out = (out[:, None, :] * mat[None, :, :]).reshape(-1, mat.shape[1])
        return [out]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        rows = [m.shape[0] for m in inputs]
        dy = out_grads[0].reshape(tuple(rows) + (-1,))
        grads = []
        for i in range(len(inputs)):
            others = xp.ones_like(dy)
            for j, mat in enumerate(inputs):
                if j != i:
                    shape = [1] * len(inputs) + [mat.shape[1]]
                    shape[j] = mat.shape[0]
                    others = others * mat.reshape(shape)
            axes = tuple(j for j in range(len(inputs)) if j != i)
            grads.append((dy * others).sum(axis=axes) if axes else dy * others)
        return grads
