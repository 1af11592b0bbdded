"""Waiting for a counter without sleeping (imported by kpool only when numba is present).

A helper thread that blocks on a lock between two kernels is put to sleep, and so, soon after,
is its (virtual) CPU: waking it took about 50 us here, against 0.1-2 ms for a kernel's piece.
:func:`wait` instead watches an int64 counter for a bounded number of iterations, without the
GIL (``nogil``), and reports whether it reached the target; the callers then take the lock as
before, which is free by then (kpool)."""
import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ['wait']

_X86 = platform.machine().lower() in ('x86_64', 'amd64', 'i386', 'i686')


@intrinsic
def _load_acquire(typingctx, arr, idx):
    """arr[idx] (int64) read with acquire ordering: never hoisted out of a loop."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        return builder.load_atomic(ptr, 'acquire', 8)
    return types.int64(arr, idx), codegen


@intrinsic
def _pause(typingctx):
    """The x86 spin-loop hint (``pause``); nothing elsewhere."""
    def codegen(context, builder, sig, args):
        if _X86:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                'llvm.x86.sse2.pause')
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.none(), codegen


@intrinsic
def _sched_yield(typingctx):
    """``sched_yield()`` of the C library: another runnable thread on this core (an OpenBLAS
    worker, the caller's own thread) gets the core now instead of after a time slice."""
    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module,
                                            ir.FunctionType(ir.IntType(32), []), 'sched_yield')
        builder.call(fn, [])
        return context.get_dummy_value()
    return types.none(), codegen


# looks between two sched_yield calls while waiting (about 2.5 us of pauses): a waiting thread
# that only pauses keeps its core for a whole time slice (milliseconds) from any other thread
# that became runnable there, such as the BLAS library's own worker threads
YIELD_EVERY = 64


@njit(nogil=True, cache=True)
def wait(counter, idx, target, rounds):
    """True once counter[idx] >= target, False after ``rounds`` looks (each about 40 ns)."""
    for i in range(rounds):
        if _load_acquire(counter, idx) >= target:
            return True
        if i % YIELD_EVERY == YIELD_EVERY - 1:
            _sched_yield()
        else:
            _pause()
    return False


@intrinsic
def _store_release(typingctx, arr, idx, value):
    """arr[idx] = value (int64) with release ordering."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        builder.store_atomic(args[2], ptr, 'release', 8)
        return context.get_dummy_value()
    return types.none(arr, idx, types.int64), codegen


@njit(nogil=True, cache=True)
def post_and_wait(counter, post_idx, value, idx, target, rounds, settle):
    """counter[post_idx] = value, then :func:`wait` (counter, idx, target, rounds) and, once the
    target is reached, ``settle`` more looks, all without the GIL: a helper reports a task done
    and looks for the next one; the caller hands a task over and waits until the helper has
    started it and (``settle``) released the GIL again, so that the caller never waits for the
    GIL (a thread waiting for the GIL sleeps, and took about 20 us to wake here)."""
    _store_release(counter, post_idx, value)
    if not wait(counter, idx, target, rounds):
        return False
    for _ in range(settle):
        _pause()
    return True
