"""Dense layers and activations: FullyConnected, Activation, LeakyReLU, Dropout (Embedding is
in embedding.py, the softmax family in softmax.py)."""
import numpy as np

from ..base import MXNetError
from ..context import erf
from .accum import acc_sum
from .base import Operator, Param, register, merge_shape, forward_shape_infer
from .layout import out_like
from . import act_jit, blas, jit
from .optimizer_kernels import F32    # native float32: other float32 dtypes take the general tests

__all__ = ['FullyConnected', 'Activation', 'LeakyReLU', 'Dropout']

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def _prod(dims):
    out = 1
    for d in dims:
        out *= d
    return out


def _scalar(x, value):
    """``value`` as a scalar of ``x``'s dtype so float32 math stays float32."""
    return x.dtype.type(value)


# ---- FullyConnected ---------------------------------------------------------------------------
@register
class FullyConnected(Operator):
    """y = x W^T + b, with x flattened to 2-D (``flatten=True``) or applied on the last axis."""
    op_name = 'FullyConnected'
    writes_out = True
    params = {'num_hidden': Param('int', lower=1), 'no_bias': Param('bool', False),
              'flatten': Param('bool', True)}
    backward_uses = ('inputs',)
    shares_derived = (1,)

    def list_arguments(self):
        return ['data', 'weight'] if self.p.no_bias else ['data', 'weight', 'bias']

    def infer_shape(self, in_shapes, out_shapes):
        in_shapes, out_shapes = list(in_shapes), list(out_shapes)
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        nh = self.p.num_hidden
        if self.p.flatten and not all(data[1:]):
            raise MXNetError('FullyConnected: flatten=True needs every dimension of data after '
                             'the first to be known (MXNet multiplies them), got %s'
                             % (tuple(data),))
        num_input = data[-1] if not self.p.flatten else _prod(data[1:])
        in_shapes[1] = merge_shape(self.op_name, 'weight', in_shapes[1], (nh, num_input))
        if not self.p.no_bias:
            bias = in_shapes[2]
            if not (bias is not None and tuple(bias) == (nh, 1)):
                in_shapes[2] = merge_shape(self.op_name, 'bias', bias, (nh,))
        out = tuple(data[:-1]) + (nh,) if not self.p.flatten else (data[0], nh)
        out = merge_shape(self.op_name, 'output', out_shapes[0], out)
        out_shapes[0] = out
        in_shapes[0] = merge_shape(self.op_name, 'data', data, (out[0],) + tuple(data[1:]))
        return in_shapes, out_shapes

    def _flat(self, x):
        return x.reshape(x.shape[0], -1) if self.p.flatten else x.reshape(-1, x.shape[-1])

    def forward(self, octx, inputs, aux):
        x, w = inputs[0], inputs[1]
        # (a 2-D input is its own flattened form, and the output then has its final shape)
        x2 = x if x.ndim == 2 else self._flat(x)
        wt = w.T if octx.shared is None else _transposed(octx, w)
        given = octx.out[0] if octx.out else None
        mm = blas.matmul_for(octx.xp)
        if given is not None and given.dtype == x2.dtype:
            out = mm(x2, wt, out=given.reshape(x2.shape[0], w.shape[0]))
        else:
            out = mm(x2, wt)
        if not self.p.no_bias:
            bias = inputs[2]
            out += bias if bias.ndim == 1 else bias.reshape(-1)
        if x.ndim == 2:
            return [out]
        shape = (x.shape[0], w.shape[0]) if self.p.flatten else x.shape[:-1] + (w.shape[0],)
        return [out.reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x, w = inputs[0], inputs[1]
        need = octx.need_grad or [True] * len(inputs)
        dy = out_grads[0]
        if dy.ndim != 2:
            dy = dy.reshape(-1, w.shape[0])
        into = octx.grad_out or (None, None, None)
        # the weight and bias gradients first: when they are final here, a gradient-ready hook
        # hears of them while the data gradient is computed
        grads = [None, _matmul(xp, dy.T, x if x.ndim == 2 else self._flat(x), into[1], w.shape)
                 if need[1] else None]
        if not self.p.no_bias:
            grads.append(_bias_grad(xp, dy, into[2], inputs[2].shape) if need[2] else None)
        if octx.grad_ready is not None and need[0]:
            # only a gradient written into its array is final here (a new array, e.g. cupy's
            # bias sum, is written by the executor after the step)
            for i in range(1, len(grads)):
                if grads[i] is not None and grads[i] is into[i]:
                    octx.grad_ready(i)
        if need[0]:
            grads[0] = _matmul(xp, dy, w, into[0], x.shape)
        return grads


def _transposed(octx, w):
    """``w.T``; a C-ordered copy of it when the weight is shared by several steps (an unrolled
    RNN's cell): BLAS multiplies a small batch by a transposed operand 1.2-1.6x slower than by a
    C-ordered one (32 x 200 by 200 x 800: 196 against 123 us), and the copy (about 100 us) is
    made once per forward for all the steps."""
    cache = octx.shared
    if cache is None or w.ndim != 2:
        return w.T
    hit = cache.get(id(w))
    if hit is None or hit[0] is not w:
        hit = (w, octx.xp.ascontiguousarray(w.T))
        cache[id(w)] = hit
    return hit[1]


_KERNELS = {}


def _bias_grad(xp, dy, out, shape):
    """The bias gradient, ``dy`` summed over its rows (as ``acc_sum``: float32 and float16 summed in
    float64 on numpy), written into ``out`` when given (the bias's gradient array)."""
    dt = dy.dtype
    if xp is np and (dt is F32 or dt == np.float16) and out is not None and \
            out.dtype == dt and out.size == dy.shape[1] and out.flags.c_contiguous:
        if dt is F32 and dy.flags.c_contiguous and jit.enabled():
            kernel = _KERNELS.get('column_sums_into')
            if kernel is None:      # imported on first use (numba); not per call: 1-2 us each
                from .sum_kernels import column_sums_into  # pylint: disable=import-outside-toplevel
                kernel = _KERNELS['column_sums_into'] = column_sums_into
            kernel(dy, out.reshape(-1))
            return out
        np.copyto(out.reshape(-1), np.add.reduce(dy, axis=0, dtype=np.float64), casting='unsafe')
        return out
    return acc_sum(xp, dy, 0).reshape(shape)


def _matmul(xp, a, b, out, shape):
    """a @ b reshaped to ``shape``, written into ``out`` when given (an argument's gradient)."""
    mm = blas.matmul_for(xp)
    if out is not None and out.dtype == a.dtype:
        mm(a, b, out=out if out.ndim == 2 else out.reshape(a.shape[0], b.shape[1]))
        return out
    return mm(a, b).reshape(shape)


# ---- Activation -------------------------------------------------------------------------------
def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _softrelu(xp, x):
    return xp.where(x > 20, x, xp.log1p(xp.exp(xp.minimum(x, 20))))


def mkldnn_like(xp, x):
    """Whether MXNet's CPU build runs this activation with MKL-DNN's kernel (float32 data of 1 to
    5 axes): relu then gives 0 for NaN, and leaky/elu's gradient is 1 there; its own kernels,
    used otherwise, keep NaN (relu's gradient is NaN there, leaky's the slope)."""
    return xp is np and x.dtype == F32 and 1 <= x.ndim <= 5


def _relu(xp, x, out=None):
    fn = xp.fmax if mkldnn_like(xp, x) else xp.maximum      # fmax(NaN, 0) is 0
    return fn(x, 0) if out is None else fn(x, 0, out=out)


def _relu_grad(xp, x, y, dy):
    # y is >= 0 or NaN: sign(y) is relu's derivative with NaN kept (y has none in MKL-DNN's case)
    return dy * (y > 0) if mkldnn_like(xp, y) else dy * xp.sign(y)


_ACT = {
    'relu': (_relu, _relu_grad),
    'sigmoid': (_sigmoid, lambda xp, x, y, dy: dy * y * (1 - y)),
    'tanh': (lambda xp, x: xp.tanh(x), lambda xp, x, y, dy: dy * (1 - y * y)),
    'softrelu': (_softrelu, lambda xp, x, y, dy: dy * -xp.expm1(-y)),
    'softsign': (lambda xp, x: x / (1 + xp.abs(x)),
                 lambda xp, x, y, dy: dy / ((1 + xp.abs(x)) * (1 + xp.abs(x)))),
}


def _sigmoid_into(xp, x, out):
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    xp.reciprocal(out, out=out)


# activations computed straight into a preallocated output (which may be the input's memory)
_ACT_INTO = {'relu': _relu,
             'tanh': lambda xp, x, out: xp.tanh(x, out=out),
             'sigmoid': _sigmoid_into}


@register
class Activation(Operator):
    """Elementwise activation: relu, sigmoid, tanh, softrelu (log(1 + e^x)) or softsign.

    relu of NaN follows MXNet's CPU build: 0 for float32 data of 1 to 5 axes (MKL-DNN), NaN
    otherwise (see :func:`mkldnn_like`); ``mx.nd.relu`` keeps NaN always."""
    op_name = 'Activation'
    params = {'act_type': Param('str', choices=tuple(_ACT))}
    mirror_cheap = True
    backward_uses = ('outputs',)
    monitor_generic_inputs = True   # MXNet's monitor names its input 'input0'
    writes_out = True
    inplace_ok = True

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        out = out_like(octx.out[0], x) if octx.out else None
        if octx.fused == 'relu_after_bn':       # the BatchNorm before it applied the relu
            if out is None:
                return [x]
            if not np.shares_memory(out, x):
                out[...] = x
            return [out]
        if out is not None and self.p.act_type in _ACT_INTO:
            _ACT_INTO[self.p.act_type](octx.xp, x, out)
            return [out]
        return [self._fn(octx.xp, x).astype(x.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        if octx.fused == 'relu_after_bn':       # the BatchNorm before it applies the mask
            return [out_grads[0]]
        y = outputs[0]
        if y.size >= act_jit.SMALL and self.p.act_type in act_jit.GRADS and octx.xp is np and \
                jit.enabled():
            dx = act_jit.grad(self.p.act_type, y, out_grads[0])
            if dx is not None:
                return [dx]
        return [self._grad(octx.xp, inputs[0], y, out_grads[0]).astype(y.dtype, copy=False)]

    def setup(self):
        self._fn, self._grad = _ACT[self.p.act_type]
        if self.p.act_type == 'softsign':
            self.backward_uses = ('inputs', 'outputs')


# ---- LeakyReLU --------------------------------------------------------------------------------
def _erf(xp, x):
    return erf(xp, x)


def _gamma_view(gamma, ndim):
    """Align PReLU's gamma with data axes 0..1 from the right, as MXNet broadcasts it."""
    shape = [1] * ndim
    dims = list(gamma.shape)
    axis = min(1, ndim - 1)
    while dims:
        shape[axis] = dims.pop()
        axis -= 1
        if axis < 0 and dims:
            raise MXNetError('LeakyReLU: cannot broadcast gamma of shape %s to data with %d axes'
                             % (gamma.shape, ndim))
    return gamma.reshape(shape)


@register
class LeakyReLU(Operator):
    """Leaky ReLU family: leaky, prelu (learned ``gamma``), rrelu (random slope), elu, selu, gelu."""
    op_name = 'LeakyReLU'
    params = {'act_type': Param('str', 'leaky',
                                choices=('rrelu', 'leaky', 'prelu', 'elu', 'selu', 'gelu')),
              'slope': Param('float', 0.25), 'lower_bound': Param('float', 0.125),
              'upper_bound': Param('float', 0.334)}
    mirror_cheap = True

    def list_arguments(self):
        return ['data', 'gamma'] if self.p.act_type == 'prelu' else ['data']

    def input_var_attrs(self):
        return {'gamma': {'__init__': '["Constant", {"value": 0.25}]'}}

    def list_outputs(self):
        return ['output', 'mask'] if self.p.act_type == 'rrelu' else ['output']

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]     # as MXNet: forwards only; an unknown prelu gamma: (channels,)
        if data is None:
            return list(in_shapes), list(out_shapes)
        ins = [data]
        if self.p.act_type == 'prelu':
            if in_shapes[1] is None and len(data) < 2:
                raise MXNetError('LeakyReLU(prelu): data of shape %s has no channel axis (1) '
                                 'to size gamma from' % (tuple(data),))
            ins.append(in_shapes[1] if in_shapes[1] is not None else (data[1],))
        return ins, [data] * len(out_shapes)

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        kind = self.p.act_type
        if kind == 'prelu':
            gamma = _gamma_view(inputs[1], x.ndim)
            return [xp.where(x > 0, x, x * gamma).astype(x.dtype, copy=False)]
        if kind == 'rrelu':
            if octx.is_train:
                u = octx.rng.random_sample(x.shape)
                mask = xp.asarray(u * (self.p.upper_bound - self.p.lower_bound)
                                  + self.p.lower_bound, dtype=x.dtype)
            else:
                mask = xp.full(x.shape, (self.p.lower_bound + self.p.upper_bound) / 2, x.dtype)
            return [xp.where(x > 0, x, x * mask), mask]
        return [self._plain(xp, x).astype(x.dtype, copy=False)]

    def _plain(self, xp, x):
        kind = self.p.act_type
        if kind == 'leaky':
            return xp.where(x > 0, x, x * _scalar(x, self.p.slope))
        if kind == 'elu':
            return xp.where(x > 0, x, _scalar(x, self.p.slope) * xp.expm1(xp.minimum(x, 0)))
        if kind == 'selu':
            neg = _scalar(x, SELU_ALPHA) * xp.expm1(xp.minimum(x, 0))
            return _scalar(x, SELU_LAMBDA) * xp.where(x > 0, x, neg)
        return 0.5 * x * (1 + _erf(xp, x / _scalar(x, np.sqrt(2.0))))   # gelu

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, x, y, dy = octx.xp, inputs[0], outputs[0], out_grads[0]
        kind = self.p.act_type
        if kind == 'prelu':
            gamma = inputs[1]
            gview = _gamma_view(gamma, x.ndim)
            dx = dy * xp.where(x > 0, 1, gview)
            dg = dy * xp.where(x > 0, 0, x)
            axes = tuple(i for i in range(x.ndim) if gview.shape[i] == 1 and x.shape[i] != 1)
            dg = acc_sum(xp, dg, axes, keepdims=True).reshape(gamma.shape) if axes else dg.reshape(gamma.shape)
            return [dx.astype(x.dtype, copy=False), dg.astype(gamma.dtype, copy=False)]
        if kind == 'rrelu':
            return [dy * xp.where(y > 0, 1, outputs[1])]
        if kind == 'leaky':     # at NaN: 1 with MKL-DNN, the slope with MXNet's own kernel
            if mkldnn_like(xp, x):
                return [dy * xp.where(y <= 0, _scalar(x, self.p.slope), 1)]
            return [dy * xp.where(y > 0, 1, _scalar(x, self.p.slope))]
        if kind == 'elu':       # at NaN: 1 with MKL-DNN, NaN with MXNet's own kernel
            if mkldnn_like(xp, x):
                return [dy * xp.where(x <= 0, y + _scalar(x, self.p.slope), 1)]
            return [dy * xp.where(x > 0, 1, y + _scalar(x, self.p.slope))]
        if kind == 'selu':
            # MXNet 1.9.1 uses lambda * (alpha + y) for x <= 0 (the exact value is y + lambda * alpha)
            lam = _scalar(x, SELU_LAMBDA)
            return [dy * xp.where(y > 0, lam, lam * (y + _scalar(x, SELU_ALPHA)))]
        pdf = xp.exp(-0.5 * x * x) / _scalar(x, np.sqrt(2 * np.pi))
        return [(dy * (0.5 * (1 + _erf(xp, x / _scalar(x, np.sqrt(2.0)))) + x * pdf)).astype(x.dtype, copy=False)]


# ---- Dropout ----------------------------------------------------------------------------------
@register
class Dropout(Operator):
    """Randomly zero inputs with probability ``p`` and scale the kept ones by 1/(1-p).

    Active in training (``mode='training'``) or always (``mode='always'``); ``axes`` share one
    mask value along the listed axes. As in MXNet the scaled mask is a hidden second output
    ('mask', kept for backward); only 'output' is visible."""
    op_name = 'Dropout'
    params = {'p': Param('float', 0.5, lower=0, upper=1), 'mode': Param('str', 'training', choices=('training', 'always')),
              'axes': Param('shape', ()), 'cudnn_off': Param('bool?', False)}
    outputs = ('output', 'mask')
    backward_uses = ('outputs',)

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards only (the hidden mask keeps data's shape, MXNet's has axes of 1)
        return forward_shape_infer(self, in_shapes, out_shapes)

    def _active(self, octx):
        return (octx.is_train or self.p.mode == 'always') and self.p.p > 0

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        if not self._active(octx):
            return [x.copy(), xp.broadcast_to(xp.ones((), dtype=x.dtype), x.shape)]
        shape = list(x.shape)
        for a in self.p.axes or ():
            shape[a] = 1
        keep = 1.0 - self.p.p
        u = octx.rng.random_sample(tuple(shape))
        # p=1 gives 0 * inf = NaN everywhere, as MXNet 1.9.1 does
        scale = 1.0 / keep if keep > 0 else float('inf')
        with np.errstate(invalid='ignore'):
            mask = xp.asarray(u < keep, dtype=x.dtype) * _scalar(x, scale)
        return [x * mask, xp.broadcast_to(mask, x.shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0] * outputs[1]]
