"""mx.image against OpenCV/numpy references, and ImageIter's last-batch handling."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.image.codec import require_cv2


@pytest.fixture(name='jpegs')
def _jpegs(tmp_path):
    cv2 = require_cv2()
    rng = np.random.RandomState(0)
    paths = []
    for i in range(5):
        img = cv2.GaussianBlur(rng.randint(0, 255, (40 + 7 * i, 60 - 3 * i, 3)).astype(np.uint8),
                               (5, 5), 2)
        paths.append(str(tmp_path / ('%d.jpg' % i)))
        cv2.imwrite(paths[-1], img)
    return paths


def test_imread_imdecode_match_opencv(jpegs):
    cv2 = require_cv2()
    ref = cv2.imread(jpegs[0])
    np.testing.assert_array_equal(mx.image.imread(jpegs[0]).asnumpy(), ref[:, :, ::-1])
    with open(jpegs[0], 'rb') as handle:
        raw = handle.read()
    np.testing.assert_array_equal(mx.image.imdecode(bytearray(raw), to_rgb=0).asnumpy(), ref)
    gray = mx.image.imdecode(raw, flag=0).asnumpy()
    assert gray.shape == ref.shape[:2] + (1,)


@pytest.mark.parametrize('bad', [b'', b'clearly not image content'])
def test_imdecode_errors(bad):
    with pytest.raises(mx.MXNetError):
        mx.image.imdecode(bad)


def test_imread_missing_names_the_file():
    with pytest.raises(mx.MXNetError, match='blah.jpg'):
        mx.image.imread('/no/such/dir/blah.jpg')


@pytest.mark.parametrize('interp', [0, 1, 2, 3, 4])
def test_resize_and_crops(jpegs, interp):
    cv2 = require_cv2()
    src = mx.image.imread(jpegs[1])
    h, w, _ = src.shape
    ref = cv2.resize(src.asnumpy(), (30 * w // h, 30), interpolation=interp)
    np.testing.assert_array_equal(mx.image.resize_short(src, 30, interp).asnumpy(), ref)
    out, box = mx.image.center_crop(src, (20, 10))
    x0, y0 = (w - 20) // 2, (h - 10) // 2
    assert box == (x0, y0, 20, 10)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[y0:y0 + 10, x0:x0 + 20])
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)


def test_copy_make_border_and_normalize(jpegs):
    cv2 = require_cv2()
    src = mx.image.imread(jpegs[2])
    ref = cv2.copyMakeBorder(src.asnumpy(), 1, 2, 3, 4, cv2.BORDER_REPLICATE)
    np.testing.assert_array_equal(mx.image.copyMakeBorder(src, 1, 2, 3, 4, type=1).asnumpy(), ref)
    x = np.random.rand(5, 6, 3).astype(np.float32) * 255
    mean, std = np.array([1., 2., 3.]), np.array([2., 3., 4.])
    out = mx.image.color_normalize(mx.nd.array(x), mx.nd.array(mean), mx.nd.array(std))
    np.testing.assert_allclose(out.asnumpy(), (x - mean) / std, rtol=1e-5)


def test_imrotate_matches_scipy():
    scipy_ndimage = pytest.importorskip('scipy.ndimage')
    img = (np.linspace(0, .5, 30)[:, None] + np.linspace(0, .5, 60)[None, :])[:, :, None]
    rot = mx.image.imrotate(mx.nd.array(img.transpose(2, 0, 1).astype(np.float32)), 6)
    ref = scipy_ndimage.rotate(img, 6, axes=(1, 0), reshape=False, order=1, mode='constant',
                               prefilter=False)
    np.testing.assert_allclose(rot.asnumpy().transpose(1, 2, 0)[10:20, 20:40],
                               ref[10:20, 20:40], atol=1e-5)
    with pytest.raises(ValueError):
        mx.image.imrotate(rot, 3, zoom_in=True, zoom_out=True)


def test_augmenters_run_and_dump(jpegs):
    augs = mx.image.CreateAugmenter((3, 24, 24), resize=30, rand_crop=True, rand_resize=True,
                                    rand_mirror=True, mean=True, std=True, brightness=0.1,
                                    contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                    rand_gray=0.5, inter_method=10)
    img = mx.image.imread(jpegs[3])
    for aug in augs:
        img = aug(img)
    assert img.shape == (24, 24, 3) and img.dtype == np.float32
    assert augs[0].dumps() == '["resizeaug", {"size": 30, "interp": 10}]'
    norm = mx.image.ColorNormalizeAug(mean=mx.nd.array([1., 2., 3.]), std=np.array([2., 2, 2]))
    np.testing.assert_allclose(norm(mx.nd.ones((2, 2, 3)) * 5).asnumpy()[0, 0], [2, 1.5, 1])


def test_image_iter_last_batch_handles(jpegs, tmp_path):
    lst = str(tmp_path / 'list.lst')
    with open(lst, 'w') as handle:
        for i, path in enumerate(jpegs):
            handle.write('%d\t%d\t%s\n' % (i, i, path))

    def make(handle, batch=2):
        return mx.image.ImageIter(batch, (3, 16, 16), path_imglist=lst, path_root='',
                                  last_batch_handle=handle)
    pad = [b for b in make('pad')]
    assert [b.pad for b in pad] == [0, 0, 1]
    np.testing.assert_array_equal(pad[-1].label[0].asnumpy(), [4, 0])
    assert len([b for b in make('discard')]) == 2
    roll = make('roll_over', 3)
    assert len([b for b in roll]) == 1
    roll.reset()
    first = roll.next()
    np.testing.assert_array_equal(first.label[0].asnumpy(), [3, 4, 0])
