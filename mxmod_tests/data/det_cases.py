"""Inputs shared by the detection tests and make_det_fixtures.py (which runs them through MXNet).

fixtures/det_images.rec/.idx hold DET_COUNT small PNG images (lossless, so both sides decode the
same pixels) packed by mxmod (``write_det_images``) with the raw labels of ``det_label``."""
import os

import numpy as np

DET_COUNT = 7
OBJ_WIDTH = 6           # id, xmin, ymin, xmax, ymax, difficulty


def det_label(i):
    """Raw detection label of image ``i``: header [header_width, 6, (extra)], then objects.
    Image 2 has a 3-value header; image 4 carries an empty box that parsing drops."""
    rng = np.random.RandomState(100 + i)
    count = 1 + i % 4
    xy = rng.uniform(0.05, 0.55, (count, 2))
    wh = rng.uniform(0.15, 0.4, (count, 2))
    boxes = np.round(np.hstack([xy, np.minimum(xy + wh, 0.98)]), 3)
    objects = np.hstack([rng.randint(0, 5, (count, 1)), boxes, rng.randint(0, 2, (count, 1))])
    if i == 4:
        objects = np.vstack([objects, [[3, 0.6, 0.5, 0.4, 0.7, 0]]])      # xmax < xmin
    header = [3, OBJ_WIDTH, 17] if i == 2 else [2, OBJ_WIDTH]
    return np.array(header + objects.ravel().tolist(), np.float32)


def det_image(i):
    """The HxWx3 uint8 image ``i`` (blurred noise, so resizes are not flat)."""
    rng = np.random.RandomState(200 + i)
    h, w = 24 + 5 * i, 36 - 2 * i
    img = rng.randint(0, 255, (h, w, 3)).astype(np.float64)
    kernel = np.array([1, 4, 6, 4, 1], np.float64) / 16
    for axis in (0, 1):
        img = np.apply_along_axis(lambda v: np.convolve(np.pad(v, 2, mode='edge'), kernel,
                                                        'valid'), axis, img)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def write_det_images(path):
    """Pack the DET_COUNT images as PNG with their labels (mxmod.recordio, OpenCV)."""
    from mxmod import recordio
    from mxmod.image.codec import require_cv2
    cv2 = require_cv2()
    writer = recordio.MXIndexedRecordIO(path[:-4] + '.idx', path, 'w')
    for i in range(DET_COUNT):
        ok, png = cv2.imencode('.png', det_image(i)[:, :, ::-1])
        assert ok
        header = recordio.IRHeader(0, det_label(i), i, 0)
        writer.write_idx(i, recordio.pack(header, png.tobytes()))
    writer.close()


def extract_images(rec_path, out_dir, recordio):
    """Write each record's image to out_dir/<i>.png; return [(raw label, file name)]."""
    reader = recordio.MXIndexedRecordIO(rec_path[:-4] + '.idx', rec_path, 'r')
    items = []
    for i in range(DET_COUNT):
        header, payload = recordio.unpack(reader.read_idx(i))
        name = '%d.png' % i
        with open(os.path.join(out_dir, name), 'wb') as handle:
            handle.write(payload)
        items.append((np.asarray(header.label, np.float32), name))
    reader.close()
    return items


def aug_inputs():
    """(image HxWx3 uint8, label rows) for the augmenter cases."""
    rng = np.random.RandomState(7)
    img = rng.randint(0, 255, (30, 40, 3)).astype(np.uint8)
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6, 1], [2, 0.4, 0.1, 0.9, 0.8, 0],
                      [1, 0.3, 0.5, 0.6, 0.95, 0]], np.float32)
    return img, label


# augmenter cases: name -> (constructor name, kwargs, python/numpy seed)
AUG_CASES = {
    'flip': ('DetHorizontalFlipAug', dict(p=1.0), 0),
    'crop': ('DetRandomCropAug', dict(min_object_covered=0.3, area_range=(0.2, 1.0)), 3),
    'crop_fixed': ('DetRandomCropAug', dict(min_object_covered=0.0, aspect_ratio_range=1.0,
                                            area_range=0.5, min_eject_coverage=0.5), 11),
    'pad': ('DetRandomPadAug', dict(area_range=(1.2, 2.5), pad_val=(10, 20, 30)), 5),
    'pad_scalar': ('DetRandomPadAug', dict(aspect_ratio_range=(1.0, 1.5), pad_val=99), 8),
    'multi': ('CreateMultiRandCropAugmenter',
              dict(min_object_covered=[0.1, 0.5, 0.9], area_range=[(0.3, 1.0), (0.5, 1.0),
                                                                   (0.1, 0.9)]), 4),
}

# CreateDetAugmenter settings whose augmenter lists (dumps) are compared with MXNet's
CREATE_CASES = {
    'default': dict(data_shape=(3, 30, 30)),
    'full': dict(data_shape=(3, 300, 200), resize=40, rand_crop=0.5, rand_pad=0.4,
                 rand_mirror=True, mean=True, std=np.array([1.1, 1.03, 1.05]),
                 brightness=0.1, contrast=0.2, saturation=0.3, hue=0.1, pca_noise=0.1,
                 rand_gray=0.1, inter_method=10, min_object_covered=[0.3, 0.5, 0.9],
                 area_range=(0.3, 3.0), pad_val=(1, 2, 3)),
}

# ImageDetIter settings (seeded; bilinear resizes so OpenCV versions agree exactly)
ITER_CASES = {
    'plain': dict(batch_size=3, data_shape=(3, 20, 24), inter_method=1),
    'mirror': dict(batch_size=2, data_shape=(3, 16, 16), rand_mirror=True, inter_method=1),
    'crop_pad': dict(batch_size=4, data_shape=(3, 18, 22), rand_crop=0.8, rand_pad=0.6,
                     min_object_covered=[0.1, 0.5], area_range=(0.1, 2.5), inter_method=1,
                     mean=True, std=True, pad_val=(0, 50, 100)),
    'discard': dict(batch_size=3, data_shape=(3, 12, 12), last_batch_handle='discard',
                    inter_method=1, resize=20),
    'roll_over': dict(batch_size=3, data_shape=(3, 12, 12), last_batch_handle='roll_over',
                      inter_method=1),
}

# ImageDetRecordIter settings without random draws
REC_CASES = {
    'plain': dict(data_shape=(3, 16, 16), batch_size=3),
    'mirror': dict(data_shape=(3, 16, 20), batch_size=2, rand_mirror_prob=1.0),
    'shrink': dict(data_shape=(3, 20, 24), batch_size=4, resize=26, resize_mode='shrink'),
    'fit': dict(data_shape=(3, 30, 24), batch_size=3, resize_mode='fit'),
    'norm': dict(data_shape=(3, 12, 14), batch_size=2, mean_r=100, mean_g=110, mean_b=120,
                 std_r=50, std_g=60, std_b=70, scale=0.5, label_pad_value=-7,
                 label_pad_width=40),
    'part': dict(data_shape=(3, 8, 8), batch_size=2, num_parts=2, part_index=1),
    'gray': dict(data_shape=(1, 10, 10), batch_size=7, inter_method=0),
}
