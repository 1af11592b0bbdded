"""Unrolled LSTM and GRU layers built from primitive operators the way keras-mxnet 2.2.4.3 builds
them (keras/layers/recurrent.py's LSTMCell.call and GRUCell.call with the MXNet backend's
``rnn(unroll=True)``): ``dot`` products with slices of one kernel, ``broadcast_add`` biases,
hard_sigmoid as clip(0.2 x + 0.5, 0, 1), masks through ``where``. For the fusion tests and
bench/bench_keras_rnn.py; ``mx`` is mxmod or MXNet 1.9.1 itself.

With ``broadcast=True`` sums and products are ``broadcast_add`` / ``broadcast_mul``, as
keras-mxnet's tensors write ``+`` and ``*``; otherwise ``+`` and ``*`` of symbols
(``elemwise_add`` / ``elemwise_mul``)."""
import operator


def activation(mx, kind, x):
    """Keras' activations as the MXNet backend writes them."""
    if kind == 'hard_sigmoid':
        return mx.sym.clip(0.2 * x + 0.5, a_min=0.0, a_max=1.0)
    if kind == 'sigmoid':
        return mx.sym.Activation(x, act_type='sigmoid')
    if kind == 'sigmoid_op':
        return mx.sym.sigmoid(x)
    if kind == 'tanh':
        return mx.sym.tanh(x)
    if kind == 'relu':
        return mx.sym.relu(x)
    raise ValueError('unknown activation %r' % kind)


def _columns(mx, w, k, units, vector=False):
    begin, end = k * units, (k + 1) * units
    if vector:
        return mx.sym.slice(w, begin=(begin,), end=(end,))
    return mx.sym.slice(w, begin=(None, begin), end=(None, end))


class Weights(object):
    """Keras' kernel (I, G*H), recurrent_kernel (H, G*H) and bias (G*H,) of one layer, as the
    variables <prefix>i2h_weight, <prefix>h2h_weight and <prefix>bias (with their shapes when
    the input width I is given)."""

    def __init__(self, mx, prefix, gates, units, width=None):
        def var(name, shape):
            return mx.sym.Variable(prefix + name, shape=shape if width else None)
        self.kernel = var('i2h_weight', (width, gates * units))
        self.recurrent = var('h2h_weight', (units, gates * units))
        self.bias = var('bias', (gates * units,))
        self.mx, self.gates, self.units = mx, gates, units

    def part(self, which, k):
        w = {'kernel': self.kernel, 'recurrent': self.recurrent, 'bias': self.bias}[which]
        return _columns(self.mx, w, k, self.units, which == 'bias')


def _ops(mx, broadcast):
    if broadcast:
        return mx.sym.broadcast_add, mx.sym.broadcast_mul
    return operator.add, operator.mul


def lstm_step(mx, wt, x, h, c, act='tanh', rec='hard_sigmoid', implementation=1,
              broadcast=False):
    """One LSTMCell.call step; returns (h, c)."""
    H = wt.units
    add, mul = _ops(mx, broadcast)
    if implementation == 1:
        pre = [add(mx.sym.broadcast_add(mx.sym.dot(x, wt.part('kernel', k)), wt.part('bias', k)),
                   mx.sym.dot(h, wt.part('recurrent', k))) for k in range(4)]
    else:
        z = add(mx.sym.dot(x, wt.kernel), mx.sym.dot(h, wt.recurrent))
        z = mx.sym.broadcast_add(z, wt.bias)
        pre = [mx.sym.slice(z, begin=(None, k * H), end=(None, (k + 1) * H)) for k in range(4)]
    i = activation(mx, rec, pre[0])
    f = activation(mx, rec, pre[1])
    c = add(mul(f, c), mul(i, activation(mx, act, pre[2])))
    o = activation(mx, rec, pre[3])
    return mul(o, activation(mx, act, c)), c


def gru_step(mx, wt, x, h, act='tanh', rec='hard_sigmoid', broadcast=False):
    """One GRUCell.call step (implementation 1, reset_after=False); returns h."""
    add, mul = _ops(mx, broadcast)
    xz, xr, xh = [mx.sym.broadcast_add(mx.sym.dot(x, wt.part('kernel', k)), wt.part('bias', k))
                  for k in range(3)]
    z = activation(mx, rec, add(xz, mx.sym.dot(h, wt.part('recurrent', 0))))
    r = activation(mx, rec, add(xr, mx.sym.dot(h, wt.part('recurrent', 1))))
    hh = activation(mx, act, add(xh, mx.sym.dot(mul(r, h), wt.part('recurrent', 2))))
    return add(mul(z, h), mul(1 - z, hh))


def unrolled(mx, kind, steps, units, masked=False, data=None, width=None, **kw):
    """An unrolled layer over ``data`` (B, steps, I; a variable named 'data' by default)
    returning the last output (B, units), from zero initial states made as keras makes them
    (zeros_like, sum, expand_dims, tile); with ``masked``, states and outputs are kept where
    ``mask`` (B, steps) is 0, through ``where``. ``width``: the input width, to give the weight
    variables shapes. ``kw``: those of lstm_step / gru_step."""
    data = mx.sym.Variable('data') if data is None else data
    xs = list(mx.sym.split(data, axis=1, squeeze_axis=1, num_outputs=steps))
    ms = list(mx.sym.split(mx.sym.Variable('mask'), axis=1, squeeze_axis=1,
                           num_outputs=steps)) if masked else [None] * steps
    zero = mx.sym.sum(mx.sym.zeros_like(data), axis=(1, 2))
    zero = mx.sym.tile(mx.sym.expand_dims(zero, axis=1), reps=(1, units))
    wt = Weights(mx, kind + '_', 4 if kind == 'lstm' else 3, units, width)
    states = [zero, zero] if kind == 'lstm' else [zero]
    last = None
    for x, m in zip(xs, ms):
        if kind == 'lstm':
            new = list(lstm_step(mx, wt, x, states[0], states[1], **kw))
        else:
            new = [gru_step(mx, wt, x, states[0], **kw)]
        out = new[0]
        if m is not None:
            new = [mx.sym.where(m, n, s) for n, s in zip(new, states)]
            prev = last if last is not None else mx.sym.zeros_like(out)
            out = mx.sym.where(m, out, prev)
        states, last = new, out
    return last
