"""``_contrib_hawkesll``: log-likelihood of marked self-exciting (Hawkes) point processes with
exponential kernels, and its gradient with respect to the background intensities ``lda`` (N, K),
the branching ratios ``alpha`` (K,) and the decays ``beta`` (K,).

For each of N sequences the events (interarrival times ``lags``, process ids ``marks``, the first
``valid_length`` of T) are walked in order, keeping per process the Hawkes state (the decayed
count of its past events) and the time of its last event; the intensity at an event of process
k is ``lda_k + alpha_k beta_k state_k e^{-beta_k d}`` and the compensator over the gap
``lda_k d + alpha_k state_k (1 - e^{-beta_k d})``. The compensators up to ``max_time`` close the
sum. The second output is the state at ``max_time``. The walk is a loop over the T positions,
vectorised over the sequences. As in MXNet the gradient flows from the log-likelihood only (not
from the returned state), and the sufficient statistics (lags, marks, valid_length, max_time) get
none."""
import numpy as np

from ..base import MXNetError
from .base import Operator, register, mx_dim, from_mx_dims, rank_check

_ARGS = ('lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length', 'max_time')


def _walk(xp, mu, alpha, beta, state, lags, marks, valid, on_event):
    """Walk the events of every sequence; ``on_event(rows, k, d, ed, phi)`` sees the active
    sequences, their process ids, gaps and decays and the states before the event. Returns the
    times of the last events (N, K) and the final states."""
    n, steps = lags.shape
    state = state.copy()
    last = xp.zeros_like(state)
    now = xp.zeros(n, dtype=state.dtype)
    for j in range(steps):
        rows = xp.nonzero(j < valid)[0]
        if rows.size == 0:
            continue
        k = marks[rows, j].astype(np.int64)
        now[rows] += lags[rows, j]
        d = now[rows] - last[rows, k]
        ed = xp.exp(-beta[k] * d)
        on_event(rows, k, d, ed, state[rows, k])
        state[rows, k] = 1 + state[rows, k] * ed
        last[rows, k] = now[rows]
    return last, state


@register
class HawkesLL(Operator):
    """Hawkes process log-likelihood (see the module docstring)."""
    op_name = '_contrib_hawkesll'
    arguments = _ARGS
    outputs = ('output', 'out_state')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: every input's rank must be known, dims compared as MXNet compares them (an
        # unknown dim, -1 there, equals only an unknown dim); nothing flows back to the inputs
        shapes = dict(zip(_ARGS, in_shapes))
        ndims = {'lda': 2, 'alpha': 1, 'beta': 1, 'state': 2, 'lags': 2, 'marks': 2,
                 'valid_length': 1, 'max_time': 1}
        for name in _ARGS:
            rank_check(self.op_name, name, shapes[name], ndims[name])
        mx = {name: tuple(mx_dim(d) for d in shape) for name, shape in shapes.items()}
        n, steps = mx['lags']
        k = mx['lda'][1]
        want = {'lda': (n, k), 'alpha': (k,), 'beta': (k,), 'state': (n, k), 'lags': (n, steps),
                'marks': (n, steps), 'valid_length': (n,), 'max_time': (n,)}
        for name in _ARGS:
            if mx[name] != want[name]:
                raise MXNetError('hawkesll: %s %s does not fit lags %s and lda %s'
                                 % (name, shapes[name], shapes['lags'], shapes['lda']))
        return list(in_shapes), [from_mx_dims(self.op_name, (n,)),
                                 from_mx_dims(self.op_name, (n, k))]

    def infer_type(self, in_types, out_types):
        dtype = next((t for i, t in enumerate(in_types) if t is not None and i != 5), None) or \
            out_types[0]
        if dtype is None:       # the marks are int32 all the same, as in MXNet
            return list(in_types[:5]) + ['int32'] + list(in_types[6:]), list(out_types)
        ins = [dtype] * len(in_types)
        ins[5] = 'int32'
        return ins, [dtype, dtype]

    @staticmethod
    def _check(inputs):
        mu, alpha, beta, state, lags, marks, valid, max_time = inputs
        n, k = mu.shape if mu.ndim == 2 else (None, None)
        if mu.ndim != 2 or lags.ndim != 2 or mu.shape[0] != lags.shape[0] or \
                alpha.shape != (k,) or beta.shape != (k,) or state.shape != mu.shape or \
                marks.shape != lags.shape or valid.shape != (n,) or max_time.shape != (n,):
            raise MXNetError('hawkesll: expected lda (N, K), alpha (K,), beta (K,), state (N, K), '
                             'lags (N, T), marks (N, T), valid_length (N,), max_time (N,); got %s'
                             % ', '.join(str(tuple(x.shape)) for x in inputs))
        if marks.size and (int(marks.min()) < 0 or int(marks.max()) >= k):
            raise MXNetError('hawkesll: marks must be process ids in [0, %d)' % k)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        self._check(inputs)
        mu, alpha, beta, state, lags, marks, valid, max_time = inputs
        ll = xp.zeros(mu.shape[0], dtype=mu.dtype)

        def on_event(rows, k, d, ed, phi):
            lda = mu[rows, k] + alpha[k] * beta[k] * phi * ed
            comp = mu[rows, k] * d + alpha[k] * phi * (1 - ed)
            ll[rows] += xp.log(lda) - comp

        last, state = _walk(xp, mu, alpha, beta, state, lags, marks, valid, on_event)
        d = max_time[:, None] - last
        ed = xp.exp(-beta[None, :] * d)
        ll -= (mu * d + alpha[None, :] * state * (1 - ed)).sum(axis=1)
        return [ll.astype(mu.dtype, copy=False), (state * ed).astype(mu.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        mu, alpha, beta, state, lags, marks, valid, max_time = inputs
        need = octx.need_grad or [True] * 3 + [False] * 5
        if any(need[4:]):
            raise MXNetError('hawkesll: lags, marks, valid_length and max_time have no gradient '
                             "(bind them with grad_req='null')")
        g_mu, g_alpha, g_beta = (xp.zeros_like(mu) for _ in range(3))
        dstate = xp.zeros_like(mu)

        def on_event(rows, k, d, ed, phi):
            a, b, dphi = alpha[k], beta[k], dstate[rows, k]
            lda = mu[rows, k] + a * b * phi * ed
            g_mu[rows, k] += 1 / lda - d
            g_alpha[rows, k] += b * phi * ed / lda - phi * (1 - ed)
            g_beta[rows, k] += (a * ed * (phi * (1 - b * d) + b * dphi) / lda
                                - a * (dphi * (1 - ed) + phi * d * ed))
            dstate[rows, k] = ed * (dphi - d * phi)

        last, phi = _walk(xp, mu, alpha, beta, state, lags, marks, valid, on_event)
        d = max_time[:, None] - last
        ed = xp.exp(-beta[None, :] * d)
        g_mu -= d
        g_alpha -= phi * (1 - ed)
        g_beta -= alpha[None, :] * (dstate * (1 - ed) + phi * d * ed)
        head = out_grads[0][:, None] if out_grads[0] is not None else 1
        return [(g_mu * head).astype(mu.dtype, copy=False),
                (g_alpha * head).sum(axis=0).astype(alpha.dtype, copy=False),
                (g_beta * head).sum(axis=0).astype(beta.dtype, copy=False),
                xp.zeros_like(state), None, None, None, None]
