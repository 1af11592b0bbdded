"""CTCLoss (aliases ctc_loss, contrib.CTCLoss, contrib.ctc_loss): connectionist temporal
classification loss of (T, B, A) activations (softmax taken inside) against padded labels.

The forward-backward recursions run in log space (float64) over time, vectorised over the batch
and the 2L+1 extended label positions; the gradient with respect to the activations is computed
with the loss (as MXNet/warp-ctc do) and scaled by the head gradient in backward. Label lengths
come from ``label_lengths`` or from the first padding value (0 with ``blank_label='first'``,
-1 with 'last'); steps beyond ``data_lengths`` get a zero gradient."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, mx_dim

_NEG = -np.inf


def _logsumexp(xp, *terms):
    top = terms[0]
    for t in terms[1:]:
        top = xp.maximum(top, t)
    safe = xp.where(xp.isfinite(top), top, 0)
    total = sum(xp.exp(t - safe) for t in terms)
    with np.errstate(divide='ignore'):
        return xp.where(xp.isfinite(top), xp.log(total) + safe, top)


def _log_softmax(xp, x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


class _Lattice(object):
    """Extended labels (blank, l1, blank, l2, ..., blank) of a batch and their transitions."""

    def __init__(self, xp, labels, lengths, blank):
        b, width = labels.shape
        self.size = 2 * width + 1
        pos = xp.arange(self.size)
        index = xp.clip((pos - 1) // 2, 0, max(width - 1, 0))
        symbols = labels[:, index] if width else xp.zeros((b, self.size), np.int64)
        self.ext = xp.where(pos % 2 == 0, blank, symbols).astype(np.int64)   # (B, S)
        self.valid = pos[None, :] < (2 * lengths + 1)[:, None]
        prev2 = xp.concatenate([xp.full((b, 2), -1, np.int64), self.ext[:, :-2]], axis=1)
        self.skip = (pos[None, :] % 2 == 1) & (self.ext != prev2) & (pos[None, :] >= 2)
        self.last = 2 * lengths                                            # (B,)

    def emissions(self, xp, logp_t):
        """log y_t(l'_s): (B, S) from one time step's (B, A) log probabilities."""
        return xp.take_along_axis(logp_t, self.ext, axis=1)


def _shift(xp, a, k):
    """``a`` moved k positions to the right along the last axis, -inf filled."""
    pad = xp.full(a.shape[:-1] + (k,), _NEG)
    return xp.concatenate([pad, a[..., :-k]], axis=-1)


def _shift_left(xp, a, k):
    pad = xp.full(a.shape[:-1] + (k,), _NEG)
    return xp.concatenate([a[..., k:], pad], axis=-1)


def ctc_forward_backward(xp, logp, lat, steps):
    """(loss (B,), posteriors (T, B, S)) for log probabilities ``logp`` (T, B, A)."""
    t_max, b, _ = logp.shape
    batch = xp.arange(b)
    emit = xp.stack([lat.emissions(xp, logp[t]) for t in range(t_max)])   # (T, B, S)
    alpha = xp.full((t_max, b, lat.size), _NEG)
    start = xp.full((b, lat.size), _NEG)
    start[:, :2] = 0.0
    prev = xp.where(lat.valid, start, _NEG)
    for t in range(t_max):
        if t == 0:
            cur = prev + emit[0]
        else:
            stay = _logsumexp(xp, prev, _shift(xp, prev, 1),
                              xp.where(lat.skip, _shift(xp, prev, 2), _NEG))
            cur = stay + emit[t]
        cur = xp.where(lat.valid, cur, _NEG)
        alpha[t] = cur
        prev = cur
    final = alpha[xp.clip(steps - 1, 0, t_max - 1), batch]                 # (B, S)
    end = lat.last
    ends = [xp.take_along_axis(final, end[:, None], 1)[:, 0],
            xp.where(end >= 1, xp.take_along_axis(final, xp.maximum(end - 1, 0)[:, None], 1)[:, 0],
                     _NEG)]
    log_p = _logsumexp(xp, *ends)
    beta = xp.full((t_max, b, lat.size), _NEG)
    nxt = xp.full((b, lat.size), _NEG)
    pos = xp.arange(lat.size)[None, :]
    init = xp.where((pos == end[:, None]) | (pos == end[:, None] - 1), 0.0, _NEG)
    for t in range(t_max - 1, -1, -1):
        later = nxt + (emit[t + 1] if t + 1 < t_max else 0)
        moved = _logsumexp(xp, later, _shift_left(xp, later, 1),
                           xp.where(_shift_left(xp, lat.skip, 2), _shift_left(xp, later, 2), _NEG))
        cur = xp.where((t == steps - 1)[:, None], init, xp.where((t < steps - 1)[:, None], moved, _NEG))
        cur = xp.where(lat.valid, cur, _NEG)
        beta[t] = cur
        nxt = cur
    with np.errstate(invalid='ignore'):
        post = xp.exp(alpha + beta - log_p[None, :, None])
    return -log_p, xp.where(xp.isfinite(log_p)[None, :, None], post, 0)


@register
class CTCLoss(Operator):
    """Per-sample CTC loss (B,) of ``data`` (T, B, alphabet) against ``label`` (B, L)."""
    op_name = 'CTCLoss'
    aliases = ('ctc_loss', '_contrib_CTCLoss', '_contrib_ctc_loss')
    outputs = ('output0', 'output1')
    params = {'use_data_lengths': Param('bool', False), 'use_label_lengths': Param('bool', False),
              'blank_label': Param('str', 'first', ('first', 'last'))}
    backward_uses = ('outputs',)

    def list_arguments(self):
        names = ['data', 'label']
        if self.p.use_data_lengths:
            names.append('data_lengths')
        if self.p.use_label_lengths:
            names.append('label_lengths')
        return names

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: data and label must have their ranks at once; batch sizes are compared as
        # MXNet compares them (an unknown dim, -1 there, matches only an unknown dim)
        data, label = in_shapes[:2]
        self._check_rank('data', data, 3, '(sequence_length, batch, alphabet)')
        self._check_rank('label', label, 2, '(batch, label_length)')
        d = [mx_dim(x) for x in data]
        l = [mx_dim(x) for x in label]
        if d[1] != l[0]:
            raise MXNetError('CTCLoss: the batch sizes of data %s and label %s differ'
                             % (tuple(data), tuple(label)))
        for name, shape in zip(self.list_arguments()[2:], in_shapes[2:]):
            batch = d[1] if name == 'data_lengths' else l[0]
            self._check_rank(name, shape, 1, '(batch,)')
            if mx_dim(shape[0]) != batch:
                raise MXNetError('CTCLoss: %s %s does not match the batch size %s'
                                 % (name, tuple(shape), batch))
        if d[0] < l[1]:
            raise MXNetError('CTCLoss: the label length %d exceeds the sequence length %d'
                             % (l[1], d[0]))
        return list(in_shapes), [(data[1],), tuple(data)]

    @staticmethod
    def _check_rank(name, shape, ndim, layout):
        if shape is None or len(shape) != ndim:
            raise MXNetError('CTCLoss: %s must be %s, got %s'
                             % (name, layout, 'an unknown shape' if shape is None
                                else 'shape %s' % (tuple(shape),)))

    def infer_type(self, in_types, out_types):
        # as MXNet: the outputs take data's dtype; the labels and lengths keep theirs (MXNet
        # fails while data's is unknown, mxmod infers nothing then)
        dtype = in_types[0]
        if dtype is None:
            return list(in_types), list(out_types)
        return list(in_types), [dtype, dtype]

    def _lengths(self, xp, inputs, blank):
        data, label = inputs[:2]
        t_max, b = data.shape[:2]
        extra = list(inputs[2:])
        steps = (extra.pop(0).astype(np.int64) if self.p.use_data_lengths
                 else xp.full(b, t_max, np.int64))
        labels = label.astype(np.int64)
        if self.p.use_label_lengths:
            lengths = extra.pop(0).astype(np.int64)
        else:
            pad = 0 if self.p.blank_label == 'first' else -1
            is_pad = labels == pad
            lengths = xp.where(is_pad.any(axis=1), xp.argmax(is_pad, axis=1), labels.shape[1])
        return steps, labels, lengths

    def forward(self, octx, inputs, aux):
        xp, data = octx.xp, inputs[0]
        t_max, b, alphabet = data.shape
        blank = 0 if self.p.blank_label == 'first' else alphabet - 1
        steps, labels, lengths = self._lengths(xp, inputs, blank)
        used = xp.arange(labels.shape[1])[None, :] < lengths[:, None]
        if bool((used & ((labels < 0) | (labels >= alphabet))).any()):
            raise MXNetError('CTCLoss: a label is outside the alphabet of size %d' % alphabet)
        live = xp.arange(t_max)[:, None] < steps[None, :]                 # (T, B)
        logp = _log_softmax(xp, xp.where(live[..., None], data.astype(np.float64), 0))
        lat = _Lattice(xp, xp.where(labels < 0, 0, labels), lengths, blank)
        loss, post = ctc_forward_backward(xp, logp, lat, steps)
        onehot = (lat.ext[:, :, None] == xp.arange(alphabet)[None, None, :]).astype(np.float64)
        occupancy = xp.einsum('tbs,bsa->tba', post, onehot)
        grad = xp.where(live[..., None], xp.exp(logp) - occupancy, 0)
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        return [loss.astype(data.dtype), grad.astype(data.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        dy = out_grads[0]
        grad = outputs[1] * dy[None, :, None]
        meta = octx.saved['meta']
        return [grad] + [xp.zeros(s, d) for s, d in meta[1:]]
