"""Sixteen-lane float32 vectors for numba kernels (imported only when numba is present).

``F32x16`` is a numba type whose LLVM value is ``<16 x float>``; the intrinsics below load, store,
broadcast and multiply-add such values at flat element offsets of C-contiguous float32 arrays.
Written with them, a kernel keeps its accumulators in vector registers, which numba's loop
vectoriser does not arrange by itself for blocked convolution loops (it vectorises the wrong axis
and keeps the accumulators in memory; measured 5 GFLOP/s against 140-175 with these).

Offsets are not bounds-checked: the callers guarantee that every vector lies inside its array
(``vstore_n`` / ``vload_n`` touch only the first ``n`` lanes)."""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

__all__ = ['F32x16', 'vzero', 'vbcast', 'vload', 'vload_n', 'vstore', 'vstore_n', 'sload',
           'vfma_s', 'vfma', 'vadd', 'vsub', 'vmul', 'vmax', 'vsum', 'prefetch', 'vpos',
           'vmaxnan', 'vhit', 'vsel']

LANES = 16
_FLOAT = ir.FloatType()
_VEC = ir.VectorType(_FLOAT, LANES)
_I32 = ir.IntType(32)
_MASK = ir.VectorType(ir.IntType(1), LANES)


class F32x16Type(types.Type):
    """The numba type of a ``<16 x float>`` value."""

    def __init__(self):
        super().__init__(name='F32x16')


F32x16 = F32x16Type()


@register_model(F32x16Type)
class _F32x16Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def _elem_ptr(context, builder, arrty, arr, idx):
    ary = context.make_array(arrty)(context, builder, arr)
    return builder.gep(ary.data, [idx])


def _vec_ptr(context, builder, arrty, arr, idx):
    return builder.bitcast(_elem_ptr(context, builder, arrty, arr, idx), _VEC.as_pointer())


def _splat(builder, scalar):
    vec = builder.insert_element(ir.Constant(_VEC, ir.Undefined), scalar, ir.Constant(_I32, 0))
    return builder.shuffle_vector(vec, ir.Constant(_VEC, ir.Undefined),
                                  ir.Constant(ir.VectorType(_I32, LANES), None))


def _lane_mask(builder, count):
    """<16 x i1> with the first ``count`` lanes set."""
    lanes = ir.Constant(ir.VectorType(ir.IntType(64), LANES), list(range(LANES)))
    bound = builder.insert_element(ir.Constant(ir.VectorType(ir.IntType(64), LANES), ir.Undefined),
                                   builder.sext(count, ir.IntType(64))
                                   if count.type.width < 64 else count, ir.Constant(_I32, 0))
    bound = builder.shuffle_vector(bound, ir.Constant(bound.type, ir.Undefined),
                                   ir.Constant(ir.VectorType(_I32, LANES), None))
    return builder.icmp_signed('<', lanes, bound)


def _llvm_fn(builder, name, ret, args):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, args), name)


def _is_f32_array(arr):
    return isinstance(arr, types.Array) and arr.dtype == types.float32


@intrinsic
def vzero(typingctx):
    """A vector of zeros."""
    def codegen(context, builder, sig, args):
        return ir.Constant(_VEC, None)
    return F32x16(), codegen


@intrinsic
def vbcast(typingctx, scalar):
    """A vector of 16 copies of a float32 scalar."""
    def codegen(context, builder, sig, args):
        return _splat(builder, args[0])
    return F32x16(types.float32), codegen


@intrinsic
def vload(typingctx, arr, idx):
    """The 16 values of float32 array ``arr`` from flat offset ``idx``."""
    if not _is_f32_array(arr):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_vec_ptr(context, builder, sig.args[0], args[0], args[1]), align=4)
    return F32x16(arr, idx), codegen


@intrinsic
def vload_n(typingctx, arr, idx, count):
    """The first ``count`` values from offset ``idx`` (zeros in the other lanes)."""
    if not _is_f32_array(arr):
        return None

    def codegen(context, builder, sig, args):
        fn = _llvm_fn(builder, 'llvm.masked.load.v16f32.p0', _VEC,
                      [_VEC.as_pointer(), _I32, _MASK, _VEC])
        return builder.call(fn, [_vec_ptr(context, builder, sig.args[0], args[0], args[1]),
                                 ir.Constant(_I32, 4), _lane_mask(builder, args[2]),
                                 ir.Constant(_VEC, None)])
    return F32x16(arr, idx, count), codegen


@intrinsic
def vstore(typingctx, arr, idx, vec):
    """Store ``vec`` at flat offset ``idx`` of ``arr``."""
    if not _is_f32_array(arr):
        return None

    def codegen(context, builder, sig, args):
        builder.store(args[2], _vec_ptr(context, builder, sig.args[0], args[0], args[1]), align=4)
        return context.get_dummy_value()
    return types.none(arr, idx, F32x16), codegen


@intrinsic
def vstore_n(typingctx, arr, idx, vec, count):
    """Store the first ``count`` lanes of ``vec`` at offset ``idx``."""
    if not _is_f32_array(arr):
        return None

    def codegen(context, builder, sig, args):
        fn = _llvm_fn(builder, 'llvm.masked.store.v16f32.p0', ir.VoidType(),
                      [_VEC, _VEC.as_pointer(), _I32, _MASK])
        builder.call(fn, [args[2], _vec_ptr(context, builder, sig.args[0], args[0], args[1]),
                          ir.Constant(_I32, 4), _lane_mask(builder, args[3])])
        return context.get_dummy_value()
    return types.none(arr, idx, F32x16, count), codegen


@intrinsic
def sload(typingctx, arr, idx):
    """``arr.flat[idx]`` without the negative-index and bounds handling of numba's indexing."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_elem_ptr(context, builder, sig.args[0], args[0], args[1]))
    return arr.dtype(arr, idx), codegen


def _fma(builder, a, b, c):
    return builder.call(_llvm_fn(builder, 'llvm.fma.v16f32', _VEC, [_VEC] * 3), [a, b, c])


@intrinsic
def vfma_s(typingctx, acc, scalar, vec):
    """``acc + scalar * vec`` (one fused multiply-add per lane)."""
    def codegen(context, builder, sig, args):
        return _fma(builder, _splat(builder, args[1]), args[2], args[0])
    return F32x16(F32x16, types.float32, F32x16), codegen


@intrinsic
def vfma(typingctx, acc, a, b):
    """``acc + a * b`` lane by lane."""
    def codegen(context, builder, sig, args):
        return _fma(builder, args[1], args[2], args[0])
    return F32x16(F32x16, F32x16, F32x16), codegen


@intrinsic
def vadd(typingctx, a, b):
    """``a + b``."""
    def codegen(context, builder, sig, args):
        return builder.fadd(args[0], args[1])
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def vmul(typingctx, a, b):
    """``a * b``."""
    def codegen(context, builder, sig, args):
        return builder.fmul(args[0], args[1])
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def vmax(typingctx, a, b):
    """Lane-wise maximum (``a`` where either is NaN... as ``a > b ? a : b``)."""
    def codegen(context, builder, sig, args):
        return builder.select(builder.fcmp_ordered('>', args[0], args[1]), args[0], args[1])
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def vsum(typingctx, vec):
    """The sum of the 16 lanes, as float64 (lanes converted, then added pairwise)."""
    def codegen(context, builder, sig, args):
        dbl = ir.VectorType(ir.DoubleType(), LANES)
        wide = builder.fpext(args[0], dbl)
        fn = _llvm_fn(builder, 'llvm.vector.reduce.fadd.v16f64', ir.DoubleType(),
                      [ir.DoubleType(), dbl])
        return builder.call(fn, [ir.Constant(ir.DoubleType(), 0.0), wide])
    return types.float64(F32x16), codegen


@intrinsic
def vsub(typingctx, a, b):
    """``a - b``."""
    def codegen(context, builder, sig, args):
        return builder.fsub(args[0], args[1])
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask for the cache line holding ``arr.flat[idx]`` (a read, kept in all cache levels); no
    effect on results, and no fault for an address past the end."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ptr = builder.bitcast(_elem_ptr(context, builder, sig.args[0], args[0], args[1]),
                              ir.IntType(8).as_pointer())
        fn = _llvm_fn(builder, 'llvm.prefetch.p0', ir.VoidType(),
                      [ir.IntType(8).as_pointer(), _I32, _I32, _I32])
        builder.call(fn, [ptr, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])
        return context.get_dummy_value()
    return types.none(arr, idx), codegen


@intrinsic
def vpos(typingctx, vec):
    """1.0 in the lanes where ``vec > 0`` (an ordered comparison: NaN gives 0.0), else 0.0."""
    def codegen(context, builder, sig, args):
        cond = builder.fcmp_ordered('>', args[0], ir.Constant(_VEC, None))
        return builder.select(cond, ir.Constant(_VEC, [1.0] * LANES), ir.Constant(_VEC, None))
    return F32x16(F32x16), codegen


@intrinsic
def vmaxnan(typingctx, a, b):
    """Lane-wise maximum that a NaN wins (``b`` where ``b > a`` or ``b`` is NaN, else ``a``):
    folding a window's values in order gives numpy's maximum of them."""
    def codegen(context, builder, sig, args):
        take = builder.or_(builder.fcmp_ordered('>', args[1], args[0]),
                           builder.fcmp_unordered('uno', args[1], args[1]))
        return builder.select(take, args[1], args[0])
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def vhit(typingctx, v, m):
    """1.0 in the lanes where ``v == m`` or both are NaN, else 0.0."""
    def codegen(context, builder, sig, args):
        both_nan = builder.and_(builder.fcmp_unordered('uno', args[0], args[0]),
                                builder.fcmp_unordered('uno', args[1], args[1]))
        hit = builder.or_(builder.fcmp_ordered('==', args[0], args[1]), both_nan)
        return builder.select(hit, ir.Constant(_VEC, [1.0] * LANES), ir.Constant(_VEC, None))
    return F32x16(F32x16, F32x16), codegen


@intrinsic
def vsel(typingctx, mask, a):
    """``a`` in the lanes where ``mask`` is not zero, else 0.0 (a NaN in ``a`` does not leak)."""
    def codegen(context, builder, sig, args):
        keep = builder.fcmp_unordered('!=', args[0], ir.Constant(_VEC, None))
        return builder.select(keep, args[1], ir.Constant(_VEC, None))
    return F32x16(F32x16, F32x16), codegen
