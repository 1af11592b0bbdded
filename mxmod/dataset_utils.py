"""Data set helpers of ``mx.test_utils``: ``download``, ``get_mnist``, ``get_mnist_ubyte``,
``get_mnist_iterator``, ``get_cifar10``, ``get_zip_data``, ``get_bz2_data``.

``download`` first looks for the file in MXNet's cache directory (``$MXNET_HOME``, default
``~/.mxnet``, or its ``datasets/`` folder) and copies it from there; only then does it fetch the
URL (with ``requests``). Without network and without a cached copy it raises an MXNetError that
names the file to place in the cache directory."""
import bz2
import gzip
import logging
import os
import shutil
import struct
import zipfile

import numpy as np

from .base import MXNetError

__all__ = ['data_home', 'download', 'get_mnist', 'get_mnist_pkl', 'get_mnist_ubyte',
           'get_cifar10', 'get_mnist_iterator', 'get_zip_data', 'get_bz2_data']

_DATA_URL = 'http://data.mxnet.io/'


def data_home():
    """MXNet's cache directory: ``$MXNET_HOME`` or ``~/.mxnet``."""
    return os.path.expanduser(os.environ.get('MXNET_HOME', os.path.join('~', '.mxnet')))


def _cached(name):
    for folder in (data_home(), os.path.join(data_home(), 'datasets')):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def _fetch(url, fname, retries):
    try:
        import requests  # pylint: disable=import-outside-toplevel
    except ImportError:
        requests = None
    error = 'the requests package is not installed'
    for _ in range(retries + 1 if requests is not None else 0):
        try:
            reply = requests.get(url, stream=True, timeout=60)
            if reply.status_code != 200:
                raise IOError('HTTP status %d' % reply.status_code)
            with open(fname + '.part', 'wb') as out:
                for chunk in reply.iter_content(chunk_size=1 << 16):
                    out.write(chunk)
            os.replace(fname + '.part', fname)
            return
        except Exception as err:  # pylint: disable=broad-except
            error = '%s: %s' % (type(err).__name__, err)
    raise MXNetError('cannot download %s (%s). Without network, place the file %s in %s (the '
                     'cache directory: $MXNET_HOME, default ~/.mxnet) or at %s'
                     % (url, error, os.path.basename(fname), data_home(),
                        os.path.abspath(fname)))


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Fetch ``url`` into ``fname`` (default: the URL's last part, under ``dirname``).

    An existing file is kept unless ``overwrite``; a copy in the cache directory is used before
    the network.

    Returns
    -------
    str
        The file name.
    """
    if retries < 0:
        raise ValueError('Number of retries should be at least 0, got %d' % retries)
    if fname is None:
        fname = url.split('/')[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info('%s exists, skipping download', fname)
        return fname
    cached = _cached(url.split('/')[-1])
    if cached and os.path.abspath(cached) != os.path.abspath(fname):
        shutil.copyfile(cached, fname)
        logging.info('copied %s from the cache %s', fname, cached)
        return fname
    _fetch(url, fname, retries)
    logging.info('downloaded %s into %s successfully', url, fname)
    return fname


def _read_mnist(label_url, image_url):
    with gzip.open(download(label_url)) as flbl:
        struct.unpack('>II', flbl.read(8))
        label = np.frombuffer(flbl.read(), dtype=np.int8)
    with gzip.open(download(image_url), 'rb') as fimg:
        _, _, rows, cols = struct.unpack('>IIII', fimg.read(16))
        image = np.frombuffer(fimg.read(), dtype=np.uint8).reshape(len(label), rows, cols)
    return label, image.reshape(image.shape[0], 1, 28, 28).astype(np.float32) / 255


def get_mnist():
    """MNIST as a dict of numpy arrays: train_data (60000, 1, 28, 28) float32 in [0, 1],
    train_label int8, test_data, test_label (the .gz files fetched into the current directory).
    """
    path = _DATA_URL + 'data/mnist/'
    train_lbl, train_img = _read_mnist(path + 'train-labels-idx1-ubyte.gz',
                                       path + 'train-images-idx3-ubyte.gz')
    test_lbl, test_img = _read_mnist(path + 't10k-labels-idx1-ubyte.gz',
                                     path + 't10k-images-idx3-ubyte.gz')
    return {'train_data': train_img, 'train_label': train_lbl,
            'test_data': test_img, 'test_label': test_lbl}


def get_mnist_pkl():
    """Fetch mnist.pkl.gz into ./data."""
    os.makedirs('data', exist_ok=True)
    if not os.path.exists('data/mnist.pkl.gz'):
        download('http://deeplearning.net/data/mnist/mnist.pkl.gz', dirname='data')


def _get_zip(url, wanted):
    os.makedirs('data', exist_ok=True)
    if not all(os.path.exists(os.path.join('data', name)) for name in wanted):
        with zipfile.ZipFile(download(url, dirname='data')) as archive:
            archive.extractall('data')


def get_mnist_ubyte():
    """Fetch mnist.zip and extract the four idx-ubyte files into ./data."""
    _get_zip(_DATA_URL + 'mxnet/data/mnist.zip',
             ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
              't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'])


def get_cifar10():
    """Fetch cifar10.zip and extract it into ./data/cifar (train/test .rec and .lst)."""
    _get_zip(_DATA_URL + 'mxnet/data/cifar10.zip',
             ['cifar/train.rec', 'cifar/test.rec', 'cifar/train.lst', 'cifar/test.lst'])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) MNISTIter over ./data (fetched with get_mnist_ubyte); flat unless
    ``input_shape`` has 3 dimensions."""
    from .io import MNISTIter  # pylint: disable=import-outside-toplevel
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = MNISTIter(image='data/train-images-idx3-ubyte', label='data/train-labels-idx1-ubyte',
                      input_shape=input_shape, batch_size=batch_size, shuffle=True, flat=flat,
                      num_parts=num_parts, part_index=part_index)
    val = MNISTIter(image='data/t10k-images-idx3-ubyte', label='data/t10k-labels-idx1-ubyte',
                    input_shape=input_shape, batch_size=batch_size, flat=flat,
                    num_parts=num_parts, part_index=part_index)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Fetch a zip file into ``data_dir`` and extract it there (once)."""
    data_origin_name = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(data_origin_name):
        download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(data_origin_name) as archive:
            archive.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Fetch a .bz2 file into ``data_dir`` and decompress it to ``data_name`` (once)."""
    data_name = os.path.join(data_dir, data_name)
    data_origin_name = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(data_name):
        download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
        with bz2.BZ2File(data_origin_name, 'rb') as source, open(data_name, 'wb') as out:
            shutil.copyfileobj(source, out)
        os.remove(data_origin_name)
