"""MNISTIter on small idx files, the data set helpers' cache lookup, and im2rec."""
import os
import struct
import zipfile

import numpy as np
import pytest

import mxmod as mx
from mxmod.image.codec import require_cv2
from mxmod.tools import im2rec


def _idx(array):
    return struct.pack('>BBBB', 0, 0, 8, array.ndim) + \
        struct.pack('>%dI' % array.ndim, *array.shape) + array.astype(np.uint8).tobytes()


@pytest.fixture(name='mnist_files')
def _mnist_files(tmp_path):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, (25, 28, 28))
    labels = rng.randint(0, 10, 25)
    paths = (str(tmp_path / 'img-idx3-ubyte'), str(tmp_path / 'lbl-idx1-ubyte'))
    for path, arr in zip(paths, (images, labels)):
        with open(path, 'wb') as handle:
            handle.write(_idx(arr))
    return paths, images, labels


def test_mnist_iter(mnist_files):
    (img, lbl), images, labels = mnist_files
    it = mx.io.MNISTIter(image=img, label=lbl, batch_size=10, shuffle=False, flat=True)
    batches = [b for b in it]
    assert len(batches) == 2 and batches[0].data[0].shape == (10, 784)
    np.testing.assert_allclose(batches[1].data[0].asnumpy(),
                               images[10:20].reshape(10, -1) / 256.0, rtol=1e-6)
    np.testing.assert_array_equal(batches[0].label[0].asnumpy(), labels[:10])
    parts = [mx.io.MNISTIter(image=img, label=lbl, batch_size=1, shuffle=True, num_parts=2,
                             part_index=p) for p in range(2)]
    seen = sorted(float(b.label[0].asnumpy()[0]) for it in parts for b in it)
    assert seen == sorted(labels.astype(float))
    assert mx.io.MNISTIter(image=img, label=lbl, batch_size=5).provide_data[0].shape == \
        (5, 1, 28, 28)


def test_get_mnist_ubyte_from_cache(tmp_path, monkeypatch, mnist_files):
    (img, lbl), _, _ = mnist_files
    cache = tmp_path / 'home'
    cache.mkdir()
    with zipfile.ZipFile(str(cache / 'mnist.zip'), 'w') as archive:
        for split in ('train', 't10k'):
            archive.write(img, '%s-images-idx3-ubyte' % split)
            archive.write(lbl, '%s-labels-idx1-ubyte' % split)
    work = tmp_path / 'work'
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv('MXNET_HOME', str(cache))
    train, val = mx.test_utils.get_mnist_iterator(5, (1, 28, 28))
    assert len([b for b in train]) == 5 and val.provide_data[0].shape == (5, 1, 28, 28)


def test_download_without_network_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv('MXNET_HOME', str(tmp_path / 'empty'))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mx.MXNetError, match='place the file nothing.zip in .*empty'):
        mx.test_utils.download('http://localhost:9/nothing.zip', retries=0)


def test_im2rec_list_and_pack(tmp_path):
    cv2 = require_cv2()
    for cls in ('a', 'b'):
        os.makedirs(str(tmp_path / 'root' / cls))
        for i in range(3):
            img = np.full((20 + i, 30, 3), 40 * i + (100 if cls == 'b' else 0), np.uint8)
            cv2.imwrite(str(tmp_path / 'root' / cls / ('%d.png' % i)), img)
    prefix, root = str(tmp_path / 'data'), str(tmp_path / 'root')
    im2rec.main(['--list', '--recursive', prefix, root])
    im2rec.main(['--resize', '16', '--encoding', '.png', '--num-thread', '2', prefix, root])
    items = list(im2rec.read_list(prefix + '.lst'))
    reader = mx.recordio.MXIndexedRecordIO(prefix + '.idx', prefix + '.rec', 'r')
    assert sorted(reader.keys) == list(range(6))
    for index, path, label in items:
        header, img = mx.recordio.unpack_img(reader.read_idx(index))
        assert header.label == label == (1.0 if path.startswith('b') else 0.0)
        assert min(img.shape[:2]) == 16
