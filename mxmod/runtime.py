"""``mx.runtime``: which features this installation of mxmod has, with MXNet 1.9.1's API
(``Features()``, ``feature_list()``, ``Feature``).

MXNet reports how its library was compiled; mxmod reports what it can use here and now, found
without side effects (optional packages are looked up, not imported; MPI is not initialized):

- MXNet's 32 feature names, in MXNet's order: ``CUDA`` (cupy with a visible GPU), ``CUDNN`` and
  ``NCCL`` (cupy's bindings present), ``CUDA_RTC`` (cupy compiles kernels at run time), the CPU
  instruction sets numpy dispatches to (``CPU_SSE`` ... ``CPU_AVX2``, ``SSE``, ``F16C``), the BLAS
  numpy uses (``BLAS_OPEN``/``BLAS_MKL``/``BLAS_ATLAS``/``BLAS_APPLE``, ``LAPACK``, ``OPENMP``),
  ``JEMALLOC`` (preloaded), ``OPENCV`` (cv2), ``PROFILER`` (always), ``DIST_KVSTORE`` (mpi4py),
  ``INT64_TENSOR_SIZE`` (always), ``SIGNAL_HANDLER`` (faulthandler on), ``DEBUG`` (python -X dev);
  ``TENSORRT``, ``MKLDNN``, ``CAFFE``, ``CXX14`` and ``TVM_OP`` are native-library features mxmod
  does not have.
- then mxmod's own: ``MPI`` (mpi4py), ``JPEG`` (an image decoder: OpenCV or Pillow), ``ONNX``
  (onnx, for ``mx.onnx`` export), ``ONNXRUNTIME``, ``GRAPHVIZ`` (``mx.viz.plot_network``),
  ``MATPLOTLIB`` (metric plots), ``TENSORBOARD`` (tensorboardX)."""
import collections
import faulthandler
import importlib.util
import sys

import numpy as np

__all__ = ['Feature', 'Features', 'feature_list']


class Feature(object):
    """One feature: ``name`` and whether it is ``enabled``."""
    __slots__ = ('_name', '_enabled')

    def __init__(self, name, enabled):
        self._name = str(name)
        self._enabled = bool(enabled)

    @property
    def name(self):
        """Feature name."""
        return self._name

    @property
    def enabled(self):
        """True when this installation has the feature."""
        return self._enabled

    def __repr__(self):
        return '%s %s' % ('\u2714' if self._enabled else '\u2716', self._name)


def _installed(module):
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _cpu_flags():
    """Instruction sets numpy can dispatch to (MXNet's names), from numpy or /proc/cpuinfo."""
    numpy_names = {'CPU_SSE': 'SSE', 'CPU_SSE2': 'SSE2', 'CPU_SSE3': 'SSE3',
                   'CPU_SSE4_1': 'SSE41', 'CPU_SSE4_2': 'SSE42', 'CPU_AVX': 'AVX',
                   'CPU_AVX2': 'AVX2', 'F16C': 'F16C'}
    cpuinfo_names = {'CPU_SSE': 'sse', 'CPU_SSE2': 'sse2', 'CPU_SSE3': 'pni',
                     'CPU_SSE4_1': 'sse4_1', 'CPU_SSE4_2': 'sse4_2', 'CPU_SSE4A': 'sse4a',
                     'CPU_AVX': 'avx', 'CPU_AVX2': 'avx2', 'F16C': 'f16c'}
    cpuinfo = set()
    try:
        with open('/proc/cpuinfo') as src:
            for line in src:
                if line.startswith('flags'):
                    cpuinfo = set(line.split(':', 1)[1].split())
                    break
    except OSError:
        pass
    dispatch = None
    for module in ('numpy._core._multiarray_umath', 'numpy.core._multiarray_umath'):
        try:
            dispatch = getattr(importlib.import_module(module), '__cpu_features__')
            break
        except (ImportError, AttributeError):
            continue
    flags = {}
    for name, flag in cpuinfo_names.items():
        if dispatch is not None and name in numpy_names:
            flags[name] = bool(dispatch.get(numpy_names[name]))
        else:
            flags[name] = flag in cpuinfo
    flags['SSE'] = flags['CPU_SSE']
    return flags


def _blas():
    """(BLAS name, configuration text, LAPACK present) of numpy's build."""
    try:
        deps = np.show_config(mode='dicts')['Build Dependencies']
    except Exception:  # pylint: disable=broad-except
        return '', '', False
    blas = deps.get('blas', {})
    return (str(blas.get('name', '')).lower(), str(blas.get('openblas configuration', '')),
            bool(deps.get('lapack', {}).get('found', False)))


def _gpu():
    """(CUDA usable, cuDNN bindings, NCCL bindings), without importing cupy when absent."""
    if not _installed('cupy'):
        return False, False, False
    from .context import num_gpus  # pylint: disable=import-outside-toplevel
    if num_gpus() == 0:
        return False, False, False
    try:
        from cupy.cuda import nccl  # pylint: disable=import-outside-toplevel
        has_nccl = bool(getattr(nccl, 'available', True))
    except ImportError:
        has_nccl = False
    return True, _installed('cupy.cudnn') or _installed('cupyx.cudnn'), has_nccl


def _jemalloc():
    try:
        with open('/proc/self/maps') as src:
            return 'jemalloc' in src.read()
    except OSError:
        return False


def _detect():
    """[(name, enabled)] in MXNet's order, then mxmod's own features."""
    cuda, cudnn, nccl = _gpu()
    blas, blas_config, lapack = _blas()
    cpu = _cpu_flags()
    mpi = _installed('mpi4py')
    features = [('CUDA', cuda), ('CUDNN', cudnn), ('NCCL', nccl), ('CUDA_RTC', cuda),
                ('TENSORRT', False)]
    features += [(name, cpu[name]) for name in ('CPU_SSE', 'CPU_SSE2', 'CPU_SSE3', 'CPU_SSE4_1',
                                                'CPU_SSE4_2', 'CPU_SSE4A', 'CPU_AVX',
                                                'CPU_AVX2')]
    features += [('OPENMP', 'USE_OPENMP=1' in blas_config or 'mkl' in blas), ('SSE', cpu['SSE']),
                 ('F16C', cpu['F16C']), ('JEMALLOC', _jemalloc()),
                 ('BLAS_OPEN', 'openblas' in blas), ('BLAS_ATLAS', 'atlas' in blas),
                 ('BLAS_MKL', 'mkl' in blas), ('BLAS_APPLE', 'accelerate' in blas),
                 ('LAPACK', lapack), ('MKLDNN', False), ('OPENCV', _installed('cv2')),
                 ('CAFFE', False), ('PROFILER', True), ('DIST_KVSTORE', mpi), ('CXX14', False),
                 ('INT64_TENSOR_SIZE', True), ('SIGNAL_HANDLER', faulthandler.is_enabled()),
                 ('DEBUG', bool(sys.flags.dev_mode)), ('TVM_OP', False)]
    features += [('MPI', mpi), ('JPEG', _installed('cv2') or _installed('PIL')),
                 ('ONNX', _installed('onnx')), ('ONNXRUNTIME', _installed('onnxruntime')),
                 ('GRAPHVIZ', _installed('graphviz')), ('MATPLOTLIB', _installed('matplotlib')),
                 ('TENSORBOARD', _installed('tensorboardX'))]
    return features


def feature_list():
    """The features of this installation.

    Returns
    -------
    list of Feature
    """
    return [Feature(name, enabled) for name, enabled in _detect()]


class Features(collections.OrderedDict):
    """Feature name -> :class:`Feature`, for this installation (one shared instance)."""
    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super(Features, cls).__new__(cls)
            super(Features, cls.instance).__init__((f.name, f) for f in feature_list())
        return cls.instance

    def __init__(self):  # pylint: disable=super-init-not-called
        pass    # filled once, in __new__

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature ``feature_name`` (any case) is enabled.

        Raises
        ------
        RuntimeError
            For a name that is not a feature.
        """
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError("Feature '{}' is unknown, known features are: {}".format(
                feature_name, list(self.keys())))
        return self[feature_name].enabled
