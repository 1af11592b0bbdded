"""Spatial and vision operators against small loop references written from MXNet's definitions
(GridGenerator, BilinearSampler, SpatialTransformer, Crop, ROIPooling, ROIAlign, Correlation,
GroupNorm, BatchNorm_v1), with float64 central-difference gradients."""
import math

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(21)


def sample_ref(img, x, y):
    """Bilinear read of img (H, W) at pixel coordinates, zero outside."""
    h, w = img.shape
    x0, y0 = math.floor(x), math.floor(y)
    total = 0.0
    for yy, xx, wt in ((y0, x0, (1 - (y - y0)) * (1 - (x - x0))), (y0, x0 + 1, (1 - (y - y0)) * (x - x0)),
                       (y0 + 1, x0, (y - y0) * (1 - (x - x0))), (y0 + 1, x0 + 1, (y - y0) * (x - x0))):
        if 0 <= yy < h and 0 <= xx < w:
            total += img[yy, xx] * wt
    return total


def sampler_ref(data, grid):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
                for ch in range(c):
                    out[b, ch, i, j] = sample_ref(data[b, ch], x, y)
    return out


def affine_grid_ref(theta, h, w):
    xs, ys = np.meshgrid(np.linspace(-1, 1, w), np.linspace(-1, 1, h))
    pts = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return (theta.reshape(-1, 2, 3) @ pts).reshape(-1, 2, h, w)


def test_grid_generator_and_sampler():
    theta = np.array([[0.9, 0.2, 0.1, -0.15, 1.1, -0.05], [1.2, -0.3, 0.3, 0.1, 0.8, 0.2]])
    attrs = {'transform_type': 'affine', 'target_shape': (4, 5)}
    check_forward('GridGenerator', attrs, [theta], [affine_grid_ref(theta, 4, 5)])
    check_grad('GridGenerator', attrs, [theta])
    flow = RNG.uniform(-1, 1, (2, 2, 3, 4))
    xs, ys = np.meshgrid(np.arange(4.), np.arange(3.))
    want = np.stack([(flow[:, 0] + xs) / 1.5 - 1, (flow[:, 1] + ys) / 1.0 - 1], axis=1)
    check_forward('GridGenerator', {'transform_type': 'warp'}, [flow], [want])
    check_grad('GridGenerator', {'transform_type': 'warp'}, [flow])
    data = RNG.uniform(-1, 1, (2, 3, 5, 6))
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 4, 3))
    check_forward('BilinearSampler', {}, [data, grid], [sampler_ref(data, grid)])
    check_grad('BilinearSampler', {}, [data, grid], rtol=1e-4, atol=1e-6)


def test_spatial_transformer_is_grid_plus_sampler():
    data = RNG.uniform(-1, 1, (2, 3, 5, 6))
    loc = np.array([[1, 0, 0, 0, 1, 0.]] * 2) + RNG.uniform(-0.3, 0.3, (2, 6))   # no kinks hit
    attrs = {'target_shape': (4, 3), 'transform_type': 'affine', 'sampler_type': 'bilinear'}
    want = sampler_ref(data, affine_grid_ref(loc, 4, 3))
    check_forward('SpatialTransformer', attrs, [data, loc], [want])
    check_grad('SpatialTransformer', attrs, [data, loc], rtol=1e-4, atol=1e-6)


def test_crop():
    x = RNG.uniform(-1, 1, (2, 3, 6, 7))
    check_forward('Crop', {'num_args': 1, 'offset': (1, 2), 'h_w': (3, 4)}, [x],
                  [x[:, :, 1:4, 2:6]])
    like = np.zeros((2, 3, 2, 3))
    check_forward('Crop', {'num_args': 2, 'center_crop': True}, [x, like], [x[:, :, 2:4, 2:5]])
    check_grad('Crop', {'num_args': 2, 'offset': (3, 1)}, [x, like], wrt=[0])
    assert mx.nd.Crop(mx.nd.array(x), mx.nd.array(like)).shape == (2, 3, 2, 3)
    with pytest.raises(MXNetError):
        run_forward(make('Crop', num_args=1, offset=(4, 0), h_w=(3, 3)), [x])


def roi_pool_ref(data, rois, ph, pw, scale):
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x0, y0, x1, y1 = (int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in roi[1:] * np.float32(scale))
        rh, rw = max(y1 - y0 + 1, 1), max(x1 - x0 + 1, 1)
        for i in range(ph):
            for j in range(pw):
                hs = min(max(math.floor(i * rh / ph) + y0, 0), data.shape[2])
                he = min(max(math.ceil((i + 1) * rh / ph) + y0, 0), data.shape[2])
                ws = min(max(math.floor(j * rw / pw) + x0, 0), data.shape[3])
                we = min(max(math.ceil((j + 1) * rw / pw) + x0, 0), data.shape[3])
                if he > hs and we > ws:
                    out[r, :, i, j] = data[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


def test_roi_pooling():
    data = RNG.uniform(-1, 1, (2, 3, 8, 9))
    rois = np.array([[0, 1.2, 0.7, 6.6, 5.1], [1, 0, 0, 8, 7], [0, 3, 2, 3.2, 2.4],
                     [1, -2, 1, 5, 9], [0, 20, 20, 30, 30]])
    attrs = {'pooled_size': (3, 2), 'spatial_scale': 0.9}
    check_forward('ROIPooling', attrs, [data, rois], [roi_pool_ref(data, rois, 3, 2, 0.9)])
    check_grad('ROIPooling', attrs, [data, rois], wrt=[0])


def roi_align_ref(data, rois, ph, pw, scale, ratio, aligned):
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    h, w = data.shape[2:]
    off = 0.5 if aligned else 0.0
    for r, roi in enumerate(rois):
        x0, y0, x1, y1 = roi[1:] * scale - off
        rw, rh = (x1 - x0, y1 - y0) if aligned else (max(x1 - x0, 1), max(y1 - y0, 1))
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        for i in range(ph):
            for j in range(pw):
                acc = 0.0
                for iy in range(gh):
                    for ix in range(gw):
                        y = y0 + i * rh / ph + (iy + 0.5) * rh / ph / gh
                        x = x0 + j * rw / pw + (ix + 0.5) * rw / pw / gw
                        if y < -1 or y > h or x < -1 or x > w:
                            continue
                        y, x = min(max(y, 0), h - 1), min(max(x, 0), w - 1)
                        acc = acc + np.array([sample_ref(data[int(roi[0]), c], x, y)
                                              for c in range(data.shape[1])])
                out[r, :, i, j] = acc / (gh * gw)
    return out


@pytest.mark.parametrize('ratio,aligned', [(-1, False), (2, True)])
def test_roi_align(ratio, aligned):
    data = RNG.uniform(-1, 1, (2, 2, 6, 7))
    rois = np.array([[0, 1.2, 0.7, 5.6, 4.1], [1, 0, 0, 6, 5], [1, -2, 1, 5, 7.5]])
    attrs = {'pooled_size': (3, 2), 'spatial_scale': 1.0, 'sample_ratio': ratio,
             'aligned': aligned}
    check_forward('_contrib_ROIAlign', attrs, [data, rois],
                  [roi_align_ref(data, rois, 3, 2, 1.0, ratio, aligned)])
    check_grad('_contrib_ROIAlign', attrs, [data, rois], wrt=[0])
    ps = dict(attrs, position_sensitive=True, pooled_size=(2, 2))
    wide = RNG.uniform(-1, 1, (2, 8, 5, 6))
    full = roi_align_ref(wide, rois, 2, 2, 1.0, ratio, aligned)
    want = np.stack([np.stack([full[:, c * 4 + i * 2 + j, i, j] for j in range(2)], -1)
                     for c in range(2) for i in range(2)], 1).reshape(3, 2, 2, 2)
    check_forward('_contrib_ROIAlign', ps, [wide, rois], [want])
    check_grad('_contrib_ROIAlign', ps, [wide, rois], wrt=[0])


def correlation_ref(d1, d2, k, md, s1, s2, pad, multiply):
    n, c, h, w = d1.shape
    p1, p2 = (np.pad(d, ((0, 0), (0, 0), (pad, pad), (pad, pad))) for d in (d1, d2))
    border = md + (k - 1) // 2
    oh, ow = math.ceil((h + 2 * pad - 2 * border) / s1), math.ceil((w + 2 * pad - 2 * border) / s1)
    rad = md // s2
    out = np.zeros((n, (2 * rad + 1) ** 2, oh, ow))
    for t in range((2 * rad + 1) ** 2):
        dx, dy = (t % (2 * rad + 1) - rad) * s2, (t // (2 * rad + 1) - rad) * s2
        for i in range(oh):
            for j in range(ow):
                y1, x1 = i * s1 + md, j * s1 + md
                a = p1[:, :, y1:y1 + k, x1:x1 + k]
                b = p2[:, :, y1 + dy:y1 + dy + k, x1 + dx:x1 + dx + k]
                out[:, t, i, j] = (a * b if multiply else np.abs(a - b)).sum(axis=(1, 2, 3)) / (k * k * c)
    return out


@pytest.mark.parametrize('k,md,s1,s2,pad,mult', [(3, 2, 1, 1, 2, True), (1, 2, 2, 2, 1, False),
                                                 (1, 1, 1, 1, 0, True)])
def test_correlation(k, md, s1, s2, pad, mult):
    d1, d2 = RNG.uniform(-1, 1, (1, 2, 5, 6)), RNG.uniform(-1, 1, (1, 2, 5, 6))
    attrs = {'kernel_size': k, 'max_displacement': md, 'stride1': s1, 'stride2': s2,
             'pad_size': pad, 'is_multiply': mult}
    check_forward('Correlation', attrs, [d1, d2], [correlation_ref(d1, d2, k, md, s1, s2, pad, mult)])
    check_grad('Correlation', attrs, [d1, d2])


def test_group_norm_and_batchnorm_v1():
    x = RNG.uniform(-1, 1, (2, 6, 3, 4))
    gamma, beta = RNG.uniform(0.5, 1.5, 3), RNG.uniform(-1, 1, 3)
    grouped = x.reshape(2, 3, -1)
    mean, std = grouped.mean(-1), np.sqrt(grouped.var(-1) + 1e-5)
    want = ((grouped - mean[..., None]) / std[..., None] * gamma[:, None] + beta[:, None])
    attrs = {'num_groups': 3, 'output_mean_var': True}
    check_forward('GroupNorm', attrs, [x, gamma, beta], [want.reshape(x.shape), mean, std])
    heads = [RNG.uniform(-1, 1, x.shape), np.zeros((2, 3)), np.zeros((2, 3))]   # hidden outputs
    check_grad('GroupNorm', {'num_groups': 3}, [x, gamma, beta], head=heads)
    g, b = RNG.uniform(0.5, 1.5, 6), RNG.uniform(-1, 1, 6)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    norm = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-3)
    bn = {'fix_gamma': False}
    check_forward('BatchNorm_v1', bn, [x, g, b], [norm * g[:, None, None] + b[:, None, None],
                                                  mean, var], aux=[np.zeros(6), np.ones(6)],
                  is_train=True)
    check_grad('BatchNorm_v1', bn, [x, g, b], aux=[np.zeros(6), np.ones(6)],
               head=[RNG.uniform(-1, 1, x.shape), np.zeros(6), np.zeros(6)])
    moving = [np.zeros(6), np.ones(6)]
    inference = (x - moving[0][:, None, None]) / np.sqrt(1 + 1e-3) * g[:, None, None] + b[:, None, None]
    check_forward('BatchNorm_v1', bn, [x, g, b], [inference, moving[0], moving[1]], aux=moving)


def psroi_ref(data, rois, out_dim, p, group, scale):
    out = np.zeros((len(rois), out_dim, p, p))
    h, w = data.shape[2:]
    for r, roi in enumerate(rois):
        x0, y0, x1, y1 = (np.sign(v) * np.floor(abs(v) + 0.5) for v in roi[1:])
        sx, sy, ex, ey = x0 * scale, y0 * scale, (x1 + 1) * scale, (y1 + 1) * scale
        bh, bw = max(ey - sy, 0.1) / p, max(ex - sx, 0.1) / p
        for i in range(p):
            for j in range(p):
                hs, he = (min(max(f(v), 0), h) for f, v in ((math.floor, i * bh + sy),
                                                             (math.ceil, (i + 1) * bh + sy)))
                ws, we = (min(max(f(v), 0), w) for f, v in ((math.floor, j * bw + sx),
                                                             (math.ceil, (j + 1) * bw + sx)))
                gh, gw = min(int(i * group / p), group - 1), min(int(j * group / p), group - 1)
                for c in range(out_dim):
                    if he > hs and we > ws:
                        out[r, c, i, j] = data[int(roi[0]), (c * group + gh) * group + gw,
                                               hs:he, ws:we].mean()
    return out


@pytest.mark.parametrize('group', [3, 2])
def test_psroi_pooling(group):
    data = RNG.uniform(-1, 1, (2, 2 * group * group, 7, 8))
    rois = np.array([[0, 1.2, 0.7, 6.6, 5.1], [1, 0, 0, 8, 7], [1, -2, 1, 5, 9]])
    attrs = {'spatial_scale': 0.7, 'output_dim': 2, 'pooled_size': 3, 'group_size': group}
    check_forward('_contrib_PSROIPooling', attrs, [data, rois],
                  [psroi_ref(data, rois, 2, 3, group, np.float32(0.7))])
    check_grad('_contrib_PSROIPooling', attrs, [data, rois], wrt=[0])


def test_rotated_roi_align_reduces_to_roi_align():
    data = RNG.uniform(-1, 1, (2, 3, 8, 9))
    boxes = np.array([[0, 4.2, 3.1, 5.6, 3.3], [1, 2.5, 5.0, 4.0, 4.0]])
    rotated = np.concatenate([boxes, np.zeros((2, 1))], axis=1)
    corners = np.stack([boxes[:, 0], boxes[:, 1] - boxes[:, 3] / 2, boxes[:, 2] - boxes[:, 4] / 2,
                        boxes[:, 1] + boxes[:, 3] / 2, boxes[:, 2] + boxes[:, 4] / 2], 1)
    want = run_forward(make('_contrib_ROIAlign', pooled_size=(3, 2), spatial_scale=1.0,
                            sample_ratio=2), [data, corners])[0]
    check_forward('_contrib_RROIAlign', {'pooled_size': (3, 2), 'spatial_scale': 1.0,
                                         'sampling_ratio': 2}, [data, rotated], [want])
    turned = rotated.copy()
    turned[:, 5] = 180          # half a turn reverses the bins
    flipped = run_forward(make('_contrib_RROIAlign', pooled_size=(3, 2), spatial_scale=1.0,
                               sampling_ratio=2), [data, turned])[0]
    np.testing.assert_allclose(flipped, want[:, :, ::-1, ::-1], atol=1e-12)
    assert not make('_contrib_RROIAlign', pooled_size=(2, 2), spatial_scale=1.0).differentiable
