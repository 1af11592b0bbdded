"""The image operators against numpy: to_tensor, normalize, flips (and their random forms), crop,
the colour augmentations and resize (every interpolation preserves constants and linear ramps where it should; its
gradient is the adjoint), with MXNet's shape checks and the ``mx.nd.image`` namespace."""
import colorsys

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops import resample
from mxmod.ops.base import OpContext
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(4)


def test_to_tensor_and_normalize():
    img = RNG.randint(0, 256, (4, 5, 3)).astype(np.uint8)
    out = check_forward('_image_to_tensor', {}, [img], [img.transpose(2, 0, 1) / 255.0])[0]
    assert out.dtype == np.float32
    batch = RNG.uniform(0, 255, (2, 4, 5, 3))
    check_forward('_image_to_tensor', {}, [batch], [batch.transpose(0, 3, 1, 2) / 255.0])
    dy = RNG.uniform(size=(2, 3, 4, 5))
    op = make('_image_to_tensor')
    octx = OpContext(np, mx.cpu())
    op.forward(octx, [batch], [])
    np.testing.assert_allclose(op.backward(octx, [dy], [None], [None], [])[0],
                               dy.transpose(0, 2, 3, 1) / 255.0, rtol=1e-6)
    chw = RNG.uniform(0, 1, (3, 4, 5))
    attrs = {'mean': (0.1, 0.2, 0.3), 'std': (0.5, 2.0, 1.0)}
    want = (chw - np.array([0.1, 0.2, 0.3])[:, None, None]) / np.array([0.5, 2.0, 1.0])[:, None, None]
    check_forward('_image_normalize', attrs, [chw], [want])
    check_grad('_image_normalize', attrs, [chw])
    check_forward('_image_normalize', {'mean': 0.5, 'std': 2.0}, [chw[None]], [(chw[None] - 0.5) / 2])
    with pytest.raises(MXNetError, match='1 or 3 elements'):
        run_forward(make('_image_normalize'), [chw])       # MXNet's 4-value default fails too
    with pytest.raises(MXNetError):
        run_forward(make('_image_normalize', mean=0.0, std=1.0), [RNG.uniform(size=(2, 4, 4))])


def test_flips_and_random_flips():
    img = RNG.uniform(size=(3, 5, 3))
    check_forward('_image_flip_left_right', {}, [img], [img[:, ::-1]])
    check_forward('_image_flip_top_bottom', {}, [img], [img[::-1]])
    seen = set()
    for seed in range(12):
        out = run_forward(make('_image_random_flip_left_right'), [img], seed=seed)[0]
        assert np.array_equal(out, img) or np.array_equal(out, img[:, ::-1])
        seen.add(np.array_equal(out, img))
    assert seen == {True, False}
    with pytest.raises(MXNetError):
        run_forward(make('_image_flip_left_right'), [img[None]])
    with pytest.raises(MXNetError, match='1 or 3'):
        run_forward(make('_image_flip_top_bottom'), [img[..., :2]])


def test_colour_adjustments():
    img = RNG.uniform(0, 255, (4, 5, 3)).astype(np.float32)
    fixed = lambda name, f: run_forward(make(name, min_factor=f, max_factor=f), [img])[0]  # noqa: E731
    np.testing.assert_allclose(fixed('_image_random_brightness', 1.3), img * 1.3, rtol=1e-6)
    grey = (img * [0.299, 0.587, 0.114]).sum() / 20
    np.testing.assert_allclose(fixed('_image_random_contrast', 0.6), img * 0.6 + 0.4 * grey,
                               rtol=1e-5)
    np.testing.assert_allclose(fixed('_image_random_saturation', 0.4),
                               img * 0.4 + img[..., 2:] * 0.114 * 0.6, rtol=1e-5)
    for turn in (0.0, 1.0):     # a whole turn of hue changes nothing
        np.testing.assert_allclose(fixed('_image_random_hue', turn), img, rtol=1e-4, atol=1e-3)
    shifted = fixed('_image_random_hue', 0.25)[1, 2] / 255
    h, l, s = colorsys.rgb_to_hls(*(img[1, 2] / 255))
    np.testing.assert_allclose(shifted, colorsys.hls_to_rgb((h + 0.25) % 1, l, s), rtol=1e-4)
    lit = run_forward(make('_image_adjust_lighting', alpha=(0.1, -0.2, 0.3)), [img])[0]
    eig = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
    np.testing.assert_allclose(lit, img + eig @ [0.1, -0.2, 0.3], rtol=1e-5)
    u8 = run_forward(make('_image_random_brightness', min_factor=3, max_factor=3),
                     [img.astype(np.uint8)])[0]
    assert u8.dtype == np.uint8 and u8.max() == 255
    jitter = make('_image_random_color_jitter', brightness=0.3, contrast=0.3, saturation=0.3,
                  hue=0.1)
    outs = [run_forward(jitter, [img], seed=s)[0] for s in range(3)]
    assert outs[0].shape == img.shape and not np.allclose(outs[0], outs[1])
    assert not np.allclose(run_forward(make('_image_random_lighting'), [img])[0], img)
    with pytest.raises(MXNetError, match='>= 0'):
        make('_image_random_hue', min_factor=-0.1, max_factor=0.2)


def test_crop():
    img = RNG.uniform(size=(5, 6, 3))
    attrs = {'x': 1, 'y': 2, 'width': 4, 'height': 3}
    check_forward('_image_crop', attrs, [img], [img[2:5, 1:5]])
    check_grad('_image_crop', attrs, [img])
    batch = RNG.uniform(size=(2, 5, 6, 3))
    check_forward('_image_crop', attrs, [batch], [batch[:, 2:5, 1:5]])
    with pytest.raises(MXNetError):
        run_forward(make('_image_crop', x=4, y=0, width=4, height=2), [img])


@pytest.mark.parametrize('interp', [0, 1, 2, 3, 4])
@pytest.mark.parametrize('out_size', [3, 11])
def test_resample_matrices(interp, out_size):
    mat = resample.opencv_matrix(out_size, 7, interp)
    np.testing.assert_allclose(mat.sum(axis=1), 1.0, atol=1e-12)     # constants are kept
    if interp in (0, 1, 3):
        assert mat.min() >= -1e-12


def test_resize_shapes_values_and_adjoint():
    img = RNG.uniform(0, 1, (5, 6, 3))
    out = run_forward(make('_image_resize', size=(4, 3)), [img])[0]
    assert out.shape == (3, 4, 3)
    ramp = np.broadcast_to(np.arange(6.0)[None, :, None], (5, 6, 1)).copy()
    twice = run_forward(make('_image_resize', size=(12, 5)), [ramp])[0][2, 1:-1, 0]
    np.testing.assert_allclose(twice, np.arange(0.25, 5, 0.5)[:10], atol=1e-12)
    short = run_forward(make('_image_resize', size=4, keep_ratio=True), [RNG.uniform(size=(2, 5, 8, 3))])
    assert short[0].shape == (2, 4, 6, 3)
    u8 = (img * 255).astype(np.uint8)
    assert run_forward(make('_image_resize', size=(9, 7), interp=2), [u8])[0].dtype == np.uint8
    check_grad('_image_resize', {'size': (4, 7), 'interp': 2}, [img])
    with pytest.raises(MXNetError, match='interp'):
        run_forward(make('_image_resize', size=3, interp=7), [img])


def test_namespace():
    for name in ('normalize', 'to_tensor', 'flip_left_right', 'flip_top_bottom',
                 'random_flip_left_right', 'random_flip_top_bottom', 'resize', 'crop',
                 'random_brightness', 'random_contrast', 'random_saturation', 'random_hue',
                 'random_color_jitter', 'adjust_lighting', 'random_lighting'):
        assert callable(getattr(mx.nd.image, name)) and callable(getattr(mx.sym.image, name))
    out = mx.nd.image.crop(mx.nd.ones((4, 5, 3)), 1, 0, 2, 2)
    assert out.shape == (2, 2, 3)
