"""Keeping the debug logging of the libraries mxmod uses out of the user's log.

MXNet's example scripts call ``logging.basicConfig(level=logging.DEBUG)``. The root logger's level
then applies to every logger that has none of its own, so numba's compiler alone would print tens
of thousands of lines the first time mxmod's kernels compile, and matplotlib, Pillow, graphviz or
urllib3 more at each plot, image or download. At import, mxmod sets the loggers of the libraries
it imports (directly or through them) to WARNING, but only those whose level is still unset
(NOTSET): a level the user gave a library's logger, before or after importing mxmod, is kept.
Their warnings and errors still reach the user's handlers."""
import logging
import warnings

__all__ = ['QUIETED_LIBRARIES', 'quiet_library_loggers', 'FLOAT_WARNINGS', 'quiet_float_warnings']

# top-level loggers of the libraries that mxmod imports and that log below WARNING: numba (its
# compiler's IR dumps), llvmlite, matplotlib (font cache), PIL (through matplotlib and
# tensorboardX), graphviz (visualization), tensorboardX, onnx, requests/urllib3 (downloads)
QUIETED_LIBRARIES = ('numba', 'llvmlite', 'matplotlib', 'PIL', 'graphviz', 'tensorboardX',
                     'onnx', 'requests', 'urllib3')


def quiet_library_loggers(names=QUIETED_LIBRARIES, level=logging.WARNING):
    """Set the logger of each library in ``names`` to ``level`` when its level is unset.

    Parameters
    ----------
    names : sequence of str
        Logger names (a library's top-level logger covers its modules' loggers).
    level : int, default logging.WARNING

    Returns
    -------
    list of str
        The names whose level was set (the others had a level already).
    """
    changed = []
    for name in names:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(level)
            changed.append(name)
    return changed


# numpy's floating-point warnings (np.errstate's four kinds)
FLOAT_WARNINGS = r'(divide by zero|invalid value|overflow|underflow) encountered'


def quiet_float_warnings():
    """Keep numpy's floating-point RuntimeWarnings raised inside mxmod's operators (``log`` of 0,
    a division by 0, ``sqrt`` of a negative value, an overflowing ``exp``) out of the user's
    output: MXNet computes the same inf and nan without a word. Only warnings attributed to
    mxmod's modules are filtered; the user's own numpy code warns as before, and mxmod's own
    warnings (other messages) are untouched."""
    warnings.filterwarnings('ignore', message=FLOAT_WARNINGS, category=RuntimeWarning,
                            module=r'mxmod(\.|_fused_|$)')
