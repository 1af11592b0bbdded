"""``mx.io``: data iterators (DataDesc, DataBatch, DataIter, NDArrayIter, CSVIter, ResizeIter,
PrefetchingIter) with MXNet 1.9.1's names and semantics."""
from .base import DataDesc, DataBatch, DataIter  # noqa: F401
from .ndarray_iter import NDArrayIter  # noqa: F401
from .wrappers import ResizeIter, PrefetchingIter  # noqa: F401
from .csv_iter import CSVIter  # noqa: F401
from .mnist_iter import MNISTIter  # noqa: F401
from .libsvm_iter import LibSVMIter  # noqa: F401
from .image_record_iter import ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter  # noqa: F401,E501
from .image_det_record_iter import ImageDetRecordIter  # noqa: F401
from . import io, utils  # noqa: F401
from .utils import _init_data, _getdata_by_idx, _has_instance  # noqa: F401

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter',
           'CSVIter', 'ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
           'ImageDetRecordIter', 'MNISTIter', 'LibSVMIter']
