"""SGD over many dense host parameters at once.

``Updater`` hands a whole list of (index, weight, gradient) to :func:`sgd_update` when the optimizer
is a plain SGD and every array is a dense NDArray of one dtype on the host. The bookkeeping is
MXNet's, chunk by chunk of ``aggregate_num`` indices (update counts, then the learning rates and
weight decays of that chunk); the arithmetic is then applied per *run*: consecutive tensors whose
weights, gradients and momenta lie one after the other in single buffers (Module binds its
parameters and gradients that way, see ``executor.bind.pack_contiguous``; the momenta are moved
into one buffer here) and share their scalars are updated by one blocked pass over the buffers.
The per-element operations are those of the per-tensor kernel, so results are bit-identical; what
goes away is the per-tensor Python and numpy call overhead of small parameters."""
import numpy as np

from ..ndarray.ndarray import NDArray
from ..ops import optimizer_kernels as K
from .sgd import SGD, ccSGD

__all__ = ['sgd_applies', 'sgd_update']

_PLAIN_SGD = (SGD, ccSGD)      # not their subclasses, which may change the update


def sgd_applies(optimizer, weight):
    """Whether :func:`sgd_update` may stand for ``optimizer``'s aggregated update of weights
    like ``weight`` (a plain SGD, not keeping float32 master copies of it)."""
    if type(optimizer) not in _PLAIN_SGD:
        return False
    return not (optimizer.multi_precision and weight._data.dtype == np.float16)


def sgd_update(updater, indices, weights, grads, size):
    """The aggregated SGD update of ``weights`` (dense NDArrays on one host context with one
    dtype, their gradients dense NDArrays of their shapes and dtype: the caller checked): False,
    with nothing done, when some state is not a plain dense NDArray (the caller then takes the
    general path)."""
    states = updater.states
    moms = [states[i] for i in indices]
    for mom in moms:
        if mom is not None and type(mom) is not NDArray:
            return False
    opt = updater.optimizer
    lrs, wds = [], []
    for start in range(0, len(indices), size):
        chunk = indices[start:start + size]
        opt._update_count(chunk)  # pylint: disable=protected-access
        lrs += opt._get_lrs(chunk)  # pylint: disable=protected-access
        wds += opt._get_wds(chunk)  # pylint: disable=protected-access
    momentum = opt.momentum if opt.momentum > 0 else 0.0
    clip = opt.clip_gradient if opt.clip_gradient else -1.0
    rescale = opt.rescale_grad
    if momentum == 0.0 or any(m is None for m in moms):
        for weight, grad, mom, lr, wd in zip(weights, grads, moms, lrs, wds):
            _one(weight, grad, None if momentum == 0.0 else mom, lr, wd, momentum, rescale, clip)
        return True
    plan = updater.__dict__.get('_fused_plan')
    if plan is None or not plan.matches(weights, grads, moms):
        plan = updater._fused_plan = _Plan(weights, grads, moms)
    dtype = weights[0]._data.dtype
    for first, last, flats in plan.runs:
        k = first
        while k <= last:
            key = (lrs[k], wds[k])
            end = k
            while end < last and (lrs[end + 1], wds[end + 1]) == key:
                end += 1
            if end == k:
                _one(weights[k], grads[k], moms[k], key[0], key[1], momentum, rescale, clip)
            else:
                begin, stop = plan.offsets[k], plan.offsets[end] + plan.sizes[end]
                w, g, m = (flat[begin:stop] for flat in flats)
                K.mom_update_into(m, w, g, *K.scalars(dtype, momentum, key[0], key[1], rescale,
                                                       clip))
            k = end + 1
    return True


def _one(weight, grad, mom, lr, wd, momentum, rescale, clip):
    """One tensor, as SGD._update_impl updates it."""
    data = weight._data
    new = K.multi_sgd(np, data, grad._data, None if mom is None else mom._data, None, lr, wd,
                      momentum, rescale, clip, into_weight=True)
    if new is not data:
        data[...] = new


def _pointer(arr):
    return arr.__array_interface__['data'][0]


class _Plan(object):
    """Runs of consecutive tensors laid out one after the other (weights, gradients and, once
    moved here, momenta), for the arrays it was made for."""

    def __init__(self, weights, grads, moms):
        self.arrays = [(w._data, g._data, m._data) for w, g, m in zip(weights, grads, moms)]
        self.offsets, self.sizes, self.runs = [], [], []
        k, count = 0, len(weights)
        while k < count:
            end = k
            while end + 1 < count and _follows(self.arrays[end], self.arrays[end + 1]):
                end += 1
            self._add_run(k, end, moms)
            k = end + 1
        # the arrays after the momenta were moved, for ``matches``
        self.arrays = [(w._data, g._data, m._data) for w, g, m in zip(weights, grads, moms)]

    def _add_run(self, first, last, moms):
        w0, g0 = self.arrays[first][0], self.arrays[first][1]
        if first == last:
            self.offsets.append(0)
            self.sizes.append(w0.size)
            self.runs.append((first, last, None))
            return
        wbase, gbase = w0.base, g0.base
        wstart = (_pointer(w0) - _pointer(wbase)) // w0.itemsize
        gstart = (_pointer(g0) - _pointer(gbase)) // g0.itemsize
        sizes = [self.arrays[k][0].size for k in range(first, last + 1)]
        total = sum(sizes)
        mflat = np.empty(total, w0.dtype)
        start = 0
        for k, size in zip(range(first, last + 1), sizes):
            mom = moms[k]
            view = mflat[start:start + size]
            view[...] = mom._data.reshape(-1)
            mom._data = view.reshape(mom._data.shape)
            self.offsets.append(start)
            self.sizes.append(size)
            start += size
        flats = (wbase[wstart:wstart + total], gbase[gstart:gstart + total], mflat)
        # offsets count from the run's first element in all three buffers
        self.runs.append((first, last, flats))

    def matches(self, weights, grads, moms):
        """Whether the arrays are still the ones this plan was made for."""
        arrays = self.arrays
        if len(arrays) != len(weights):
            return False
        for (w, g, m), weight, grad, mom in zip(arrays, weights, grads, moms):
            if weight._data is not w or grad._data is not g or mom._data is not m:
                return False
        return True


def _follows(prev, nxt):
    """Whether tensor ``nxt`` starts where ``prev`` ends in the weight and gradient buffers (1-D
    bases), all of them C-contiguous, writeable, of one dtype and shape pairwise, with momenta of
    that dtype and shape."""
    if prev[0].size == 0 or nxt[0].size == 0:
        return False
    for a, b in ((prev[0], nxt[0]), (prev[1], nxt[1])):
        base = a.base
        if base is None or b.base is not base or base.ndim != 1 or \
                not base.flags.c_contiguous or not base.flags.writeable:
            return False
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            return False
        if _pointer(b) != _pointer(a) + a.nbytes:
            return False
    for w, g, m in (prev, nxt):
        if not (w.dtype == g.dtype == m.dtype and w.shape == g.shape == m.shape):
            return False
    return prev[0].dtype == nxt[0].dtype
