"""mx.image.detection (detection augmenters, ImageDetIter) and mx.io.ImageDetRecordIter: against
numpy references of the box arithmetic, and against MXNet 1.9.1's outputs recorded in
fixtures/mxnet_det.npz (make_det_fixtures.py) where the random draws can be fixed."""
import json
import os
import random
import shutil

import numpy as np
import pytest

import mxmod as mx
from mxmod.image.codec import require_cv2

from . import det_cases

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'fixtures')
REC = os.path.join(FIX, 'det_images.rec')


@pytest.fixture(scope='module', name='ref')
def _ref():
    return np.load(os.path.join(FIX, 'mxnet_det.npz'))


def _seed(value):
    random.seed(value)
    np.random.seed(value)


def _epoch(it):
    batches = list(it)
    return (np.concatenate([b.data[0].asnumpy() for b in batches]),
            np.concatenate([b.label[0].asnumpy() for b in batches]),
            np.array([b.pad for b in batches]))


def _objects(i):
    """Parsed objects of det_cases image i (header dropped, empty boxes dropped)."""
    raw = det_cases.det_label(i)
    obj = raw[int(raw[0]):].reshape(-1, det_cases.OBJ_WIDTH)
    return obj[(obj[:, 3] > obj[:, 1]) & (obj[:, 4] > obj[:, 2])]


def _areas(boxes):
    return np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])


# ---------------------------------------------------------------- exports

def test_exported_where_mxnet_exports_them():
    assert mx.image.det is mx.image.detection
    for name in ('DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
                 'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
                 'CreateDetAugmenter', 'ImageDetIter'):
        assert getattr(mx.image, name) is getattr(mx.image.detection, name)
    assert issubclass(mx.image.ImageDetIter, mx.image.ImageIter)
    assert mx.img.ImageDetIter is mx.image.ImageDetIter
    assert 'ImageDetRecordIter' in mx.io.__all__
    assert issubclass(mx.io.ImageDetRecordIter, mx.io.DataIter)


# ---------------------------------------------------------------- augmenters vs numpy

def test_horizontal_flip_boxes_and_pixels():
    img, label = det_cases.aug_inputs()
    out, lab = mx.image.DetHorizontalFlipAug(1.0)(mx.nd.array(img, dtype='uint8'), label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img[:, ::-1])
    expect = label.copy()
    expect[:, 1], expect[:, 3] = 1 - label[:, 3], 1 - label[:, 1]
    np.testing.assert_allclose(lab, expect, rtol=0, atol=1e-7)
    out, lab = mx.image.DetHorizontalFlipAug(0.0)(mx.nd.array(img, dtype='uint8'), label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img)
    np.testing.assert_array_equal(lab, label)


@pytest.mark.parametrize('seed', range(6))
def test_random_crop_matches_numpy_reference(seed):
    img, label = det_cases.aug_inputs()
    height, width = img.shape[:2]
    aug = mx.image.DetRandomCropAug(min_object_covered=0.3, aspect_ratio_range=(0.5, 2.0),
                                    area_range=(0.1, 0.9), min_eject_coverage=0.4)
    _seed(seed)
    proposal = aug._random_crop_proposal(label, height, width)
    assert proposal, 'no crop found'
    x0, y0, w, h = proposal[:4]
    _seed(seed)
    out, lab = aug(mx.nd.array(img, dtype='uint8'), label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img[y0:y0 + h, x0:x0 + w])
    # the crop's own constraints
    assert 0.1 * height * width <= w * h <= 0.9 * height * width
    assert 0 <= x0 <= width - w and 0 <= y0 <= height - h
    win = np.array([x0 / width, y0 / height, (x0 + w) / width, (y0 + h) / height])
    boxes = label[:, 1:5].astype(np.float64)
    inter = np.hstack([np.maximum(boxes[:, :2], win[:2]), np.minimum(boxes[:, 2:], win[2:])])
    kept = _areas(inter) / _areas(boxes)
    assert kept[kept > 0].min() > 0.3
    # the boxes in the crop's frame, clipped; objects keeping <= 0.4 of their area dropped
    moved = (boxes - np.tile(win[:2], 2)) / np.tile(win[2:] - win[:2], 2)
    moved = np.clip(moved, 0, 1)
    cover = _areas(moved) * (win[2] - win[0]) * (win[3] - win[1]) / _areas(boxes)
    keep = (moved[:, 2] > moved[:, 0]) & (moved[:, 3] > moved[:, 1]) & (cover > 0.4)
    np.testing.assert_allclose(lab[:, 1:5], moved[keep], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(lab[:, [0, 5]], label[keep][:, [0, 5]])


@pytest.mark.parametrize('seed', range(4))
def test_random_pad_matches_numpy_reference(seed):
    img, label = det_cases.aug_inputs()
    height, width = img.shape[:2]
    aug = mx.image.DetRandomPadAug(aspect_ratio_range=(0.8, 1.6), area_range=(1.5, 3.0),
                                   pad_val=(5, 6, 7))
    _seed(seed)
    x0, y0, w, h, _ = aug._random_pad_proposal(label, height, width)
    _seed(seed)
    out, lab = aug(mx.nd.array(img, dtype='uint8'), label.copy())
    canvas = np.empty((h, w, 3), np.uint8)
    canvas[...] = (5, 6, 7)
    canvas[y0:y0 + height, x0:x0 + width] = img
    np.testing.assert_array_equal(out.asnumpy(), canvas)
    assert h - height >= 2 and w - width >= 2
    boxes = label[:, 1:5].astype(np.float64)
    expect = (boxes * np.tile([width, height], 2) + np.tile([x0, y0], 2)) / np.tile([w, h], 2)
    np.testing.assert_allclose(lab[:, 1:5], expect, rtol=1e-6)
    # the padded boxes cover the same pixels as before
    np.testing.assert_allclose(lab[:, 1:5] * np.tile([w, h], 2),
                               boxes * np.tile([width, height], 2) + np.tile([x0, y0], 2),
                               rtol=1e-5)


def test_random_select_and_borrow():
    img, label = det_cases.aug_inputs()
    src = mx.nd.array(img, dtype='uint8')
    skip = mx.image.DetRandomSelectAug([mx.image.DetHorizontalFlipAug(1.0)], skip_prob=1)
    out, lab = skip(src, label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img)
    always = mx.image.DetRandomSelectAug(mx.image.DetHorizontalFlipAug(1.0))
    out, lab = always(src, label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img[:, ::-1])
    empty = mx.image.DetRandomSelectAug([], skip_prob=0)
    assert empty.skip_prob == 1 and empty(src, label)[0] is src
    borrow = mx.image.DetBorrowAug(mx.image.ForceResizeAug((20, 10), interp=1))
    out, lab = borrow(src, label.copy())
    cv2 = require_cv2()
    np.testing.assert_array_equal(out.asnumpy(), cv2.resize(img, (20, 10),
                                                            interpolation=cv2.INTER_LINEAR))
    np.testing.assert_array_equal(lab, label)
    assert borrow.dumps() == ['detborrowaug', '["forceresizeaug", {"size": [20, 10], '
                                              '"interp": 1}]']


def test_bad_arguments():
    with pytest.raises(TypeError, match='Augmenter'):
        mx.image.DetBorrowAug(mx.image.DetHorizontalFlipAug(0.5))
    with pytest.raises(ValueError, match='DetAugmenter'):
        mx.image.DetRandomSelectAug([mx.image.HorizontalFlipAug(0.5)])
    # MXNet fails these with a TypeError (its warning call is malformed); a clear message here
    with pytest.raises(TypeError, match='area_range'):
        mx.image.DetRandomCropAug(area_range=(0.5, 0.1))
    with pytest.raises(ValueError, match='aspect_ratio_range'):
        mx.image.DetRandomCropAug(aspect_ratio_range=(0, 1))
    with pytest.raises(TypeError, match='area_range'):
        mx.image.DetRandomPadAug(area_range=(0.5, 0.9))
    with pytest.raises(TypeError, match='area_range'):
        mx.image.CreateDetAugmenter((3, 10, 10), rand_pad=0.5, area_range=(0.1, 1.0))
    with pytest.raises(AssertionError, match='aspect_ratio_range'):
        mx.image.DetRandomCropAug(aspect_ratio_range='wide')
    with pytest.raises(AssertionError, match='mean'):
        mx.image.CreateDetAugmenter((3, 10, 10), mean=[1, 2, 3])
    with pytest.raises(AssertionError, match='same length'):
        mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.2],
                                              area_range=[(0.1, 1), (0.2, 1), (0.3, 1)])


# ---------------------------------------------------------------- augmenters vs MXNet

@pytest.mark.parametrize('name', sorted(det_cases.AUG_CASES))
def test_augmenters_match_mxnet(ref, name):
    ctor, kwargs, seed = det_cases.AUG_CASES[name]
    img, label = det_cases.aug_inputs()
    aug = getattr(mx.image, ctor)(**kwargs)
    _seed(seed)
    for k in range(3):
        res, lab = aug(mx.nd.array(img, dtype='uint8'), label.copy())
        np.testing.assert_array_equal(res.asnumpy(), ref['aug_%s_%d_img' % (name, k)])
        np.testing.assert_allclose(np.asarray(lab), ref['aug_%s_%d_label' % (name, k)],
                                   rtol=1e-6, atol=1e-7)
    assert str(aug.dumps()) == str(ref['aug_%s_dumps' % name])


@pytest.mark.parametrize('name', sorted(det_cases.CREATE_CASES))
def test_create_det_augmenter_matches_mxnet(ref, name):
    augs = mx.image.CreateDetAugmenter(**det_cases.CREATE_CASES[name])
    assert json.dumps([a.dumps() for a in augs]) == str(ref['create_%s_dumps' % name])


# ---------------------------------------------------------------- ImageDetIter

@pytest.fixture(scope='module', name='items')
def _items(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('det_images'))
    return det_cases.extract_images(REC, root, mx.recordio), root


def _sources(items):
    listed, root = items
    return {'rec': dict(path_imgrec=REC, path_imgidx=REC[:-4] + '.idx'),
            'list': dict(imglist=[lab.tolist() + [name] for lab, name in listed],
                         path_root=root)}


@pytest.mark.parametrize('src', ['rec', 'list'])
@pytest.mark.parametrize('name', sorted(det_cases.ITER_CASES))
def test_image_det_iter_matches_mxnet(ref, items, src, name):
    _seed(1)
    it = mx.image.ImageDetIter(**dict(det_cases.ITER_CASES[name], **_sources(items)[src]))
    key = 'iter_%s_%s' % (src, name)
    assert it.label_shape == tuple(ref[key + '_label_shape'])
    assert tuple(it.provide_label[0][1]) == tuple(ref[key + '_provide_label'])
    epochs = [_epoch(it)]
    it.reset()
    epochs.append(_epoch(it))
    for k, (data, label, pad) in enumerate(epochs):
        np.testing.assert_array_equal(pad, ref['%s_%d_pad' % (key, k)])
        np.testing.assert_allclose(label, ref['%s_%d_label' % (key, k)], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(epochs[0][0], ref['iter_rec_%s_0_data' % name], rtol=1e-5,
                               atol=1e-4)


def test_image_det_iter_labels_against_numpy(items):
    it = mx.image.ImageDetIter(3, (3, 16, 16), inter_method=1, **_sources(items)['list'])
    counts = [len(_objects(i)) for i in range(det_cases.DET_COUNT)]
    assert it.label_shape == (max(counts), det_cases.OBJ_WIDTH)
    assert it.provide_label[0].name == 'label'
    assert tuple(it.provide_label[0].shape) == (3, max(counts), det_cases.OBJ_WIDTH)
    _, labels, pads = _epoch(it)
    assert list(pads) == [0, 0, 2]
    for i in range(det_cases.DET_COUNT):
        objects = _objects(i)
        np.testing.assert_allclose(labels[i, :len(objects)], objects, rtol=1e-6)
        assert (labels[i, len(objects):] == -1).all()
    # the padded slots of the last batch hold the first images again
    np.testing.assert_allclose(labels[7:9], labels[0:2])


def test_image_det_iter_from_list_file(items, tmp_path):
    listed, root = items
    lst = tmp_path / 'det.lst'
    with open(lst, 'w') as handle:
        for k, (lab, name) in enumerate(listed):
            handle.write('\t'.join([str(k)] + ['%g' % v for v in lab] + [name]) + '\n')
    from_file = mx.image.ImageDetIter(2, (3, 12, 12), path_imglist=str(lst), path_root=root,
                                      inter_method=1)
    from_list = mx.image.ImageDetIter(2, (3, 12, 12), inter_method=1, **_sources(items)['list'])
    a, b = _epoch(from_file), _epoch(from_list)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)


def test_parse_label_formats_and_errors():
    it = mx.image.ImageDetIter(1, (3, 8, 8), path_imgrec=REC, inter_method=1)
    raw = [4, 5, 9, 9, 1, 0.1, 0.1, 0.5, 0.5, 2, 0.6, 0.2, 0.3, 0.4, 3, 0.2, 0.3, 0.4, 0.9]
    np.testing.assert_allclose(it._parse_label(mx.nd.array(raw)),
                               [[1, 0.1, 0.1, 0.5, 0.5], [3, 0.2, 0.3, 0.4, 0.9]], rtol=1e-6)
    with pytest.raises(RuntimeError, match='invalid'):
        it._parse_label(np.array([2, 5, 1, 0.1, 0.1, 0.5]))
    with pytest.raises(RuntimeError, match='inconsistent'):
        it._parse_label(np.array([2, 5, 1, 0.1, 0.1, 0.5, 0.5, 7]))
    with pytest.raises(RuntimeError, match='no valid label'):
        it._parse_label(np.array([2, 5, 1, 0.5, 0.1, 0.4, 0.5]))
    with pytest.raises(RuntimeError, match='object width'):
        it._parse_label(np.array([2, 4, 1, 0.1, 0.1, 0.5, 0.5, 1, 0.2, 0.2]))


def test_reshape_check_and_sync_label_shape(items):
    src = _sources(items)['list']
    big = mx.image.ImageDetIter(2, (3, 12, 12), inter_method=1, **src)
    small_list = [lab.tolist() + [name] for lab, name in items[0][:2]]
    small = mx.image.ImageDetIter(2, (3, 12, 12), imglist=small_list, path_root=items[1],
                                  inter_method=1)
    assert small.label_shape == (2, 6) and big.label_shape == (4, 6)
    assert big.sync_label_shape(small, verbose=True) is small
    assert small.label_shape == (4, 6) and tuple(small.provide_label[0][1]) == (2, 4, 6)
    batch = small.next()
    assert batch.label[0].shape == (2, 4, 6)
    assert (batch.label[0].asnumpy()[0, 1:] == -1).all()
    with pytest.raises(ValueError, match='reduce label count'):
        small.reshape(label_shape=(3, 6))
    with pytest.raises(ValueError, match='object width'):
        small.reshape(label_shape=(5, 7))
    with pytest.raises(ValueError, match='length 2'):
        small.reshape(label_shape=(5,))
    small.reshape(data_shape=(3, 10, 14), label_shape=(6, 6))
    assert tuple(small.provide_data[0][1]) == (2, 3, 10, 14)
    assert small.data_shape == (3, 10, 14) and small.label_shape == (6, 6)
    small.reset()
    with pytest.raises(mx.MXNetError, match=r'\(3, 12, 12\).*\(3, 10, 14\)'):
        small.next()            # the augmenters still resize to 12x12
    small.auglist = mx.image.CreateDetAugmenter((3, 10, 14), inter_method=1)
    small.reset()
    batch = small.next()
    assert batch.data[0].shape == (2, 3, 10, 14) and batch.label[0].shape == (2, 6, 6)
    with pytest.raises(ValueError, match='3 channels'):
        small.reshape(data_shape=(1, 10, 10))
    with pytest.raises(AssertionError, match='ImageDetIter'):
        big.sync_label_shape(mx.image.ImageIter(1, (3, 8, 8), imglist=[[0, '0.png']],
                                                path_root=items[1]))


def test_last_batch_handles(items):
    src = _sources(items)['rec']
    counts = {}
    for handle in ('pad', 'discard', 'roll_over'):
        it = mx.image.ImageDetIter(3, (3, 8, 8), last_batch_handle=handle, inter_method=1,
                                   **src)
        counts[handle] = [b.pad for b in it]
        it.reset()
        counts[handle + '_2'] = [b.pad for b in it]
    assert counts['pad'] == [0, 0, 2] and counts['pad_2'] == [0, 0, 2]
    assert counts['discard'] == [0, 0] and counts['discard_2'] == [0, 0]
    # roll_over keeps the one image left and starts the next epoch with it; that batch reports
    # pad = batch_size - the images it had before it was filled up (as MXNet's does)
    assert counts['roll_over'] == [0, 0] and counts['roll_over_2'] == [2, 0]


def test_invalid_samples_are_skipped(tmp_path, items):
    listed, root = items
    bad = [[2, 6, 1, 0.5, 0.5, 0.5, 0.9, 0]]          # xmax == xmin: no valid object
    neg = [[2, 6, -1, 0.1, 0.1, 0.5, 0.9, 0]]         # class id < 0 after augmentation
    imglist = [listed[0][0].tolist() + [listed[0][1]], neg[0] + [listed[1][1]],
               listed[2][0].tolist() + [listed[2][1]]]
    it = mx.image.ImageDetIter(1, (3, 8, 8), imglist=imglist, path_root=root, inter_method=1)
    labels = [b.label[0].asnumpy()[0] for b in it]
    assert len(labels) == 2
    np.testing.assert_allclose(labels[1][:len(_objects(2))], _objects(2), rtol=1e-6)
    with pytest.raises(RuntimeError, match='no valid label'):
        mx.image.ImageDetIter(1, (3, 8, 8), imglist=[bad[0] + [listed[0][1]]], path_root=root)
    with pytest.raises(mx.MXNetError, match='no images'):
        mx.image.ImageDetIter(1, (3, 8, 8), imglist=[], path_root=root)


def test_draw_next_draws_the_boxes(items):
    listed, root = items
    imglist = [lab.tolist() + [name] for lab, name in listed[:2]]
    it = mx.image.ImageDetIter(1, (3, 40, 50), imglist=imglist, path_root=root, inter_method=1,
                               mean=True, std=True)
    images = list(it.draw_next(color=(255, 0, 0), thickness=1, mean=True, std=True,
                               id2labels={0: 'zero'}))
    assert len(images) == 2
    cv2 = require_cv2()
    for img, (lab, name) in zip(images, listed[:2]):
        assert img.shape == (40, 50, 3) and img.dtype == np.uint8
        raw = cv2.imread(os.path.join(root, name))          # BGR, as draw_next returns
        plain = cv2.resize(raw, (50, 40), interpolation=cv2.INTER_LINEAR)
        changed = np.any(np.abs(img.astype(int) - plain) > 2, axis=2)
        for obj in _objects(int(name[:-4])):
            x1, y1 = int(obj[1] * 50), int(obj[2] * 40)
            x2, y2 = int(obj[3] * 50), int(obj[4] * 40)
            np.testing.assert_array_equal(img[y1, x1], [0, 0, 255])     # red, in BGR
            np.testing.assert_array_equal(img[y2, x2], [0, 0, 255])
        assert changed.any()


# ---------------------------------------------------------------- ImageDetRecordIter

@pytest.mark.parametrize('name', sorted(det_cases.REC_CASES))
def test_image_det_record_iter_matches_mxnet(ref, name):
    cfg = det_cases.REC_CASES[name]
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, preprocess_threads=2, verbose=False, **cfg)
    assert tuple(it.provide_label[0].shape) == tuple(ref['rec_%s_provide_label' % name])
    data, label, pad = _epoch(it)
    np.testing.assert_array_equal(pad, ref['rec_%s_pad' % name])
    np.testing.assert_allclose(label, ref['rec_%s_label' % name], rtol=1e-6)
    expect = ref['rec_%s_data' % name]
    for k in range(len(data)):          # pixels outside the image (shrink/fit) are undefined
        rows, cols = int(label[k, 1]), int(label[k, 2])
        np.testing.assert_allclose(data[k, :, :rows, :cols], expect[k, :, :rows, :cols],
                                   rtol=1e-6, atol=1e-5)


def test_image_det_record_iter_label_layout():
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=7,
                                  label_pad_width=60, label_pad_value=-3, verbose=False,
                                  label_name='det_label')
    assert it.provide_label[0].name == 'det_label'
    assert tuple(it.provide_label[0].shape) == (7, 64)
    batch = it.next()
    label = batch.label[0].asnumpy()
    for i in range(det_cases.DET_COUNT):
        raw = det_cases.det_label(i)
        header = raw[:int(raw[0])]
        kept = np.concatenate([header, _objects(i).ravel()])
        np.testing.assert_array_equal(label[i, :4], [3, 16, 16, kept.size])
        np.testing.assert_allclose(label[i, 4:4 + kept.size], kept, rtol=1e-6)
        assert (label[i, 4 + kept.size:] == -3).all()
    # data: the RGB image resized to 16x16 (bilinear), CHW
    cv2 = require_cv2()
    for i in range(det_cases.DET_COUNT):
        expect = cv2.resize(det_cases.det_image(i), (16, 16), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(batch.data[0].asnumpy()[i], expect.transpose(2, 0, 1))


@pytest.mark.parametrize('mode', ['center', 'overlap'])
def test_image_det_record_iter_random_augmentation_keeps_boxes_valid(mode):
    it = mx.io.ImageDetRecordIter(
        path_imgrec=REC, data_shape=(3, 20, 20), batch_size=7, verbose=False, seed_aug=3,
        rand_crop_prob=1, num_crop_sampler=3, min_crop_scales=(0.3, 0.5, 0.7),
        max_crop_scales=1.0, min_crop_aspect_ratios=0.5, max_crop_aspect_ratios=2.0,
        min_crop_object_coverages=(0.0, 0.3, 0.5), max_crop_trials=30, crop_emit_mode=mode,
        rand_pad_prob=0.5, max_pad_scale=2.5, rand_mirror_prob=0.5, fill_value=0,
        random_hue_prob=0.5, max_random_hue=10, random_contrast_prob=0.5,
        max_random_contrast=0.3, random_illumination_prob=0.5, max_random_illumination=20)
    for _ in range(2):
        it.reset()
        label = it.next().label[0].asnumpy()
        for i in range(det_cases.DET_COUNT):
            raw = det_cases.det_label(i)
            hw = int(raw[0])
            size = int(label[i, 3])
            out = label[i, 4:4 + size]
            np.testing.assert_array_equal(out[:hw], raw[:hw])            # header kept
            objects = out[hw:].reshape(-1, det_cases.OBJ_WIDTH)
            assert 1 <= len(objects) <= len(_objects(i))
            boxes = objects[:, 1:5]
            assert (boxes >= 0).all() and (boxes <= 1).all()
            assert (boxes[:, 2] >= boxes[:, 0]).all() and (boxes[:, 3] >= boxes[:, 1]).all()
            assert set(objects[:, 0]) <= set(_objects(i)[:, 0])
            assert (label[i, 4 + size:] == -1).all()


def test_image_det_record_iter_pad_and_mirror_move_boxes():
    # mirror always: x -> 1 - x; then pad always (a scale drawn in [1, 3])
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=7,
                                  verbose=False, rand_mirror_prob=1.0)
    label = it.next().label[0].asnumpy()
    for i in range(det_cases.DET_COUNT):
        hw = int(det_cases.det_label(i)[0])
        objects = label[i, 4 + hw:4 + int(label[i, 3])].reshape(-1, det_cases.OBJ_WIDTH)
        expect = _objects(i).copy()
        expect[:, 1], expect[:, 3] = 1 - _objects(i)[:, 3], 1 - _objects(i)[:, 1]
        np.testing.assert_allclose(objects, expect, rtol=1e-6, atol=1e-7)
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=7,
                                  verbose=False, rand_pad_prob=1.0, max_pad_scale=3.0,
                                  resize_mode='shrink', fill_value=0, seed_aug=5)
    label = it.next().label[0].asnumpy()
    for i in range(det_cases.DET_COUNT):
        hw = int(det_cases.det_label(i)[0])
        objects = label[i, 4 + hw:4 + int(label[i, 3])].reshape(-1, det_cases.OBJ_WIDTH)
        before = _objects(i)
        # a pad shrinks every box by the same factor (1 when the draw fell under 1.05)
        scale_x = (before[:, 3] - before[:, 1]) / (objects[:, 3] - objects[:, 1])
        scale_y = (before[:, 4] - before[:, 2]) / (objects[:, 4] - objects[:, 2])
        np.testing.assert_allclose(scale_x, scale_x[0], rtol=1e-4)
        np.testing.assert_allclose(scale_y, scale_x[0], rtol=1e-4)
        assert 1 <= scale_x[0] <= 3.0 + 1e-6


def test_image_det_record_iter_errors(tmp_path):
    with pytest.raises(mx.MXNetError, match='label_pad_width: 10 smaller than estimated '
                                            'width: 26'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 label_pad_width=10, verbose=False)
    with pytest.raises(mx.MXNetError, match='max_crop_scales'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 min_crop_scales=0.5, max_crop_scales=0.5, verbose=False)
    with pytest.raises(mx.MXNetError, match='crop_samplers mismatch'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 num_crop_sampler=3, min_crop_scales=(0.1, 0.2), verbose=False)
    with pytest.raises(mx.MXNetError, match='resize_mode'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 resize_mode='stretch', verbose=False)
    with pytest.raises(mx.MXNetError, match='inter_method'):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 inter_method=7, verbose=False)
    # a classification .rec (one scalar label per record) has no detection labels
    cls_rec = str(tmp_path / 'cls.rec')
    shutil.copy(os.path.join(FIX, 'images.rec'), cls_rec)
    with pytest.raises(mx.MXNetError, match='Not enough label'):
        mx.io.ImageDetRecordIter(path_imgrec=cls_rec, data_shape=(3, 8, 8), batch_size=2,
                                 verbose=False)
    # a label too short for a detection label fails when the image is processed
    short = str(tmp_path / 'short.rec')
    writer = mx.recordio.MXRecordIO(short, 'w')
    cv2 = require_cv2()
    png = cv2.imencode('.png', det_cases.det_image(0))[1].tobytes()
    writer.write(mx.recordio.pack(mx.recordio.IRHeader(0, [2, 5, 1, 0.1], 0, 0), png))
    writer.close()
    it = mx.io.ImageDetRecordIter(path_imgrec=short, data_shape=(3, 8, 8), batch_size=1,
                                  verbose=False)
    with pytest.raises(mx.MXNetError, match='at least 7 values'):
        it.next()
    it.close()


def test_im2rec_packed_detection_labels(items, tmp_path):
    """A detection .lst packed by im2rec --pack-label reads back through both iterators."""
    from mxmod.tools import im2rec
    listed, root = items
    prefix = str(tmp_path / 'det')
    with open(prefix + '.lst', 'w') as handle:
        for k, (lab, name) in enumerate(listed):
            handle.write('\t'.join([str(k)] + ['%g' % v for v in lab] + [name]) + '\n')
    im2rec.main(['--pack-label', '--pass-through', '--num-thread', '1', prefix, root])
    it = mx.image.ImageDetIter(7, (3, 16, 16), path_imgrec=prefix + '.rec',
                               path_imgidx=prefix + '.idx', inter_method=1)
    label = it.next().label[0].asnumpy()
    rec_it = mx.io.ImageDetRecordIter(path_imgrec=prefix + '.rec', data_shape=(3, 16, 16),
                                      batch_size=7, verbose=False)
    rec_label = rec_it.next().label[0].asnumpy()
    for i in range(det_cases.DET_COUNT):
        objects = _objects(i)
        np.testing.assert_allclose(label[i, :len(objects)], objects, rtol=1e-5)
        raw = det_cases.det_label(i)
        kept = np.concatenate([raw[:int(raw[0])], objects.ravel()])
        np.testing.assert_allclose(rec_label[i, 4:4 + kept.size], kept, rtol=1e-5)
    # the .rec without its index: ImageDetIter reads it sequentially
    seq = mx.image.ImageDetIter(7, (3, 16, 16), path_imgrec=prefix + '.rec', inter_method=1)
    np.testing.assert_allclose(seq.next().label[0].asnumpy(), label)


def test_image_det_record_iter_labels_from_list_file(tmp_path):
    """path_imglist replaces the records' labels (found by image id): all the values between the
    id and the path with label_width -1, the first label_width values otherwise."""
    lst = str(tmp_path / 'labels.lst')
    table = {}
    with open(lst, 'w') as handle:
        for i in range(det_cases.DET_COUNT):
            count = 1 + (i * 2) % 3
            objects = [[i % 4, 0.1, 0.2, 0.1 + 0.2 * (k + 1), 0.9] for k in range(count)]
            table[i] = [2, 5] + sum(objects, [])
            sep = '\t' if i % 2 else ' '
            handle.write(sep.join([str(i)] + ['%g' % v for v in table[i]] + ['x.png']) + '\n')
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, path_imglist=lst, data_shape=(3, 8, 8),
                                  batch_size=7, verbose=False)
    widest = max(len(v) for v in table.values())
    assert tuple(it.provide_label[0].shape) == (7, widest + 4)
    label = it.next().label[0].asnumpy()
    for i in range(det_cases.DET_COUNT):
        assert label[i, 3] == len(table[i])
        np.testing.assert_allclose(label[i, 4:4 + len(table[i])], table[i], rtol=1e-6)
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, path_imglist=lst, data_shape=(3, 8, 8),
                                  batch_size=7, verbose=False, label_width=7)
    assert tuple(it.provide_label[0].shape) == (7, 11)
    label = it.next().label[0].asnumpy()
    np.testing.assert_allclose(label[:, 4:11], [table[i][:7] for i in range(7)], rtol=1e-6)
    missing = str(tmp_path / 'missing.lst')
    with open(missing, 'w') as handle:
        handle.write('0 2 5 1 0.1 0.1 0.5 0.5 x.png\n')
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, path_imglist=missing, data_shape=(3, 8, 8),
                                  batch_size=2, verbose=False)
    with pytest.raises(mx.MXNetError, match='id 1'):
        it.next()
    it.close()
