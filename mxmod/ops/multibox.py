"""SSD's multibox operators of contrib: MultiBoxPrior (anchor boxes), MultiBoxTarget (training
targets by greedy matching and optional hard-negative mining) and MultiBoxDetection (decoded,
thresholded and non-maximum-suppressed detections), as MXNet's CPU implementation computes
them. None of them passes a gradient (MXNet's are zero)."""
import numpy as np

from ..base import MXNetError
from .base import mx_dim, Operator, Param, register, merge_shape
from .boxes import greedy_suppress


class _NoGradient(Operator):
    """Zero gradients for every input."""
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        return self.compute(octx.xp, *inputs)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]


@register
class MultiBoxPrior(_NoGradient):
    """Anchors (1, H*W*(len(sizes)+len(ratios)-1), 4) centred on every cell of ``data``'s
    (H, W) grid: every size at the first ratio, then the first size at the other ratios."""
    op_name = '_contrib_MultiBoxPrior'
    params = {'sizes': Param('floats', (1.0,)), 'ratios': Param('floats', (1.0,)),
              'clip': Param('bool', False), 'steps': Param('floats', (-1.0, -1.0)),
              'offsets': Param('floats', (0.5, 0.5))}

    def setup(self):
        if len(self.p.steps) != 2 or len(self.p.offsets) != 2:
            raise MXNetError('MultiBoxPrior: steps and offsets must have two values (y, x)')
        if not self.p.sizes or not self.p.ratios:
            raise MXNetError('MultiBoxPrior: sizes and ratios must not be empty')

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        # as MXNet: the rank and the spatial size must be known
        if data is None or len(data) < 4 or not data[2] or not data[3]:
            raise MXNetError('MultiBoxPrior: data must be 4-D (batch, channel, y, x) of known '
                             'height and width, got %s'
                             % ('an unknown shape' if data is None else tuple(data),))
        count = data[2] * data[3] * (len(self.p.sizes) + len(self.p.ratios) - 1)
        return in_shapes, [merge_shape(self.op_name, 'output', (1, count, 4), out_shapes[0])]

    def _half_sizes(self, height, width):
        f32 = np.float32
        sizes, ratios = [f32(s) for s in self.p.sizes], [f32(r) for r in self.p.ratios]
        shapes = [(s, np.sqrt(ratios[0])) for s in sizes] + \
                 [(sizes[0], np.sqrt(r)) for r in ratios[1:]]
        return np.array([[s * height / width * r / 2, s / r / 2] for s, r in shapes], dtype=f32)

    def compute(self, xp, data):
        h, w = data.shape[2], data.shape[3]
        f32 = np.float32
        step_y, step_x = (f32(v) for v in self.p.steps)
        if step_y <= 0 or step_x <= 0:
            step_y, step_x = f32(1) / f32(h), f32(1) / f32(w)
        cy = (np.arange(h, dtype=f32) + f32(self.p.offsets[0])) * step_y
        cx = (np.arange(w, dtype=f32) + f32(self.p.offsets[1])) * step_x
        half = self._half_sizes(f32(h), f32(w))                  # (A, 2): half widths, heights
        centre_x = np.broadcast_to(cx[None, :, None], (h, w, len(half)))
        centre_y = np.broadcast_to(cy[:, None, None], (h, w, len(half)))
        boxes = np.stack([centre_x - half[:, 0], centre_y - half[:, 1],
                          centre_x + half[:, 0], centre_y + half[:, 1]], axis=-1)
        if self.p.clip:
            boxes = np.clip(boxes, 0, 1)
        return [xp.asarray(boxes.reshape(1, -1, 4).astype(data.dtype))]


def _iou_matrix(xp, anchors, gts):
    """(A, G) IoU of corner boxes, zero where the union is empty (MXNet's safe divide)."""
    a, g = anchors[:, None, :], gts[None, :, :]
    iw = xp.maximum(0, xp.minimum(a[..., 2], g[..., 2]) - xp.maximum(a[..., 0], g[..., 0]))
    ih = xp.maximum(0, xp.minimum(a[..., 3], g[..., 3]) - xp.maximum(a[..., 1], g[..., 1]))
    inter = iw * ih
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]) +
             (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)
    return xp.where(union == 0, 0, inter / xp.where(union == 0, 1, union))


@register
class MultiBoxTarget(_NoGradient):
    """SSD training targets: loc_target and loc_mask (batch, anchors*4) and cls_target (batch,
    anchors); labels are rows [class, xmin, ymin, xmax, ymax, ...] ending at the first class -1."""
    op_name = '_contrib_MultiBoxTarget'
    arguments = ('anchor', 'label', 'cls_pred')
    outputs = ('loc_target', 'loc_mask', 'cls_target')
    params = {'overlap_threshold': Param('float', 0.5), 'ignore_label': Param('float', -1.0),
              'negative_mining_ratio': Param('float', -1.0),
              'negative_mining_thresh': Param('float', 0.5),
              'minimum_negative_samples': Param('int', 0),
              'variances': Param('floats', (0.1, 0.1, 0.2, 0.2))}

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the three shapes must be there (anchors fully known), checked as MXNet
        # compares them (an unknown dim equals only an unknown dim)
        anchor, label, pred = in_shapes
        if anchor is None or len(anchor) != 3 or anchor[0] != 1 or not anchor[1] \
                or anchor[2] != 4:
            raise MXNetError('MultiBoxTarget: anchors must be (1, num_anchors, 4), got %s'
                             % (anchor,))
        if label is None or len(label) != 3 or not label[1] or label[2] < 5:
            raise MXNetError('MultiBoxTarget: labels must be (batch, num_labels, >=5), got %s'
                             % (label,))
        if pred is None or len(pred) != 3 or pred[2] != anchor[1]:
            raise MXNetError('MultiBoxTarget: cls_pred %s and anchors %s disagree on the number '
                             'of anchors' % (tuple(pred), tuple(anchor)))
        n, a = label[0], anchor[1]
        return in_shapes, [(n, a * 4), (n, a * 4), (n, a)]

    def compute(self, xp, anchor, label, cls_pred):
        anchors = anchor.reshape(-1, 4)
        n, a = label.shape[0], anchors.shape[0]
        loc = xp.zeros((n, a, 4), dtype=anchor.dtype)
        mask = xp.zeros((n, a, 4), dtype=anchor.dtype)
        cls = xp.full((n, a), self.p.ignore_label, dtype=anchor.dtype)
        for b in range(n):              # per image: its own ground truth count
            self._one_image(xp, anchors, label[b], cls_pred[b], loc[b], mask[b], cls[b])
        return [loc.reshape(n, -1), mask.reshape(n, -1), cls]

    def _match(self, xp, iou):
        """Greedy best pairs first, then threshold matches: (flags, best gt, best iou) per anchor
        with flags 1 positive, -1 undecided."""
        a, g = iou.shape
        flags = xp.full(a, -1, dtype=np.int64)
        best_gt = xp.full(a, -1, dtype=np.int64)
        best_iou = xp.full(a, -1.0, dtype=iou.dtype)
        open_pairs = xp.ones((a, g), dtype=bool)
        for _ in range(g):
            masked = xp.where(open_pairs, iou, -1.0)
            pos = int(xp.argmax(masked))
            j, k = divmod(pos, g)
            if not float(masked[j, k]) > 1e-6:
                break
            flags[j], best_gt[j], best_iou[j] = 1, k, masked[j, k]
            open_pairs[j, :] = False
            open_pairs[:, k] = False
        rest = flags != 1
        best_gt = xp.where(rest, xp.argmax(iou, axis=1), best_gt)
        best_iou = xp.where(rest, iou.max(axis=1), best_iou)
        if self.p.overlap_threshold > 0:
            flags = xp.where(rest & (best_iou > self.p.overlap_threshold), 1, flags)
        return flags, best_gt, best_iou

    def _mine(self, xp, flags, best_iou, logits):
        """Hard negatives: the undecided anchors below negative_mining_thresh with the lowest
        background probability, num_positive * ratio of them."""
        positives = int((flags == 1).sum())
        count = min(int(positives * self.p.negative_mining_ratio), flags.shape[0] - positives)
        if count <= 0:
            return flags
        shifted = logits - logits.max(axis=0, keepdims=True)
        prob = xp.exp(shifted[0]) / xp.exp(shifted).sum(axis=0)
        candidate = (flags == -1) & (best_iou < self.p.negative_mining_thresh)
        if int(candidate.sum()) < count:
            raise MXNetError('MultiBoxTarget: %d negatives requested but only %d candidates'
                             % (count, int(candidate.sum())))
        order = xp.argsort(xp.where(candidate, prob, xp.inf), kind='stable')[:count]
        flags = flags.copy()
        flags[order] = 0
        return flags

    def _one_image(self, xp, anchors, label, logits, loc, mask, cls):
        first_pad = xp.nonzero(label[:, 0] == -1)[0]
        valid = int(first_pad[0]) if first_pad.size else label.shape[0]
        if valid == 0:
            return
        gts = label[:valid]
        flags, best_gt, best_iou = self._match(xp, _iou_matrix(xp, anchors, gts[:, 1:5]))
        if self.p.negative_mining_ratio > 0:
            flags = self._mine(xp, flags, best_iou, logits)
        else:
            flags = xp.where(flags == 1, 1, 0)
        pos = flags == 1
        cls[pos] = gts[best_gt[pos], 0] + 1
        cls[flags == 0] = 0
        mask[pos] = 1
        loc[pos] = self._encode(xp, anchors[pos], gts[best_gt[pos], 1:5]).astype(loc.dtype)

    def _encode(self, xp, anchors, gts):
        f32 = np.float32
        a, g = anchors.astype(f32), gts.astype(f32)
        aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
        gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
        ax, ay = (a[:, 0] + a[:, 2]) * f32(0.5), (a[:, 1] + a[:, 3]) * f32(0.5)
        gx, gy = (g[:, 0] + g[:, 2]) * f32(0.5), (g[:, 1] + g[:, 3]) * f32(0.5)
        vx, vy, vw, vh = (f32(v) for v in self.p.variances)
        return xp.stack([(gx - ax) / aw / vx, (gy - ay) / ah / vy,
                         xp.log(gw / aw) / vw, xp.log(gh / ah) / vh], axis=1)


@register
class MultiBoxDetection(_NoGradient):
    """Detections (batch, anchors, 6) [class, score, xmin, ymin, xmax, ymax]: the best non-
    background class per anchor (class -1 below ``threshold``), decoded boxes, then per image
    the valid ones sorted by score and suppressed (IoU >= nms_threshold) among the first
    ``nms_topk``; unused rows are -1."""
    op_name = '_contrib_MultiBoxDetection'
    arguments = ('cls_prob', 'loc_pred', 'anchor')
    params = {'clip': Param('bool', True), 'threshold': Param('float', 0.01),
              'background_id': Param('int', 0), 'nms_threshold': Param('float', 0.5),
              'force_suppress': Param('bool', False),
              'variances': Param('floats', (0.1, 0.1, 0.2, 0.2)), 'nms_topk': Param('int', -1)}

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the three shapes must be there, checked as MXNet compares them (an unknown
        # dim, -1 there, equals only an unknown dim)
        cls, loc, anchor = in_shapes
        if cls is None or anchor is None or loc is None or len(cls) != 3 or len(anchor) != 3 \
                or len(loc) != 2 or anchor[2] != 4 or not anchor[1] or cls[2] != anchor[1] \
                or mx_dim(loc[1]) != mx_dim(cls[2]) * 4:
            raise MXNetError('MultiBoxDetection: expected cls_prob (batch, classes, anchors), '
                             'loc_pred (batch, anchors*4) and anchor (1, anchors, 4); got %s, %s, %s'
                             % (cls, loc, anchor))
        return in_shapes, [merge_shape(self.op_name, 'output', (cls[0], anchor[1], 6),
                                       out_shapes[0])]

    def _decode(self, xp, anchors, loc):
        dtype = loc.dtype.type
        vx, vy, vw, vh = (float(np.float32(v)) for v in self.p.variances)
        aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
        ax, ay = (anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2
        ox, oy = loc[..., 0] * dtype(vx) * aw + ax, loc[..., 1] * dtype(vy) * ah + ay
        ow, oh = xp.exp(loc[..., 2] * dtype(vw)) * aw / 2, xp.exp(loc[..., 3] * dtype(vh)) * ah / 2
        boxes = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
        return xp.clip(boxes, 0, 1) if self.p.clip else boxes

    def compute(self, xp, cls_prob, loc_pred, anchor):
        n, classes, a = cls_prob.shape
        fg = cls_prob[:, 1:, :]
        if classes > 1:
            cid = xp.argmax(fg, axis=1) + 1
            score = xp.take_along_axis(fg, (cid - 1)[:, None, :], axis=1)[:, 0]
            score = xp.where(score > -1, score, -1)
            cid = xp.where(fg.max(axis=1) > -1, cid, 0)
        else:
            cid, score = xp.zeros((n, a), np.int64), xp.full((n, a), -1, cls_prob.dtype)
        cid = xp.where((cid > 0) & (score < cls_prob.dtype.type(np.float32(self.p.threshold))),
                       0, cid)
        rows = xp.concatenate([(cid - 1)[..., None].astype(cls_prob.dtype), score[..., None],
                               self._decode(xp, anchor.reshape(-1, 4), loc_pred.reshape(n, a, 4))],
                              axis=-1)
        valid = cid > 0
        compact = xp.argsort(~valid, axis=1, kind='stable')       # valid rows first, in order
        rows = xp.take_along_axis(rows, compact[..., None], axis=1)
        valid = xp.take_along_axis(valid, compact, axis=1)
        out = xp.where(valid[..., None], rows, -1).astype(cls_prob.dtype)
        if 0 < self.p.nms_threshold <= 1:
            out = self._suppress(xp, out, valid)
        return [out]

    def _suppress(self, xp, out, valid):
        """Sort the valid rows by score, drop rows past nms_topk, then greedy NMS."""
        n, a, _ = out.shape
        order = xp.argsort(xp.where(valid, -out[..., 1], xp.inf), axis=1, kind='stable')
        ranked = xp.take_along_axis(out, order[..., None], axis=1)
        count = valid.sum(axis=1)
        keep = count if self.p.nms_topk <= 0 else xp.minimum(count, self.p.nms_topk)
        pos = xp.arange(a)[None, :]
        sorted_part = pos < keep[:, None]
        result = xp.where(sorted_part[..., None], ranked, out)
        alive = sorted_part.copy()
        classes = None if self.p.force_suppress else result[..., 0]
        alive = greedy_suppress(xp, result[..., 2:6], alive, classes, self.p.nms_threshold,
                                'corner', strict=False)
        dropped = (sorted_part & ~alive) | ((pos >= keep[:, None]) & (pos < count[:, None]))
        result[..., 0] = xp.where(dropped, -1, result[..., 0])
        return result
