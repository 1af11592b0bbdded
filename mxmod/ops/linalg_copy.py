"""The ``linalg`` copies between matrices and vectors: extractdiag / makediag (a diagonal at
``offset``) and extracttrian / maketrian (a triangle, packed row by row; an upper triangle, chosen
by ``offset > 0`` or ``lower=False`` at offset 0, is packed as the lower triangle of the
transpose, as MXNet does). Each operator's gradient is its partner's forward."""
import numpy as np

from ..base import MXNetError
from .base import Param, register, merge_shape
from .linalg import LinalgOp, square_check


def _diag_index(size, offset):
    """Row and column indices of the diagonal ``offset`` of length ``size``."""
    base = np.arange(size)
    return base + max(-offset, 0), base + max(offset, 0)


def _trian_index(n, offset, lower):
    """Row and column indices of the packed triangle of an n x n matrix."""
    k = abs(offset)
    rows, cols = np.tril_indices(n - k)
    rows = rows + k
    if offset > 0 or (offset == 0 and not lower):
        rows, cols = cols, rows
    return rows, cols


def _packed_size(count, op):
    """n with n (n + 1) / 2 == count."""
    n = int(round((np.sqrt(8 * count + 1) - 1) / 2))
    if n * (n + 1) // 2 != count:
        raise MXNetError('%s: the last dimension %d is not a triangular number n(n+1)/2'
                         % (op, count))
    return n


class _Copy(LinalgOp):
    """A gather (extract) or scatter (make) between trailing matrices and trailing vectors."""
    arguments = ('A',)
    backward_uses = ()
    extract = True

    def indices(self, n):
        raise NotImplementedError

    def matrix_size(self, vector_len):
        raise NotImplementedError

    def vector_len(self, n):
        return len(self.indices(n)[0])

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards only; MXNet sizes its result from A's rank even when that is
        # unknown, and fails; an unknown matrix size fails where MXNet's arithmetic on it does
        a = in_shapes[0]
        if a is None:
            raise MXNetError('%s: the shape of A must be known' % self.op_name)
        if not a:
            return in_shapes, out_shapes
        if self.extract:
            square_check(self.op_name, a, partial=True)
            if not a[-1] or a[-1] <= abs(self.p.offset):
                raise MXNetError('%s: offset %d is too large for %s x %s matrices'
                                 % (self.op_name, self.p.offset, a[-1] or 'unknown',
                                    a[-1] or 'unknown'))
            out = tuple(a[:-2]) + (self.vector_len(a[-1]),)
        elif not a[-1]:
            if type(self).__name__ == 'LinalgMakeTrian':
                raise MXNetError('%s: the size of the packed triangles (the last dim of A) must '
                                 'be known, got %s' % (self.op_name, tuple(a)))
            out = tuple(a[:-1]) + (0, 0)
        else:
            n = self.matrix_size(a[-1])
            out = tuple(a[:-1]) + (n, n)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def gather(self, xp, mat):
        rows, cols = self.indices(mat.shape[-1])
        return mat[..., xp.asarray(rows), xp.asarray(cols)]

    def scatter(self, xp, vec, n):
        rows, cols = self.indices(n)
        out = xp.zeros(vec.shape[:-1] + (n, n), dtype=vec.dtype)
        out[..., xp.asarray(rows), xp.asarray(cols)] = vec
        return out

    def forward(self, octx, inputs, aux):
        a = inputs[0]
        if self.extract:
            square_check(self.op_name, a.shape)
            octx.saved['n'] = a.shape[-1]
            return [self.gather(octx.xp, a)]
        return [self.scatter(octx.xp, a, self.matrix_size(a.shape[-1]))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        if self.extract:
            return [self.scatter(octx.xp, dy, octx.saved['n'])]
        return [self.gather(octx.xp, dy)]


@register
class LinalgExtractDiag(_Copy):
    """The diagonal ``offset`` of each trailing matrix."""
    op_name = '_linalg_extractdiag'
    aliases = ('linalg_extractdiag',)
    params = {'offset': Param('int', 0)}

    def indices(self, n):
        return _diag_index(n - abs(self.p.offset), self.p.offset)


@register
class LinalgMakeDiag(_Copy):
    """Square matrices with the trailing vectors on diagonal ``offset``, zeros elsewhere."""
    op_name = '_linalg_makediag'
    aliases = ('linalg_makediag',)
    params = {'offset': Param('int', 0)}
    extract = False

    def matrix_size(self, vector_len):
        return vector_len + abs(self.p.offset)

    def indices(self, n):
        return _diag_index(n - abs(self.p.offset), self.p.offset)


@register
class LinalgExtractTrian(_Copy):
    """The triangle of each trailing matrix (lower, or upper, beyond diagonal ``offset``),
    packed into a vector."""
    op_name = '_linalg_extracttrian'
    aliases = ('linalg_extracttrian',)
    params = {'offset': Param('int', 0), 'lower': Param('bool', True)}

    def indices(self, n):
        return _trian_index(n, self.p.offset, self.p.lower)


@register
class LinalgMakeTrian(_Copy):
    """Triangular matrices from packed triangles (the inverse layout of extracttrian)."""
    op_name = '_linalg_maketrian'
    aliases = ('linalg_maketrian',)
    params = {'offset': Param('int', 0), 'lower': Param('bool', True)}
    extract = False

    def matrix_size(self, vector_len):
        return _packed_size(vector_len, self.op_name) + abs(self.p.offset)

    def indices(self, n):
        return _trian_index(n, self.p.offset, self.p.lower)
