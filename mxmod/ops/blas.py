"""Matrix products on Intel MKL when it is installed (the ``mkl`` wheel, part of mxmod's ``mkl``
and ``test`` extras), else numpy's: those of FullyConnected, ``dot``, the fused LSTM layers and
convolution's numpy path.

numpy's wheels multiply with OpenBLAS. On this project's machines MKL's ``sgemm`` is 1.15-1.3x
faster on one thread for the products of a fully connected layer (784 x 512 by a batch of 128:
540 against 680 us) and 1.5x faster on two (its threads split these shapes better), which is
what FullyConnected's forward and backward spend most of their time on (bench/NOTES.md, O7).

``MXMOD_BLAS`` chooses: ``auto`` (the default: MKL when its library is found), ``mkl`` (MKL, an
error if it is missing) or ``numpy`` (numpy's products only).

MKL runs in its conditional-numerical-reproducibility mode (``MKL_CBWR=AUTO,STRICT`` unless the
user set ``MKL_CBWR``): its results then depend neither on the thread count, which mxmod's thread
governor changes with the machine's load, nor on the operands' alignment, so a run repeats bit
for bit as it does on OpenBLAS. Its threads are the governor's (threadpoolctl finds the library
like numpy's OpenBLAS). Products below ``MIN_WORK`` multiply-adds stay on numpy: the ctypes call
costs about 1.5 us, more than such a product saves."""
import ctypes
import glob
import os
import sys
import threading

import numpy as np

__all__ = ['matmul', 'matmul_for', 'backend', 'set_backend', 'MIN_WORK']

MIN_WORK = 1 << 16
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_CBWR_AUTO, _CBWR_STRICT = 2, 0x10000
# MKL's threading layers (MKL_Set_Threading_Layer); INTEL needs libiomp5 (the intel-openmp wheel)
_LAYER_INTEL, _LAYER_SEQUENTIAL = 0, 1
_CHOICES = ('auto', 'mkl', 'numpy')

_STATE = {'lib': None, 'loaded': False, 'choice': None, 'error': None}
_GEMM = {}          # dtype -> MKL's gemm function, once loaded
_ACTIVE = {}        # the same while MKL is in use (empty: numpy multiplies)
_LOCK = threading.Lock()


def _mkl_paths(search_system=False):
    """Candidate paths of ``libmkl_rt``: the files of the installed ``mkl`` distribution (its
    wheel puts the libraries in the environment's ``lib``), the environment's ``lib`` itself
    (conda), and with ``search_system`` the loader's own search (``ldconfig``, which runs a
    subprocess: only when MKL was asked for by name)."""
    paths = []
    try:
        from importlib import metadata  # pylint: disable=import-outside-toplevel
        files = metadata.distribution('mkl').files or ()
        paths.extend(os.path.realpath(str(entry.locate())) for entry in files
                     if entry.name.startswith('libmkl_rt.so'))
    except Exception:   # pylint: disable=broad-except  (no mkl distribution, or no RECORD)
        pass
    paths.sort(key=len)
    paths.extend(sorted((os.path.realpath(p) for p in
                         glob.glob(os.path.join(sys.prefix, 'lib', 'libmkl_rt.so*'))), key=len))
    if search_system:
        import ctypes.util  # pylint: disable=import-outside-toplevel
        found = ctypes.util.find_library('mkl_rt')
        if found:
            paths.append(found)
    unique = []
    for path in paths:
        if path not in unique:
            unique.append(path)
    return unique


def _configure(lib, path):
    """Threading layer, reproducibility mode and thread count of a freshly loaded MKL."""
    environ = os.environ
    if not environ.get('MKL_THREADING_LAYER'):
        libdir = os.path.dirname(path)
        has_omp = bool(libdir) and any(name.startswith('libiomp5')
                                       for name in os.listdir(libdir))
        lib.MKL_Set_Threading_Layer(_LAYER_INTEL if has_omp else _LAYER_SEQUENTIAL)
    if not environ.get('MKL_CBWR'):
        lib.MKL_CBWR_Set(_CBWR_AUTO | _CBWR_STRICT)
    if not (environ.get('MKL_NUM_THREADS') or environ.get('OMP_NUM_THREADS')):
        blas = environ.get('OPENBLAS_NUM_THREADS')
        if blas and blas.strip().isdigit() and int(blas) > 0:
            # the user limited "the BLAS" through OpenBLAS's variable: MKL keeps to it too
            lib.MKL_Set_Num_Threads(int(blas))
    gemm_args = [ctypes.c_int] * 6 + [None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_int, None, ctypes.c_void_p, ctypes.c_int]
    for name, scalar, dtype in (('cblas_sgemm', ctypes.c_float, np.float32),
                                ('cblas_dgemm', ctypes.c_double, np.float64)):
        fn = getattr(lib, name)
        args = list(gemm_args)
        args[6] = args[11] = scalar
        fn.argtypes = args
        fn.restype = None
        _GEMM[np.dtype(dtype)] = fn


def _load():
    """Load MKL once (on the first product big enough to use it), as MXMOD_BLAS or
    :func:`set_backend` chose."""
    with _LOCK:
        if _STATE['loaded']:
            return
        choice = _STATE['choice'] or _env_choice()
        _STATE['choice'] = choice
        if choice == 'numpy':
            _STATE['loaded'] = True
            return
        errors = []
        for path in _mkl_paths(search_system=choice == 'mkl'):
            try:
                lib = ctypes.CDLL(path)
                _configure(lib, path)
            except (OSError, AttributeError) as err:
                errors.append('%s: %s' % (path, err))
                _GEMM.clear()
                continue
            _STATE['lib'] = lib
            _ACTIVE.update(_GEMM)
            break
        else:
            _STATE['error'] = '; '.join(errors) or 'no libmkl_rt library found'
        _STATE['loaded'] = True
    if _STATE['lib'] is not None:
        from .. import threads  # pylint: disable=import-outside-toplevel
        threads.blas_loaded()
    elif choice == 'mkl':
        raise ImportError('MXMOD_BLAS=mkl: Intel MKL could not be loaded (%s); install it with '
                          '"pip install mkl" or choose MXMOD_BLAS=auto' % _STATE['error'])


def _env_choice():
    value = os.environ.get('MXMOD_BLAS', 'auto').strip().lower() or 'auto'
    if value not in _CHOICES:
        raise ValueError('MXMOD_BLAS must be one of %s, got %r'
                         % (', '.join(_CHOICES), os.environ['MXMOD_BLAS']))
    return value


def backend():
    """'mkl' or 'numpy': what large products run on (loads MKL first if it is to be used)."""
    if not _STATE['loaded']:
        _load()
    return 'mkl' if _ACTIVE else 'numpy'


def set_backend(name):
    """Choose 'auto', 'mkl' or 'numpy' at run time, as MXMOD_BLAS does at start; returns the
    backend now in use. 'mkl' raises ImportError when MKL cannot be loaded."""
    value = str(name).strip().lower()
    if value not in _CHOICES:
        raise ValueError('blas backend must be one of %s, got %r' % (', '.join(_CHOICES), name))
    _STATE['choice'] = value
    _ACTIVE.clear()
    if value == 'numpy':
        return 'numpy'
    if not _STATE['loaded'] or _STATE['lib'] is None:
        _STATE['loaded'] = False
        _load()
    _ACTIVE.update(_GEMM)
    return backend()


def _operand(x):
    """(transpose flag, leading dimension) of a 2-D array for a row-major GEMM, or None when its
    strides fit neither a row-major nor a transposed row-major matrix."""
    if not x.flags.aligned:
        return None
    item = x.itemsize
    s0, s1 = x.strides
    rows, cols = x.shape
    if (s1 == item or cols == 1) and s0 >= cols * item and s0 % item == 0:
        return _NO_TRANS, max(s0 // item, cols, 1)
    if (s0 == item or rows == 1) and s1 >= rows * item and s1 % item == 0:
        return _TRANS, max(s1 // item, rows, 1)
    return None


def matmul(a, b, out=None):
    """``a @ b`` of two 2-D numpy arrays, written into ``out`` when given (a C-ordered array of
    the result's shape and dtype), on MKL when it is in use and the product is large enough."""
    if a.size * b.shape[-1] < MIN_WORK:       # first, as it is cheapest: small products
        return np.matmul(a, b, out=out)
    fn = _ACTIVE.get(a.dtype)
    if fn is None or b.dtype != a.dtype or a.ndim != 2 or b.ndim != 2:
        if not _STATE['loaded'] and a.ndim == 2 and b.ndim == 2:
            _load()
            if _ACTIVE:
                return matmul(a, b, out)
        return np.matmul(a, b, out=out)
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((m, n), a.dtype)
    elif out.dtype != a.dtype or out.shape != (m, n) or not out.flags.c_contiguous or \
            not out.flags.writeable or np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return np.matmul(a, b, out=out)
    ta, tb = _operand(a), _operand(b)
    if ta is None or tb is None:
        return np.matmul(a, b, out=out)
    fn(_ROW_MAJOR, ta[0], tb[0], m, n, k, 1.0, a.ctypes.data, ta[1], b.ctypes.data, tb[1],
       0.0, out.ctypes.data, n)
    return out


def matmul_for(xp):
    """The 2-D product to use for arrays of ``xp``: :func:`matmul` on the host (numpy), the
    device library's own elsewhere (cupy)."""
    return matmul if xp is np else xp.matmul
