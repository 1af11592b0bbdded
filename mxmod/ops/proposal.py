"""contrib.Proposal and contrib.MultiProposal: Faster R-CNN's region proposals from RPN scores and
box deltas (anchors from ``scales`` x ``ratios`` on a ``feature_stride`` grid, decoded, clipped,
small boxes demoted, sorted, non-maximum suppressed with MXNet's +1 pixel areas), as MXNet's CPU
implementation computes them, in float32. Outputs (batch * post_nms_top_n, 5) ROIs
[image, x1, y1, x2, y2] (padded by repeating the kept ones) and, with ``output_score``, their
scores. No gradient flows (MXNet's are zero)."""
import math

import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register
from .boxes import greedy_suppress

_F32 = np.float32


def base_anchors(stride, ratios, scales):
    """(A, 4) anchors of one cell, ratio-major, as MXNet's GenerateAnchors (float32)."""
    w = h = _F32(stride)
    x_ctr = y_ctr = _F32(0.5) * (w - 1)
    out = []
    for ratio in ratios:
        for scale in scales:
            ratio, scale = _F32(ratio), _F32(scale)
            size_ratios = _F32(math.floor(w * h / ratio))
            new_w = _F32(math.floor(_F32(math.sqrt(size_ratios)) + _F32(0.5))) * scale
            new_h = _F32(math.floor(new_w / scale * ratio + _F32(0.5))) * scale
            out.append([x_ctr - _F32(0.5) * (new_w - 1), y_ctr - _F32(0.5) * (new_h - 1),
                        x_ctr + _F32(0.5) * (new_w - 1), y_ctr + _F32(0.5) * (new_h - 1)])
    return np.array(out, dtype=_F32)


def _decode(xp, anchors, deltas, iou_loss):
    if iou_loss:
        return anchors + deltas
    w = anchors[:, 2] - anchors[:, 0] + 1
    h = anchors[:, 3] - anchors[:, 1] + 1
    cx, cy = anchors[:, 0] + _F32(0.5) * (w - 1), anchors[:, 1] + _F32(0.5) * (h - 1)
    px, py = deltas[:, 0] * w + cx, deltas[:, 1] * h + cy
    pw, ph = xp.exp(deltas[:, 2]) * w, xp.exp(deltas[:, 3]) * h
    return xp.stack([px - _F32(0.5) * (pw - 1), py - _F32(0.5) * (ph - 1),
                     px + _F32(0.5) * (pw - 1), py + _F32(0.5) * (ph - 1)], axis=1)


def _overlap_plus_one(xp, a, b):
    """IoU with MXNet's proposal convention: boxes span x1..x2 inclusive (+1 pixel)."""
    w = xp.maximum(0, xp.minimum(a[..., 2], b[..., 2]) - xp.maximum(a[..., 0], b[..., 0]) + 1)
    h = xp.maximum(0, xp.minimum(a[..., 3], b[..., 3]) - xp.maximum(a[..., 1], b[..., 1]) + 1)
    inter = w * h
    area = lambda r: (r[..., 2] - r[..., 0] + 1) * (r[..., 3] - r[..., 1] + 1)  # noqa: E731
    with np.errstate(divide='ignore', invalid='ignore'):
        return inter / (area(a) + area(b) - inter)


def _nms_keep(xp, boxes, thresh, limit):
    """Positions kept by greedy NMS over score-sorted boxes (overlap > thresh), at most
    ``limit`` of them."""
    alive = greedy_suppress(xp, boxes[None], xp.ones((1, boxes.shape[0]), dtype=bool), None,
                            _F32(thresh), 'corner', overlap=_overlap_plus_one, keep_limit=limit)
    return xp.nonzero(alive[0])[0]


class _ProposalBase(Operator):
    """Shared parameters, shapes and the per-image computation."""
    arguments = ('cls_prob', 'bbox_pred', 'im_info')
    outputs = ('output', 'score')
    params = {'rpn_pre_nms_top_n': Param('int', 6000), 'rpn_post_nms_top_n': Param('int', 300),
              'threshold': Param('float', 0.7), 'rpn_min_size': Param('int', 16),
              'scales': Param('floats', (4.0, 8.0, 16.0, 32.0)),
              'ratios': Param('floats', (0.5, 1.0, 2.0)), 'feature_stride': Param('int', 16),
              'output_score': Param('bool', False), 'iou_loss': Param('bool', False)}
    backward_uses = ()

    def num_visible_outputs(self):
        return 2 if self.p.output_score else 1

    def infer_shape(self, in_shapes, out_shapes):
        cls = in_shapes[0]
        if cls is None or 0 in cls:     # as MXNet: from a fully known cls_prob only
            return in_shapes, out_shapes
        if len(cls) != 4 or cls[1] != 2 * len(self.p.scales) * len(self.p.ratios):
            raise MXNetError('%s: cls_prob must be (batch, 2 * %d anchors, height, width), got %s'
                             % (self.op_name, len(self.p.scales) * len(self.p.ratios), tuple(cls)))
        batch = cls[0]
        self._check_batch(batch)
        ins = [cls, (batch, cls[1] * 2, cls[2], cls[3]), (batch, 3)]
        rows = batch * self.p.rpn_post_nms_top_n
        return ins, [(rows, 5), (rows, 1)]

    def _check_batch(self, batch):
        """Proposal handles one image only."""

    def _one_image(self, xp, scores, deltas, info):
        """(post_n, 4) boxes and (post_n,) scores of one image."""
        p = self.p
        a, height, width = scores.shape[0] // 2, scores.shape[1], scores.shape[2]
        anchors = xp.asarray(base_anchors(p.feature_stride, p.ratios, p.scales))
        shift_x = xp.arange(width, dtype=_F32) * p.feature_stride
        shift_y = xp.arange(height, dtype=_F32) * p.feature_stride
        shifts = xp.stack(xp.broadcast_arrays(shift_x[None, :], shift_y[:, None],
                                              shift_x[None, :], shift_y[:, None]), axis=-1)
        boxes = (shifts[:, :, None, :] + anchors[None, None]).reshape(-1, 4)   # (H*W*A, 4)
        score = scores[a:].transpose(1, 2, 0).reshape(-1).astype(_F32)
        delta = deltas.reshape(a, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
        boxes = _decode(xp, boxes, delta.astype(_F32), p.iou_loss)
        im_h, im_w, im_scale = (_F32(v) for v in info)
        limit = xp.asarray(np.array([im_w - 1, im_h - 1, im_w - 1, im_h - 1], dtype=_F32))
        boxes = xp.clip(boxes, 0, limit)
        real_h, real_w = int(im_h / p.feature_stride), int(im_w / p.feature_stride)
        cell_y, cell_x = xp.divmod(xp.arange(height * width * a) // a, width)
        score = xp.where((cell_y >= real_h) | (cell_x >= real_w), _F32(-1), score)
        min_size = _F32(p.rpn_min_size) * im_scale
        small = ((boxes[:, 2] - boxes[:, 0] + 1 < min_size) |
                 (boxes[:, 3] - boxes[:, 1] + 1 < min_size))
        grow = xp.asarray(np.array([-1, -1, 1, 1], dtype=_F32)) * (min_size / 2)
        boxes = xp.where(small[:, None], boxes + grow, boxes)
        score = xp.where(small, _F32(-1), score)
        count = boxes.shape[0]
        pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
        post = min(p.rpn_post_nms_top_n, pre)
        order = xp.argsort(-score, kind='stable')[:pre]
        boxes, score = boxes[order], score[order]
        keep = _nms_keep(xp, boxes, p.threshold, post)
        slots = keep[xp.arange(p.rpn_post_nms_top_n) % keep.shape[0]]
        return boxes[slots], score[slots]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        cls, deltas, info = inputs
        self.infer_shape([tuple(cls.shape), None, None], [None, None])
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        rois, scores = [], []
        for b in range(cls.shape[0]):
            boxes, score = self._one_image(xp, cls[b], deltas[b], [float(v) for v in info[b]])
            rois.append(xp.concatenate([xp.full((boxes.shape[0], 1), b, dtype=_F32), boxes], 1))
            scores.append(score[:, None])
        return [xp.concatenate(rois).astype(cls.dtype), xp.concatenate(scores).astype(cls.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]


@register
class Proposal(_ProposalBase):
    """Region proposals of one image (batch size 1)."""
    op_name = '_contrib_Proposal'

    def _check_batch(self, batch):
        if batch not in (0, 1):
            raise MXNetError('Proposal handles one image per call (batch size 1), got %d; use '
                             'MultiProposal for batches' % batch)


@register
class MultiProposal(_ProposalBase):
    """Region proposals of every image of a batch."""
    op_name = '_contrib_MultiProposal'
