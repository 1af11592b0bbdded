"""``mx.runtime``: MXNet's feature names and API, and features that match what is installed."""
import importlib.util

import pytest

import mxmod as mx
from mxmod.runtime import Feature, Features, feature_list

# MXNet 1.9.1's features, in its order (mx.runtime.feature_list() of the oracle)
MXNET_FEATURES = [
    'CUDA', 'CUDNN', 'NCCL', 'CUDA_RTC', 'TENSORRT', 'CPU_SSE', 'CPU_SSE2', 'CPU_SSE3',
    'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_SSE4A', 'CPU_AVX', 'CPU_AVX2', 'OPENMP', 'SSE', 'F16C',
    'JEMALLOC', 'BLAS_OPEN', 'BLAS_ATLAS', 'BLAS_MKL', 'BLAS_APPLE', 'LAPACK', 'MKLDNN', 'OPENCV',
    'CAFFE', 'PROFILER', 'DIST_KVSTORE', 'CXX14', 'INT64_TENSOR_SIZE', 'SIGNAL_HANDLER', 'DEBUG',
    'TVM_OP']


def test_names_order_and_singleton():
    features = Features()
    assert list(features)[:len(MXNET_FEATURES)] == MXNET_FEATURES
    assert list(features)[len(MXNET_FEATURES):] == ['MPI', 'JPEG', 'ONNX', 'ONNXRUNTIME',
                                                    'GRAPHVIZ', 'MATPLOTLIB', 'TENSORBOARD']
    assert Features() is features and mx.runtime.Features() is features
    assert [f.name for f in feature_list()] == list(features)
    assert all(isinstance(f, Feature) for f in features.values())


def test_enabled_matches_this_installation():
    features = Features()
    assert features.is_enabled('cuda') == (mx.num_gpus() > 0)
    assert features.is_enabled('PROFILER') and features.is_enabled('INT64_TENSOR_SIZE')
    for name in ('TENSORRT', 'MKLDNN', 'CAFFE', 'TVM_OP'):
        assert not features.is_enabled(name)
    for name, module in (('DIST_KVSTORE', 'mpi4py'), ('MPI', 'mpi4py'), ('ONNX', 'onnx'),
                         ('OPENCV', 'cv2'), ('GRAPHVIZ', 'graphviz'),
                         ('TENSORBOARD', 'tensorboardX')):
        assert features.is_enabled(name) == (importlib.util.find_spec(module) is not None), name
    blas = [n for n in ('BLAS_OPEN', 'BLAS_MKL', 'BLAS_ATLAS', 'BLAS_APPLE')
            if features.is_enabled(n)]
    assert len(blas) <= 1
    assert features.is_enabled('SSE') == features.is_enabled('CPU_SSE')


def test_repr_and_unknown_feature():
    assert repr(Feature('CUDA', True)) == '\u2714 CUDA'
    assert repr(Feature('CUDA', False)) == '\u2716 CUDA'
    features = Features()
    assert repr(features) == str(list(features.values()))
    with pytest.raises(RuntimeError, match="Feature 'NOPE' is unknown, known features are"):
        features.is_enabled('nope')
