"""The data-iterator protocol: DataDesc (what an input looks like), DataBatch (one batch) and
DataIter (the base class every iterator derives from)."""
from collections import namedtuple

from ..base import mx_real_t
from ..profiler.hooks import traced

__all__ = ['DataDesc', 'DataBatch', 'DataIter']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """Name, shape, dtype and layout of one data or label input.

    A ``DataDesc`` is a ``(name, shape)`` named tuple, so it unpacks and compares like
    ``('data', (32, 10))``; ``dtype`` and ``layout`` are extra attributes that equality ignores.

    Parameters
    ----------
    name : str
        Input name.
    shape : tuple of int
        Input shape, batch axis included.
    dtype : numpy dtype, optional
        Element type (default float32).
    layout : str, optional
        Meaning of each axis, e.g. ``'NCHW'`` or ``'NTC'``; ``N`` marks the batch axis.
    """

    def __new__(cls, name, shape, dtype=mx_real_t, layout='NCHW'):
        desc = super(DataDesc, cls).__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return 'DataDesc[%s,%s,%s,%s]' % (self.name, self.shape, self.dtype, self.layout)

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """Return the batch axis of ``layout`` (the position of ``'N'``).

        Parameters
        ----------
        layout : str or None
            E.g. ``'NCHW'``; None means axis 0.

        Returns
        -------
        int
            The batch axis, or -1 when the layout has no ``'N'`` (the whole array is copied to
            every device in data parallelism).
        """
        if layout is None:
            return 0
        return layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """Build a list of DataDesc from ``(name, shape)`` pairs and ``(name, dtype)`` pairs.

        Parameters
        ----------
        shapes : list of (str, tuple)
            Names and shapes.
        types : list of (str, dtype) or None
            Names and dtypes; None gives the default dtype.

        Returns
        -------
        list of DataDesc
        """
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        type_of = dict(types)
        return [DataDesc(name, shape, type_of[name]) for name, shape in shapes]


class DataBatch(object):
    """One batch from a data iterator.

    Parameters
    ----------
    data : list of NDArray
        The input arrays, ``batch_size`` examples each (along the layout's batch axis).
    label : list of NDArray, optional
        The label arrays.
    pad : int, optional
        How many examples at the end of the batch are padding (to be ignored in prediction).
    index : numpy.ndarray, optional
        The example indices in the batch.
    bucket_key : int or tuple, optional
        The bucket this batch belongs to (BucketingModule).
    provide_data : list of DataDesc, optional
        Description of ``data``; the i-th entry describes ``data[i]``.
    provide_label : list of DataDesc, optional
        Description of ``label``.
    """

    def __init__(self, data, label=None, pad=None, index=None,
                 bucket_key=None, provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError('DataBatch data must be a list of NDArrays, got %s'
                            % type(data).__name__)
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError('DataBatch label must be a list of NDArrays, got %s'
                            % type(label).__name__)
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [arr.shape for arr in self.data]
        label_shapes = [arr.shape for arr in self.label] if self.label else None
        return '{}: data shapes: {} label shapes: {}'.format(
            self.__class__.__name__, data_shapes, label_shapes)


class DataIter(object):
    """Base class of data iterators: each ``next()`` returns a DataBatch until StopIteration.

    Subclasses implement ``iter_next`` and ``getdata``/``getlabel``/``getpad``/``getindex``
    (or override ``next`` directly), ``reset``, and set ``provide_data``/``provide_label``.
    The base implementations describe an empty iterator.

    Parameters
    ----------
    batch_size : int, optional
        Number of examples per batch.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __init_subclass__(cls, **kwargs):
        """Every iterator's batches appear in the profiler's trace as ``<Class>.next``."""
        super().__init_subclass__(**kwargs)
        if 'next' in cls.__dict__:
            cls.next = traced('Data', outermost=True)(cls.__dict__['next'])

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the beginning of the data."""

    @traced('Data', outermost=True)
    def next(self):
        """Return the next batch.

        Returns
        -------
        DataBatch

        Raises
        ------
        StopIteration
            At the end of the data.
        """
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; return whether there was one (False here)."""
        return False

    def getdata(self):
        """Return the data (list of NDArray) of the current batch."""
        return None

    def getlabel(self):
        """Return the labels (list of NDArray) of the current batch."""
        return None

    def getindex(self):
        """Return the example indices of the current batch (None when unknown)."""
        return None

    def getpad(self):
        """Return the number of padding examples at the end of the current batch."""
        return None

    @property
    def provide_data(self):
        """list of DataDesc: name, shape, dtype and layout of each data input."""
        try:
            return self.__dict__['_provide_data']
        except KeyError:
            raise AttributeError('%s does not set provide_data' % type(self).__name__) from None

    @provide_data.setter
    def provide_data(self, value):
        self.__dict__['_provide_data'] = value

    @property
    def provide_label(self):
        """list of DataDesc: name, shape, dtype and layout of each label input."""
        try:
            return self.__dict__['_provide_label']
        except KeyError:
            raise AttributeError('%s does not set provide_label' % type(self).__name__) from None

    @provide_label.setter
    def provide_label(self, value):
        self.__dict__['_provide_label'] = value
