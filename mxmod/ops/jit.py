"""Whether the compiled (numba) kernels of convolution, BatchNorm and pooling are used.

They are used when numba imports and ``MXMOD_NUMBA`` is not ``0``; otherwise every operator runs
its numpy code, which stays the reference the kernels are tested against. :func:`set_enabled`
switches at run time (tests run both paths). numba compiles each kernel the first time it runs
and keeps the machine code in its cache (``cache=True``), so only a process that finds no cache
pays the compile time (a few seconds, in the first training step). The first real compilation
of a process (not a load from the cache) logs one INFO line saying so;
``python -m mxmod.tools.precompile`` compiles the kernels ahead."""
import logging
import os

__all__ = ['enabled', 'set_enabled', 'COMPILE_NOTICE']

_STATE = {'enabled': None, 'error': None, 'watching': False, 'noticed': False}

COMPILE_NOTICE = ("compiling mxmod's CPU kernels with numba (once per installation: up to about "
                  "%d s; later runs load them from numba's cache; `python -m "
                  "mxmod.tools.precompile` compiles them all ahead)...")
# seconds of CPU that compiling every kernel takes (python -m mxmod.tools.precompile: 23-25 s on
# one core of a 2-core x86-64 VM)
COMPILE_SECONDS = 30


def _watch_compiles():
    """Log :data:`COMPILE_NOTICE` (INFO, logger ``mxmod``) when numba starts compiling one of
    mxmod's kernels for the first time in this process; loads from the cache say nothing."""
    if _STATE['watching']:
        return
    _STATE['watching'] = True
    from numba.core import event  # pylint: disable=import-outside-toplevel

    class _Notice(event.Listener):
        def on_start(self, ev):
            if _STATE['noticed']:
                return
            dispatcher = (ev.data or {}).get('dispatcher')
            module = getattr(getattr(dispatcher, 'py_func', None), '__module__', '') or ''
            if module.startswith('mxmod.'):
                _STATE['noticed'] = True
                logging.getLogger('mxmod').info(COMPILE_NOTICE, COMPILE_SECONDS)

        def on_end(self, ev):
            pass

    event.register('numba:compile', _Notice())


def _probe():
    if os.environ.get('MXMOD_NUMBA', '1').strip().lower() in ('0', 'false', 'off', 'no'):
        return False
    try:
        import numba  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as err:
        _STATE['error'] = err
        return False
    _watch_compiles()
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
        _watch_compiles()
    _STATE['enabled'] = bool(flag)
    return previous
