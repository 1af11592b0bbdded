"""Whether the compiled (numba) kernels of convolution, BatchNorm and pooling are used.

They are used when numba imports and ``MXMOD_NUMBA`` is not ``0``; otherwise every operator runs
its numpy code, which stays the reference the kernels are tested against. :func:`set_enabled`
switches at run time (tests run both paths). numba compiles each kernel the first time it runs
and keeps the machine code in its cache (``cache=True``), so only a process that finds no cache
pays the compile time (a few seconds, in the first training step)."""
import os

__all__ = ['enabled', 'set_enabled']

_STATE = {'enabled': None, 'error': None}


def _probe():
    if os.environ.get('MXMOD_NUMBA', '1').strip().lower() in ('0', 'false', 'off', 'no'):
        return False
    try:
        import numba  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as err:
        _STATE['error'] = err
        return False
    return True


def enabled():
    """True when the compiled kernels are in use."""
    if _STATE['enabled'] is None:
        _STATE['enabled'] = _probe()
    return _STATE['enabled']


def set_enabled(flag):
    """Use (True) or bypass (False) the compiled kernels; returns the previous setting. True
    without numba installed raises ImportError."""
    previous = enabled()
    if flag:
        import numba  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    _STATE['enabled'] = bool(flag)
    return previous
