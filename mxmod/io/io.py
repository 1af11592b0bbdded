"""``mx.io.io``: the module path MXNet's iterators live under, kept for imports such as
``from mxnet.io.io import DataDesc``."""
from .base import DataDesc, DataBatch, DataIter  # noqa: F401
from .ndarray_iter import NDArrayIter  # noqa: F401
from .wrappers import ResizeIter, PrefetchingIter  # noqa: F401
from .csv_iter import CSVIter  # noqa: F401

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter',
           'CSVIter']
