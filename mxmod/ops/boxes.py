"""Bounding-box operators of contrib: box_iou, box_nms (alias box_non_maximum_suppression),
bipartite_matching (with MXNet's orderings: stable sorts by score, first maximum wins); the
regression-target pair box_encode / box_decode is in box_coder.py.

The greedy parts are loops over boxes (NMS: one step per reference box, every step vectorised
over the batch and all later boxes; matching: one step per match); everything else is
whole-array work."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape

_FORMATS = ('corner', 'center')


def _extent(xp, lo, size, encode):
    """Per-axis (start, end) of boxes from coordinate pairs."""
    if encode == 'corner':
        return lo, size
    return lo - size / 2, lo + size / 2


def intersect_1d(xp, a0, a1, b0, b1, encode):
    """Overlap length along one axis of boxes given as (a0, a1) and (b0, b1) (corner: min/max;
    center: centre/size), zero when they do not overlap."""
    al, ar = _extent(xp, a0, a1, encode)
    bl, br = _extent(xp, b0, b1, encode)
    return xp.maximum(xp.minimum(ar, br) - xp.maximum(al, bl), 0)


def box_area(xp, box, encode):
    """Areas of (..., 4) boxes; zero for boxes of negative width or height."""
    if encode == 'corner':
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    else:
        w, h = box[..., 2], box[..., 3]
    return xp.where((w < 0) | (h < 0), 0, w * h)


def pair_iou(xp, a, b, encode):
    """IoU of boxes ``a`` (..., 4) and ``b`` (..., 4), broadcasting."""
    inter = (intersect_1d(xp, a[..., 0], a[..., 2], b[..., 0], b[..., 2], encode) *
             intersect_1d(xp, a[..., 1], a[..., 3], b[..., 1], b[..., 3], encode))
    with np.errstate(divide='ignore', invalid='ignore'):
        return inter / (box_area(xp, a, encode) + box_area(xp, b, encode) - inter), inter


@register
class BoxIou(Operator):
    """IoU of every box of ``lhs`` (..., 4) with every box of ``rhs`` (..., 4): shape
    lhs.shape[:-1] + rhs.shape[:-1]. MXNet gives zero gradients."""
    op_name = '_contrib_box_iou'
    arguments = ('lhs', 'rhs')
    params = {'format': Param('str', 'corner', _FORMATS)}
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        lhs, rhs = in_shapes
        for name, s in (('lhs', lhs), ('rhs', rhs)):     # as MXNet: ranks and last dims known
            if s is None or len(s) < 2 or s[-1] != 4:
                raise MXNetError('box_iou: %s must have at least 2 dimensions and last dimension '
                                 '4, got %s' % (name, s))
        out = tuple(lhs[:-1]) + tuple(rhs[:-1])
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        xp, (lhs, rhs) = octx.xp, inputs
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        a = lhs.reshape(-1, 1, 4)
        b = rhs.reshape(1, -1, 4)
        iou, inter = pair_iou(xp, a, b, self.p.format)
        iou = xp.where(inter <= 0, 0, iou)
        return [iou.reshape(lhs.shape[:-1] + rhs.shape[:-1]).astype(lhs.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]


def corner_to_center(xp, box):
    """(xmin, ymin, xmax, ymax) -> (x, y, w, h), leaving boxes whose first value is < 0 as they
    are (MXNet's conversion skips them, which also keeps -1 padding)."""
    converted = xp.stack([(box[..., 0] + box[..., 2]) / 2, (box[..., 1] + box[..., 3]) / 2,
                          box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]], axis=-1)
    return xp.where(box[..., :1] < 0, box, converted)


def center_to_corner(xp, box):
    """(x, y, w, h) -> (xmin, ymin, xmax, ymax), with the same skip rule."""
    half_w, half_h = box[..., 2] / 2, box[..., 3] / 2
    converted = xp.stack([box[..., 0] - half_w, box[..., 1] - half_h,
                          box[..., 0] + half_w, box[..., 1] + half_h], axis=-1)
    return xp.where(box[..., :1] < 0, box, converted)


_BLOCK = 256


def greedy_suppress(xp, boxes, alive, classes, threshold, encode, strict=True, overlap=None,
                    keep_limit=None):
    """Greedy NMS over (B, K) boxes already sorted by descending score: for each reference
    position in turn, later alive boxes (of the same class unless ``classes`` is None) whose IoU
    with it exceeds ``threshold`` (``>=`` when not ``strict``) are dropped. Returns ``alive``.

    Blocks of reference boxes are tested against the boxes after them at once (up to the last
    alive position). Inside a block the greedy outcome is the fixed point of "alive unless an
    earlier alive box of the block overlaps", reached by iterating (each iteration settles at
    least one more position, usually all of them in a few); the block's survivors then suppress
    the later blocks in one step. ``overlap(xp, a, b)`` replaces the IoU of ``encode`` boxes;
    with ``keep_limit`` the work stops once that many boxes are kept (later ones are dropped),
    which leaves the kept boxes unchanged."""
    def overlaps(a, b):
        return pair_iou(xp, a, b, encode)[0] if overlap is None else overlap(xp, a, b)

    def hits(a, b):
        iou = overlaps(a, b)
        return (iou > threshold) if strict else (iou >= threshold)

    if boxes.shape[0] == 1:
        alive = _greedy_one(xp, boxes[0], alive[0], None if classes is None else classes[0],
                            hits, keep_limit)[None]
    else:
        alive = _greedy_batched(xp, boxes, alive, classes, hits, keep_limit)
    if keep_limit is not None:
        alive &= xp.cumsum(alive, axis=1) <= keep_limit
    return alive


def _greedy_batched(xp, boxes, alive, classes, hits, keep_limit):
    """:func:`greedy_suppress` for a batch: blocks of reference positions against the later
    positions of every image at once."""
    alive = alive.copy()
    live_any = alive.any(axis=0)
    positions = xp.nonzero(live_any)[0]
    end = int(positions[-1]) + 1 if positions.size else 0
    for start in range(0, end - 1, _BLOCK):
        stop = min(start + _BLOCK, end - 1)
        if not bool(live_any[start:stop].any()):
            continue
        hit = hits(boxes[:, start:stop, None], boxes[:, None, start:end])   # (B, block, K')
        hit &= xp.arange(start, end)[None, None, :] > xp.arange(start, stop)[None, :, None]
        if classes is not None:
            hit &= classes[:, start:stop, None] == classes[:, None, start:end]
        size = stop - start
        current = _settle(xp, alive[:, start:stop], hit[:, :, :size])
        alive[:, start:stop] = current
        if stop < end:
            alive[:, stop:end] &= ~(hit[:, :, size:] & current[:, :, None]).any(axis=1)
        if keep_limit is not None and int(alive[:, :stop].sum(axis=1).min()) >= keep_limit:
            break
    return alive


def _settle(xp, base, inner):
    """Greedy survivors of a block: the fixed point of ``base & ~any(inner[i, j] & alive[i])``
    over earlier block members i (each iteration settles at least one more position)."""
    current = base
    for _ in range(base.shape[-1]):
        following = base & ~(inner & current[..., :, None]).any(axis=-2)
        if bool((following == current).all()):
            break
        current = following
    return current


def _greedy_one(xp, boxes, alive, classes, hits, keep_limit):
    """:func:`greedy_suppress` for one image: each round takes the next block of alive boxes as
    references and tests them only against the boxes still alive after them."""
    alive = alive.copy()
    start = 0
    while True:
        rest = xp.nonzero(alive[start:])[0] + start
        if rest.size == 0:
            break
        block = rest[:_BLOCK]
        size = int(block.shape[0])
        hit = hits(boxes[block][:, None], boxes[rest][None, :])          # (block, rest)
        hit &= rest[None, :] > block[:, None]
        if classes is not None:
            hit &= classes[block][:, None] == classes[rest][None, :]
        current = _settle(xp, xp.ones(size, dtype=bool), hit[:, :size])
        alive[block] = current
        if rest.shape[0] > size:
            alive[rest[size:]] &= ~(hit[:, size:] & current[:, None]).any(axis=0)
        start = int(block[-1]) + 1
        if keep_limit is not None and int(alive[:start].sum()) >= keep_limit:
            break
    return alive


@register
class BoxNms(Operator):
    """Non-maximum suppression of (..., N, W) box records [id, score, coords...]: per batch the
    kept boxes in descending score, the rest -1. The gradient follows each kept box back to its
    input position (suppressed positions get zero)."""
    op_name = '_contrib_box_nms'
    aliases = ('_contrib_box_non_maximum_suppression',)
    outputs = ('output0', 'output1')
    params = {'overlap_thresh': Param('float', 0.5), 'valid_thresh': Param('float', 0.0),
              'topk': Param('int', -1), 'coord_start': Param('int', 2),
              'score_index': Param('int', 1), 'id_index': Param('int', -1),
              'background_id': Param('int', -1), 'force_suppress': Param('bool', False),
              'in_format': Param('str', 'corner', _FORMATS),
              'out_format': Param('str', 'corner', _FORMATS)}
    backward_uses = ('outputs',)

    def num_visible_outputs(self):
        return 1

    def _check(self, shape):
        p, width = self.p, shape[-1]
        if len(shape) < 2 or width < (6 if p.id_index >= 0 else 5):
            raise MXNetError('box_nms: input must be (..., num_box, box_width) with box_width >= '
                             '%d, got %s' % (6 if p.id_index >= 0 else 5, tuple(shape)))
        coords = range(p.coord_start, p.coord_start + 4)
        if not 0 <= p.score_index < width or p.score_index in coords:
            raise MXNetError('box_nms: score_index %d is out of range or overlaps the coordinates '
                             'starting at %d' % (p.score_index, p.coord_start))
        if p.coord_start < 0 or p.coord_start + 3 >= width:
            raise MXNetError('box_nms: coordinates %d..%d are out of range for width %d'
                             % (p.coord_start, p.coord_start + 3, width))
        if p.id_index >= 0 and (p.id_index >= width or p.id_index in coords or
                                p.id_index == p.score_index):
            raise MXNetError('box_nms: id_index %d conflicts with the other fields'
                             % p.id_index)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: once data or the output is fully known, data's rank and box width must be
        # known; forwards only
        data, out = in_shapes[0], out_shapes[0]
        if (data is None or 0 in data) and (out is None or 0 in out):
            return in_shapes, out_shapes
        if data is None or len(data) < 2 or not data[-1]:
            raise MXNetError('box_nms: data must have at least 2 dims, the last (box width) known;'
                             ' got %s' % (data,))
        self._check(data)
        return [data], [data, tuple(data[:-1]) + (1,)]

    def _order(self, xp, data):
        """Per batch: positions sorted valid-first by descending score (stably) and validity."""
        p = self.p
        score = data[..., p.score_index]
        valid = score > data.dtype.type(p.valid_thresh)
        if p.id_index >= 0:
            valid &= data[..., p.id_index] != p.background_id
        key = xp.where(valid, -score, xp.inf)
        order = xp.argsort(key, axis=1, kind='stable')
        return order, xp.take_along_axis(valid, order, axis=1)

    def forward(self, octx, inputs, aux):
        xp, p = octx.xp, self.p
        data = inputs[0]
        self._check(data.shape)
        flat = data.reshape((-1,) + data.shape[-2:])
        b, n, width = flat.shape
        topk = n if p.topk < 0 else min(n, p.topk)
        if topk < 1:
            record = xp.arange(b * n, dtype=data.dtype).reshape(data.shape[:-1] + (1,))
            return [data.copy(), record]
        order, alive = self._order(xp, flat)
        alive &= xp.arange(n)[None, :] < topk
        boxes = xp.take_along_axis(flat, order[..., None], axis=1)
        coords = boxes[..., p.coord_start:p.coord_start + 4]
        classes = None if (p.force_suppress or p.id_index < 0) else boxes[..., p.id_index]
        alive = greedy_suppress(xp, coords, alive, classes, p.overlap_thresh, p.in_format)
        slot = xp.cumsum(alive, axis=1) - 1
        rows = xp.nonzero(alive)
        out = xp.full(flat.shape, -1, dtype=data.dtype)
        record = xp.full((b, n), -1, dtype=data.dtype)
        out[rows[0], slot[rows]] = boxes[rows]
        record[rows[0], slot[rows]] = (rows[0] * n + order[rows]).astype(data.dtype)
        if p.in_format != p.out_format:
            convert = corner_to_center if p.out_format == 'center' else center_to_corner
            out[..., p.coord_start:p.coord_start + 4] = convert(
                xp, out[..., p.coord_start:p.coord_start + 4])
        return [out.reshape(data.shape), record.reshape(data.shape[:-1] + (1,))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        dy = out_grads[0]
        width = dy.shape[-1]
        flat_dy = dy.reshape(-1, width)
        record = outputs[1].reshape(-1).astype(np.int64)
        kept = record >= 0
        grad = xp.zeros_like(flat_dy)
        grad[record[kept]] = flat_dy[kept]
        return [grad.reshape(dy.shape)]


@register
class BipartiteMatching(Operator):
    """Greedy matching on (..., rows, cols) scores: repeatedly pair the best remaining row and
    column (descending, or ascending with ``is_ascend``) while the score passes ``threshold``
    (at most ``topk`` + 1 pairs when ``topk`` > 0, as MXNet counts). Outputs the column of each
    row and the row of each column (-1 when unmatched); zero gradient."""
    op_name = '_contrib_bipartite_matching'
    outputs = ('output0', 'output1')
    params = {'is_ascend': Param('bool', False), 'threshold': Param('float'),
              'topk': Param('int', -1)}
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or len(data) < 2:   # as MXNet: an unknown shape fails too
            raise MXNetError('bipartite_matching: the score matrix must have at least 2 '
                             'dimensions, got %s' % (data,))
        return in_shapes, [tuple(data[:-1]), tuple(data[:-2]) + (data[-1],)]

    def forward(self, octx, inputs, aux):
        xp, data = octx.xp, inputs[0]
        octx.saved['meta'] = (tuple(data.shape), data.dtype)
        rows, cols = data.shape[-2:]
        scores = data.reshape(-1, rows * cols)
        if not self.p.is_ascend:
            scores = -scores
        row_of_col = xp.full((scores.shape[0], cols), -1, dtype=data.dtype)
        col_of_row = xp.full((scores.shape[0], rows), -1, dtype=data.dtype)
        limit = min(rows, cols)
        if self.p.topk > 0:
            limit = min(limit, self.p.topk + 1)
        free = xp.ones(scores.shape, dtype=bool)
        active = xp.ones(scores.shape[0], dtype=bool)
        batch = xp.arange(scores.shape[0])
        thresh = self.p.threshold
        for _ in range(limit):
            best = xp.argmin(xp.where(free, scores, xp.inf), axis=1)
            value = scores[batch, best] * (1 if self.p.is_ascend else -1)
            ok = active & free[batch, best] & ((value < thresh) if self.p.is_ascend
                                               else (value > thresh))
            active &= ok
            r, c = best // cols, best % cols
            col_of_row[batch[ok], r[ok]] = c[ok].astype(data.dtype)
            row_of_col[batch[ok], c[ok]] = r[ok].astype(data.dtype)
            grid = free.reshape(-1, rows, cols)
            grid[batch[ok], r[ok], :] = False
            grid[batch[ok], :, c[ok]] = False
        return [col_of_row.reshape(data.shape[:-1]),
                row_of_col.reshape(data.shape[:-2] + (cols,))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['meta']
        return [octx.xp.zeros(shape, dtype)]
