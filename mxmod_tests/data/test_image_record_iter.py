"""ImageRecordIter against MXNet 1.9.1's batches (fixtures), and its parts, errors and seeds."""
import os
import shutil

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.data import data_cases

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
REC = os.path.join(FIX, 'images.rec')


def _epoch(it):
    return [b for b in it]


@pytest.mark.parametrize('name', sorted(data_cases.ITER_CASES))
def test_batches_equal_mxnet(name):
    expected = np.load(os.path.join(FIX, 'mxnet_batches.npz'))
    it = mx.io.ImageRecordIter(path_imgrec=REC, preprocess_threads=2,
                               **data_cases.ITER_CASES[name])
    data = np.concatenate([b.data[0].asnumpy() for b in it])
    assert data.dtype == expected[name].dtype
    np.testing.assert_array_equal(data, expected[name])
    it.reset()      # after a wrapped last batch the next epoch goes on after the wrap
    labels = np.concatenate([b.label[0].asnumpy() for b in it])
    np.testing.assert_array_equal(labels, expected[name + '_label'])


def test_descriptions_and_pad():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=4)
    assert it.provide_data[0].shape == (4, 3, 16, 16) and it.provide_data[0].name == 'data'
    assert it.provide_label[0].shape == (4,) and it.provide_label[0].name == 'softmax_label'
    assert [b.pad for b in _epoch(it)] == [0, 0, 2]
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=4,
                               round_batch=False)
    batches = _epoch(it)
    assert batches[-1].pad == 2 and len(batches) == 3


@pytest.mark.parametrize('idx', [False, True])
def test_parts_cover_every_record_once(idx):
    seen = []
    for part in range(3):
        it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                                   num_parts=3, part_index=part, label_width=1,
                                   path_imgidx=REC[:-4] + '.idx' if idx else None,
                                   path_imglist=None)
        seen += [float(b.label[0].asnumpy()[0]) for b in it]
    assert sorted(seen) == sorted(float(i % 3) for i in range(10))


def test_shuffle_and_seed_aug_are_reproducible():
    kw = dict(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=5, shuffle=True, seed=4,
              rand_crop=True, rand_mirror=True, max_rotate_angle=10, random_h=10,
              brightness=0.2, pca_noise=0.1, seed_aug=3, preprocess_threads=3)
    first = [b.data[0].asnumpy() for b in mx.io.ImageRecordIter(**kw)]
    again = [b.data[0].asnumpy() for b in mx.io.ImageRecordIter(**kw)]
    other = [b.data[0].asnumpy() for b in mx.io.ImageRecordIter(**dict(kw, seed_aug=4))]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_augmentation_without_seed_aug_is_the_same_on_every_run():
    """Without seed_aug a program still draws the same augmentations on every run (MXNet seeds
    its augmenters with fixed per-thread seeds): two processes give the same batches; two
    iterators of one process differ."""
    import subprocess
    import sys
    code = ("import hashlib, mxmod as mx\n"
            "kw = dict(path_imgrec=%r, data_shape=(3, 16, 16), batch_size=5, rand_crop=True,\n"
            "          rand_mirror=True, max_rotate_angle=10, brightness=0.2, preprocess_threads=3)\n"
            "digest = lambda: hashlib.sha1(b''.join(b.data[0].asnumpy().tobytes()\n"
            "                              for b in mx.io.ImageRecordIter(**kw))).hexdigest()\n"
            "print(digest(), digest())\n" % REC)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mx.__file__)))
    runs = [subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                           check=True, timeout=300).stdout.split() for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1]


def test_mean_image_is_computed_saved_and_loaded(tmp_path):
    mean_path = str(tmp_path / 'mean.bin')
    kw = dict(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=5, mean_img=mean_path)
    raw = np.concatenate([b.data[0].asnumpy() for b in mx.io.ImageRecordIter(
        path_imgrec=REC, data_shape=(3, 16, 16), batch_size=5)])
    out = np.concatenate([b.data[0].asnumpy() for b in mx.io.ImageRecordIter(**kw)])
    assert os.path.exists(mean_path)
    mean = mx.nd.load(mean_path)['mean_img'].asnumpy()
    np.testing.assert_allclose(mean, raw.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(out, raw - mean, atol=1e-4)
    again = np.concatenate([b.data[0].asnumpy() for b in mx.io.ImageRecordIter(**kw)])
    np.testing.assert_array_equal(again, out)


def test_worker_error_reaches_caller(tmp_path):
    rec = str(tmp_path / 'bad.rec')
    shutil.copy(REC, rec)
    reader = mx.recordio.MXRecordIO(REC, 'r')
    writer = mx.recordio.MXRecordIO(rec, 'w')
    for i in range(10):
        payload = reader.read()
        if i == 6:
            payload = payload[:40] + b'\0' * 16
        writer.write(payload)
    writer.close()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=4)
    with pytest.raises(mx.MXNetError, match=r'record 6 .*bad\.rec'):
        _epoch(it)
    it.close()


def test_truncated_file_and_bad_arguments(tmp_path):
    rec = str(tmp_path / 'cut.rec')
    with open(REC, 'rb') as src, open(rec, 'wb') as dst:
        dst.write(src.read()[:-100])
    with pytest.raises(mx.MXNetError, match='cut.rec'):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=4)
    with pytest.raises(mx.MXNetError, match='missing.rec'):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / 'missing.rec'),
                              data_shape=(3, 16, 16), batch_size=4)
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=4,
                               label_width=2)
    with pytest.raises(mx.MXNetError, match='label_width'):
        it.next()
    with pytest.raises(mx.MXNetError, match='data_shape'):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(5, 16, 16), batch_size=4)


def test_uint8_iter_and_labels_from_list(tmp_path):
    lst = str(tmp_path / 'labels.lst')
    with open(lst, 'w') as handle:
        for i in range(10):
            handle.write('%d\t%d\t%d\tx.jpg\n' % (i, i * 10, i + 1))
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=5,
                                    path_imglist=lst, label_width=2)
    batch = it.next()
    assert batch.data[0].dtype == np.uint8 and batch.label[0].shape == (5, 2)
    np.testing.assert_array_equal(batch.label[0].asnumpy()[:, 0], [0, 10, 20, 30, 40])


def test_close_cancels_pending_work():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=2,
                               preprocess_threads=2, prefetch_buffer=4)
    it.next()
    pending = [fut for _, _, _, futures in it._pending for fut in futures]
    it.close()
    assert pending and all(fut.done() for fut in pending)
