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
import operator

import numpy as np

from ..argcheck import as_number
from ..ndarray.ndarray import NDArray
from ..ops import optimizer_kernels as K
from .sgd import SGD, ccSGD

__all__ = ['sgd_applies', 'sgd_update', 'Repeat']

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
    if momentum == 0.0 or any(m is None for m in moms):
        clip = opt.clip_gradient if opt.clip_gradient else -1.0
        for weight, grad, mom, lr, wd in zip(weights, grads, moms, lrs, wds):
            _one(weight, grad, None if momentum == 0.0 else mom, lr, wd, momentum,
                 opt.rescale_grad, clip)
        return True
    plan = updater.__dict__.get('_fused_plan')
    if plan is None or not plan.matches(weights, grads, moms):
        plan = updater._fused_plan = _Plan(weights, grads, moms)
    _apply(plan, weights, grads, moms, lrs, wds, opt)
    return True


def _apply(plan, weights, grads, moms, lrs, wds, opt):
    """The momentum update of every tensor of ``plan``: each stretch of consecutive tensors of
    one run that share their learning rate and weight decay by one pass over the buffers."""
    momentum = opt.momentum
    clip = opt.clip_gradient if opt.clip_gradient else -1.0
    rescale = opt.rescale_grad
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


_DATA = operator.attrgetter('_data')


def _ids(arrays):
    """The identities of the numpy arrays behind NDArrays ``arrays``, as a tuple."""
    return tuple(map(id, map(_DATA, arrays)))


class Repeat(object):
    """The fused momentum update of one ``Updater`` call, made ready to be repeated.

    ``Module.update`` hands its updater the same (indices, gradients, weights) tuples on every
    step. When the first call went through :func:`sgd_update`'s fused passes, this object keeps
    what that call worked out: the checks of the arrays, the states, the plan of runs and the
    learning-rate and weight-decay multipliers. A later call with those very tuples is checked
    against it (:meth:`holds`: the same optimizer, state and multiplier dictionaries, states,
    arrays behind every NDArray, and optimizer settings the fused path needs) and then only
    counts the updates, works out the rates and runs the passes (:meth:`run`), exactly as the
    general path would; anything else takes the general path."""

    def __init__(self, updater, index, grad, weight, device_id):
        opt = updater.optimizer
        self.updater, self.opt, self.device_id = updater, opt, device_id
        self.index, self.grad, self.weight = index, grad, weight
        self.states, self.synced = updater.states, updater.states_synced
        self.plan = updater.__dict__.get('_fused_plan')
        self.moms = tuple(map(self.states.get, index))
        # the arrays are held, so that their identities stay theirs
        self.arrays = weight + grad + self.moms
        self.held = tuple(map(_DATA, self.arrays))
        self.ids = _ids(self.arrays)
        self.mom_ids = tuple(map(id, self.moms))
        self.settings = (opt.multi_precision, opt.aggregate_num)
        self.mults = (dict(opt.lr_mult), dict(opt.wd_mult), dict(opt.idx2name))
        size = opt.aggregate_num
        self.chunks = []
        lr_factors, wd_factors = [], []
        for start in range(0, len(index), size):
            chunk = index[start:start + size]
            lr_f = opt._mult_factors(chunk, opt.lr_mult, 'lr_mult')  # pylint: disable=protected-access
            wd_f = opt._mult_factors(chunk, opt.wd_mult, 'wd_mult')  # pylint: disable=protected-access
            self.chunks.append((chunk, lr_f, wd_f))
            lr_factors += lr_f
            wd_factors += wd_f
        # when every tensor's learning-rate multipliers are equal (no multiplier counting as
        # 1) and the weight decay times each multiplier gives one number (as with wd 0), all
        # tensors get one learning rate and one weight decay, and each run of the plan is one
        # stretch: per run, its first tensor (whose rates _apply would use), and its buffers
        self.uniform = None
        self.wd_values = tuple({1.0 if f is None else f for f in wd_factors})
        lr_values = {1.0 if f is None else f for f in lr_factors}
        if len(lr_values) == 1 and all(v == v for v in lr_values):
            self.uniform = [(first, lr_factors[first], wd_factors[first], flats)
                            for first, _, flats in self.plan.runs]

    @classmethod
    def make(cls, updater, index, grad, weight, device_id):
        """A Repeat of the call just made, or None when that call did not take the fused
        passes or its arguments are not tuples the caller will hand again."""
        if not (type(index) is tuple and type(grad) is tuple and type(weight) is tuple):
            return None
        plan = updater.__dict__.get('_fused_plan')
        opt = updater.optimizer
        if plan is None or not index or opt.param_dict or not opt.momentum > 0 or \
                any(type(i) is bytes for i in index):
            return None
        moms = [updater.states.get(i) for i in index]
        if any(type(m) is not NDArray for m in moms) or not plan.matches(weight, grad, moms):
            return None
        return cls(updater, index, grad, weight, device_id)

    def holds(self):
        """Whether the call this was made for would take the fused passes again, with the same
        arrays, states, plan and multipliers."""
        updater, opt = self.updater, self.opt
        states = self.states
        return (updater.optimizer is opt and updater.states is states and
                updater.states_synced is self.synced and updater.aggregate_updates and
                updater.__dict__.get('_fused_plan') is self.plan and opt.momentum > 0 and
                not opt.param_dict and (opt.multi_precision, opt.aggregate_num) == self.settings
                and (opt.lr_mult, opt.wd_mult, opt.idx2name) == self.mults and
                tuple(map(id, map(states.get, self.index))) == self.mom_ids and
                _ids(self.arrays) == self.ids)

    def run(self):
        """The update: counts, rates and passes, as :func:`sgd_update` makes them (each chunk's
        updates counted, then the scheduler asked for its rate)."""
        opt = self.opt
        opt._set_current_context(self.device_id)  # pylint: disable=protected-access
        rates = []
        for chunk, _, _ in self.chunks:
            opt._update_count(chunk)  # pylint: disable=protected-access
            rates.append(as_number(opt.learning_rate, 'SGD: lr'))
        lr, wd = rates[0], as_number(opt.wd, 'SGD: wd')
        # one rate and one decay for all (not NaN, which _apply's grouping would not join)
        if self.uniform is not None and lr == lr and rates.count(lr) == len(rates):
            decays = {wd * f for f in self.wd_values}
            if len(decays) == 1 and all(d == d for d in decays):
                self._run_uniform(lr, wd)
                return
        lrs = [rate if f is None else rate * f
               for rate, (_, lr_factors, _) in zip(rates, self.chunks) for f in lr_factors]
        wds = [wd if f is None else wd * f for _, _, wd_factors in self.chunks
               for f in wd_factors]
        _apply(self.plan, self.weight, self.grad, self.moms, lrs, wds, opt)

    def _run_uniform(self, lr, wd):
        """_apply for one learning rate and weight decay: each run by one pass, or as one
        tensor."""
        opt = self.opt
        momentum, rescale = opt.momentum, opt.rescale_grad
        clip = opt.clip_gradient if opt.clip_gradient else -1.0
        dtype = self.held[0].dtype
        for k, lr_f, wd_f, flats in self.uniform:
            lr_k = lr if lr_f is None else lr * lr_f
            wd_k = wd if wd_f is None else wd * wd_f
            if flats is None:
                _one(self.weight[k], self.grad[k], self.moms[k], lr_k, wd_k, momentum, rescale,
                     clip)
            else:
                K.mom_update_into(flats[2], flats[0], flats[1],
                                  *K.scalars(dtype, momentum, lr_k, wd_k, rescale, clip))


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
