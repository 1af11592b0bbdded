"""Detection operators of contrib against loop references and hand-made examples: box_iou,
box_nms (and its gradient routing), bipartite_matching, MultiBoxPrior, MultiBoxTarget,
MultiBoxDetection."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OpContext
from mxmod_tests.ops.opcheck import check_forward, make, run_forward

RNG = np.random.RandomState(17)


def iou_ref(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    if inter <= 0:
        return 0.0
    area = lambda r: max(r[2] - r[0], 0) * max(r[3] - r[1], 0)  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def corner_boxes(*shape):
    lo = RNG.uniform(0, 0.6, shape + (2,))
    return np.concatenate([lo, lo + RNG.uniform(0.05, 0.4, shape + (2,))], axis=-1)


def test_box_iou():
    a, b = corner_boxes(2, 3), corner_boxes(4)
    want = np.array([[[iou_ref(x, y) for y in b] for x in row] for row in a])
    check_forward('_contrib_box_iou', {}, [a, b], [want])
    centre = np.concatenate([(a[..., :2] + a[..., 2:]) / 2, a[..., 2:] - a[..., :2]], -1)
    centre_b = np.concatenate([(b[..., :2] + b[..., 2:]) / 2, b[..., 2:] - b[..., :2]], -1)
    check_forward('_contrib_box_iou', {'format': 'center'}, [centre, centre_b], [want])


def nms_ref(data, thresh, valid_thresh=0.0, topk=-1, id_index=-1, force=False):
    out = np.full_like(data, -1)
    for b in range(data.shape[0]):
        order = [i for i in np.argsort(-data[b, :, 1], kind='stable') if data[b, i, 1] > valid_thresh]
        order = order[:topk] if topk > 0 else order
        kept = []
        for i in order:
            if all(not (force or id_index < 0 or data[b, i, id_index] == data[b, j, id_index])
                   or iou_ref(data[b, i, 2:6], data[b, j, 2:6]) <= thresh for j in kept):
                kept.append(i)
        out[b, :len(kept)] = data[b, kept]
    return out


@pytest.mark.parametrize('attrs', [{'overlap_thresh': 0.3}, {'overlap_thresh': 0.2, 'topk': 5},
                                   {'overlap_thresh': 0.2, 'id_index': 0},
                                   {'overlap_thresh': 0.1, 'id_index': 0, 'force_suppress': True,
                                    'valid_thresh': 0.3}])
@pytest.mark.parametrize('batch', [1, 2])
def test_box_nms(attrs, batch):
    data = np.concatenate([RNG.randint(0, 3, (batch, 10, 1)), RNG.uniform(0, 1, (batch, 10, 1)),
                           corner_boxes(batch, 10)], axis=-1)
    want = nms_ref(data, attrs['overlap_thresh'], attrs.get('valid_thresh', 0.0),
                   attrs.get('topk', -1), attrs.get('id_index', -1),
                   attrs.get('force_suppress', False))
    check_forward('_contrib_box_nms', attrs, [data], [want])
    op = make('_contrib_box_nms', **attrs)
    octx = OpContext(np, mx.cpu())
    outs = op.forward(octx, [data], [])
    dy = RNG.uniform(size=data.shape)
    grad = op.backward(octx, [dy, None], [None], outs, [])[0]
    record = outs[1][..., 0].astype(int)
    for b in range(batch):
        for i, src in enumerate(record[b]):
            if src >= 0:
                np.testing.assert_array_equal(grad.reshape(-1, 6)[src], dy[b, i])
    assert np.count_nonzero(grad.any(axis=-1)) == np.count_nonzero(record >= 0)


def matching_ref(scores, thresh, ascend, topk):
    rows, cols = scores.shape
    row_m, col_m = -np.ones(rows), -np.ones(cols)
    order = np.argsort(scores.ravel() if ascend else -scores.ravel(), kind='stable')
    count = 0
    for idx in order:
        r, c = divmod(idx, cols)
        if row_m[r] == -1 and col_m[c] == -1:
            if (scores[r, c] < thresh) if ascend else (scores[r, c] > thresh):
                row_m[r], col_m[c] = c, r
                count += 1
                if 0 < topk < count:
                    break
            else:
                break
    return row_m, col_m


@pytest.mark.parametrize('ascend,topk', [(False, -1), (True, -1), (False, 1)])
def test_bipartite_matching(ascend, topk):
    scores = np.round(RNG.uniform(size=(3, 4, 5)), 1)
    attrs = {'threshold': 0.5, 'is_ascend': ascend, 'topk': topk}
    refs = [matching_ref(s, 0.5, ascend, topk) for s in scores]
    check_forward('_contrib_bipartite_matching', attrs, [scores],
                  [np.stack([r for r, _ in refs]), np.stack([c for _, c in refs])])


def test_multibox_prior():
    data = np.zeros((1, 2, 2, 3), np.float32)
    attrs = {'sizes': (0.5, 0.2), 'ratios': (1.0, 4.0), 'clip': True}
    out = run_forward(make('_contrib_MultiBoxPrior', **attrs), [data])[0]
    assert out.shape == (1, 2 * 3 * 3, 4)
    want = []
    for r in range(2):
        for c in range(3):
            cy, cx = (r + 0.5) / 2, (c + 0.5) / 3
            for size, ratio in ((0.5, 1.0), (0.2, 1.0), (0.5, 2.0)):
                w, h = size * 2 / 3 * ratio / 2, size / ratio / 2
                want.append([cx - w, cy - h, cx + w, cy + h])
    np.testing.assert_allclose(out[0], np.clip(want, 0, 1), rtol=1e-6, atol=1e-7)


def test_multibox_target_and_detection_round_trip():
    anchors = np.array([[[0.1, 0.1, 0.4, 0.4], [0.5, 0.5, 0.9, 0.9], [0.0, 0.6, 0.2, 0.95],
                         [0.6, 0.0, 0.95, 0.3]]], np.float32)
    labels = np.array([[[2, 0.12, 0.1, 0.42, 0.38], [0, 0.55, 0.5, 0.9, 0.85], [-1] * 5]],
                      np.float32)
    preds = np.zeros((1, 4, 4), np.float32)
    loc, mask, cls = run_forward(make('_contrib_MultiBoxTarget'), [anchors, labels, preds])
    np.testing.assert_array_equal(cls, [[3, 1, 0, 0]])
    np.testing.assert_array_equal(mask.reshape(4, 4).any(axis=1), [True, True, False, False])
    # decoding the targets at the matched anchors gives the ground truth back
    probs = np.full((1, 4, 4), 0.05, np.float32)
    probs[0, 3, 0], probs[0, 1, 1] = 0.9, 0.8
    dets = run_forward(make('_contrib_MultiBoxDetection', clip=False, threshold=0.1),
                       [probs, loc.reshape(1, 16), anchors])[0][0]
    np.testing.assert_allclose(dets[0], [2, 0.9, 0.12, 0.1, 0.42, 0.38], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dets[1], [0, 0.8, 0.55, 0.5, 0.9, 0.85], rtol=1e-5, atol=1e-6)
    assert (dets[2:, 0] == -1).all()
    with pytest.raises(MXNetError):
        make('_contrib_MultiBoxTarget').infer_shape([(2, 4, 4), (1, 2, 5), None], [None] * 3)


def test_proposal_shapes_padding_and_batches():
    cls = RNG.uniform(0, 1, (2, 12, 4, 5)).astype(np.float32)
    deltas = RNG.uniform(-0.2, 0.2, (2, 24, 4, 5)).astype(np.float32)
    info = np.array([[30, 38, 1.0], [25, 30, 0.5]], np.float32)
    attrs = dict(feature_stride=8, scales=(2.0, 4.0, 8.0), ratios=(1.0, 2.0), rpn_min_size=2,
                 rpn_pre_nms_top_n=40, rpn_post_nms_top_n=50, output_score=True)
    rois, scores = run_forward(make('_contrib_MultiProposal', **attrs), [cls, deltas, info])
    assert rois.shape == (100, 5) and scores.shape == (100, 1)
    np.testing.assert_array_equal(rois[:50, 0], 0)
    np.testing.assert_array_equal(rois[50:, 0], 1)
    assert (rois[:, 1] <= rois[:, 3]).all() and (rois[:50, 3] <= 37).all()
    for b in range(2):
        single = run_forward(make('_contrib_Proposal', **attrs),
                             [cls[b:b + 1], deltas[b:b + 1], info[b:b + 1]])
        np.testing.assert_array_equal(single[0][:, 1:], rois[b * 50:(b + 1) * 50, 1:])
        kept = np.unique(single[0][:, 1:], axis=0).shape[0]
        assert kept <= 40           # fewer than post_nms_top_n kept: the rest repeat them
    with pytest.raises(MXNetError, match='one image'):
        run_forward(make('_contrib_Proposal', **attrs), [cls, deltas, info])
    with pytest.raises(MXNetError, match='anchors'):
        run_forward(make('_contrib_MultiProposal', **attrs), [cls[:, :6], deltas, info])
