"""Gradient communication overlapped with backward.

Backward finishes the parameters' gradients one after another, from the last layer to the first.
Instead of reducing every gradient in ``update`` once backward has ended, the executors report
each gradient the moment it is final (on every device of the executor group), and the kvstore
reduces it, in fusion buckets (``MXMOD_KVSTORE_BUCKET_MB``, by default an eighth of the gradients
between 256 KB and 4 MB) taken in backward order, on a
communication thread while backward goes on with the layers below (numpy, cupy and mpi4py release
the GIL). ``update`` then waits only for what is still in flight, and the next ``forward`` or
``backward`` waits for it too. With ``update_on_kvstore`` the buckets are pushed during backward
(the store updates its weights) and the new weights are pulled into the parameter arrays once
backward has ended: a step that reported its weight gradient early (FullyConnected, see
``OpContext.grad_ready``) still reads the weight.

When it overlaps (by default: fit's steps, and a user's loop once it has shown that it goes
straight from backward to update) is decided in overlap_policy.py.

The buckets and the calls are the same with or without overlap, so parameters are bit-identical
either way. Sparse gradients and ``grad_req='add'`` are reduced in ``update`` as before. With
``update_on_kvstore=False`` the reduced gradients land in buffers of their own and are copied into
the gradient arrays by ``update``.

An error on the communication thread is raised at the next ``update``, ``forward`` or
``backward``, naming the rank and the keys."""
import os
import threading
from collections import deque

import numpy as np

from ..base import MXNetError
from ..kvstore.bucketing import ENV_BUCKET_MB, bucket_bytes
from .overlap_policy import (ENV_OVERLAP, USER_STEPS, backward_may_overlap,  # noqa: F401
                             fit_step, in_fit_step, overlap_enabled, overlap_mode)

__all__ = ['ENV_OVERLAP', 'overlap_mode', 'overlap_enabled', 'fit_step', 'in_fit_step',
           'backward_may_overlap', 'USER_STEPS',
           'CommChannel', 'channel_for', 'plan_buckets',
           'GradientExchange']

MIN_AUTO_BUCKET = 256 << 10


class CommChannel(object):
    """One kvstore's communication thread: runs submitted jobs one at a time, in order.

    Every worker submits the same jobs in the same order (the bucket order is fixed by the
    graph), so the collectives of a distributed store match across workers.
    """

    def __init__(self, describe):
        self._describe = describe
        self._jobs = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._error = None
        self._thread = None

    def submit(self, job, label):
        """Queue ``job()`` (``label`` names it in errors)."""
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name='mxmod-comm', daemon=True)
                self._thread.start()
            self._jobs.append((job, label))
            self._cond.notify_all()

    def _loop(self):
        while True:
            with self._cond:
                while not self._jobs:
                    self._cond.wait()
                job, label = self._jobs.popleft()
                self._busy = True
                failed = self._error is not None
            try:
                if not failed:
                    job()
            except BaseException as err:  # pylint: disable=broad-except
                with self._cond:
                    self._error = (err, label)
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def drain(self):
        """Wait until every submitted job has run; raise the first job error, if any."""
        with self._cond:
            while self._jobs or self._busy:
                self._cond.wait()
            error, self._error = self._error, None
        if error is not None:
            err, label = error
            raise MXNetError('%s: reducing the gradients of %s on the communication thread failed: '
                             '%s: %s' % (self._describe(), label, type(err).__name__, err)) from err

    @property
    def idle(self):
        """True when nothing is queued or running."""
        with self._cond:
            return not self._jobs and not self._busy


_CHANNELS = {}
_CHANNELS_LOCK = threading.Lock()


def channel_for(kvstore):
    """The :class:`CommChannel` of ``kvstore`` (one per store, shared by the modules using it)."""
    with _CHANNELS_LOCK:
        channel = getattr(kvstore, '_mxmod_comm_channel', None)
        if channel is None:
            channel = CommChannel(lambda: _describe(kvstore))
            kvstore._mxmod_comm_channel = channel
        return channel


def _describe(kvstore):
    rank = getattr(kvstore, 'rank', 0)
    return 'kvstore %s, worker rank %d' % (kvstore.type, rank)


def exchange_bucket_bytes(total):
    """Bucket size for a model with ``total`` bytes of dense gradients:
    ``MXMOD_KVSTORE_BUCKET_MB`` when set, else an eighth of the gradients within [256 KB, 4 MB]
    (small models still get several buckets to overlap; large ones few calls)."""
    if os.environ.get(ENV_BUCKET_MB, '').strip():
        return bucket_bytes()
    return int(min(max(total // 8, MIN_AUTO_BUCKET), bucket_bytes()))


def plan_buckets(order, nbytes, limit, tail=None):
    """Group names taken in ``order`` into buckets of at most ``limit`` bytes (a name larger than
    that is a bucket of its own); a small name (at most ``limit / 16`` bytes, e.g. a bias) may
    join a full bucket, up to ``limit / 8`` bytes over it, rather than start one.

    The names at the end of ``order`` (backward finishes them last, so their communication is
    what remains after backward) go into buckets that shrink towards the end: the last holds at
    most ``tail`` bytes (default a sixteenth of ``limit``), the one before twice that, and so on
    up to ``limit``. The gradients of the first layers, small but finished one after another
    while backward computes the large first activations, then travel as they come, and what
    is left after backward is the last few.

    Parameters
    ----------
    order : list of str
    nbytes : dict of str to int
    limit : int
    tail : int, optional

    Returns
    -------
    list of list of str
    """
    tail = limit // 16 if tail is None else tail
    cut, ending, cap = len(order), [], tail
    while cut > 0 and cap < limit:
        start, size = cut - 1, nbytes[order[cut - 1]]      # a bucket takes at least one name
        while start > 0 and size + nbytes[order[start - 1]] <= cap:
            start -= 1
            size += nbytes[order[start]]
        ending.insert(0, list(order[start:cut]))
        cut, cap = start, max(2 * cap, 1)
    buckets, current, size, extra = [], [], 0, 0
    for name in order[:cut]:
        if current and size + nbytes[name] > limit:
            if nbytes[name] <= limit // 16 and extra + nbytes[name] <= limit // 8:
                # a small gradient (a bias) rides along with the large one before it instead of
                # paying a collective of its own: it is released at the same step
                extra += nbytes[name]
                current.append(name)
                size += nbytes[name]
                continue
            buckets.append(current)
            current, size, extra = [], 0, 0
        current.append(name)
        size += nbytes[name]
    if current:
        buckets.append(current)
    return buckets + ending


def _stype(arr):
    return getattr(arr, 'stype', 'default')


class GradientExchange(object):
    """How one executor group's dense gradients go through a kvstore: in buckets taken in
    backward order, on the communication thread while backward runs (overlap), or in ``update``.

    Parameters
    ----------
    group : DataParallelExecutorGroup
    kvstore : KVStoreBase
    into_weights : bool
        ``update_on_kvstore``: the store applies the optimizer and the new weights are pulled
        into the parameter arrays; otherwise the summed gradients come back.
    grad_req : dict of str to str
    """

    def __init__(self, group, kvstore, into_weights, grad_req):
        self.group = group
        self.kvstore = kvstore
        self.into_weights = into_weights
        self.channel = channel_for(kvstore)
        index = {}
        for i, (name, args, grads) in enumerate(zip(group.param_names, group.param_arrays,
                                                    group._grad_arrays)):
            if grads[0] is not None and _stype(grads[0]) == 'default' \
                    and _stype(args[0]) == 'default':
                index[name] = i
        self._index = index
        order, late = group.execs[0].gradient_release_order()
        order = [n for n in order if n in index]
        order += [n for n in group.param_names if n in index and n not in order]
        nbytes = {n: group._grad_arrays[index[n]][0].size
                  * np.dtype(group._grad_arrays[index[n]][0].dtype).itemsize for n in order}
        self.buckets = plan_buckets(order, nbytes, exchange_bucket_bytes(sum(nbytes.values())))
        self._bucket_of = {n: b for b, names in enumerate(self.buckets) for n in names}
        self._late = set(late) & set(order)
        self.overlap = overlap_enabled() and all(grad_req.get(n, 'write') == 'write'
                                                 for n in order)
        self._lock = threading.Lock()
        self._hooked = None
        self._bufs = {}
        self._armed = False
        self._left = self._next = self._ended = None
        self.submitted = False
        self.defer_pull = False     # the new weights reach the parameters in update only

    # ---- the buckets' kvstore calls ------------------------------------------
    def _values(self, names, private):
        grads = [self.group._grad_arrays[self._index[n]] for n in names]
        if self.into_weights:
            return grads, [self.group.param_arrays[self._index[n]] for n in names]
        if not private:
            return grads, None
        outs = []
        for name, grad_list in zip(names, grads):
            bufs = self._bufs.get(name)
            if bufs is None or bufs[0].shape != grad_list[0].shape:
                bufs = self._bufs[name] = [g.copy() for g in grad_list]
            outs.append(bufs)
        return grads, outs

    def _reduce(self, bucket, private=False):
        names = self.buckets[bucket]
        grads, outs = self._values(names, private)
        if private and self.into_weights:
            # during backward: the step that reported a weight's gradient early may still read
            # the weight (a FullyConnected's data gradient), so the new weights are pulled only
            # once backward has ended (push then pull is what pushpull does)
            self.kvstore.push(list(names), grads)
        else:
            self.kvstore.pushpull(list(names), grads, out=outs)

    def _pull_weights(self):
        """After backward: copy the store's new weights of every bucket into the parameters."""
        names = [n for b in self.buckets for n in b]
        self.kvstore.pull(names, out=[self.group.param_arrays[self._index[n]] for n in names])

    def _submit_ready(self):
        """Queue the leading buckets whose gradients are final on every device (lock held)."""
        while self._next < len(self.buckets) and self._left[self._next] == 0:
            bucket = self._next
            self._next += 1
            self.channel.submit(lambda b=bucket: self._reduce(b, True), self.buckets[bucket])

    # ---- backward ------------------------------------------------------------------
    def _install_hooks(self):
        execs = list(self.group.execs)
        if self._hooked != [id(e) for e in execs]:
            for dev, exe in enumerate(execs):
                exe.set_grad_ready_hook(lambda names, d=dev: self._on_ready(d, names))
            self._hooked = [id(e) for e in execs]

    def begin_backward(self):
        """Before a backward pass: wait for the previous pass's communication, arm the hooks."""
        self.channel.drain()
        if not self.overlap or not self.buckets:
            return
        self._install_hooks()
        ndev = len(self.group.execs)
        with self._lock:
            # a bucket holding a gradient backward does not report (final only when backward
            # ends) waits for the end of backward (one more count, dropped by _release_all)
            self._left = [ndev * len([n for n in b if n not in self._late])
                          + (1 if any(n in self._late for n in b) else 0) for b in self.buckets]
            self._next = 0
            self._ended = 0
            self._armed = True
            self._submit_ready()
        self.submitted = True

    def _on_ready(self, dev, names):  # pylint: disable=unused-argument
        with self._lock:
            if not self._armed:
                return
            if names is None:
                self._ended += 1
                if self._ended == len(self.group.execs):
                    self._release_all()
                return
            for name in names:
                bucket = self._bucket_of.get(name)
                if bucket is not None and name not in self._late:
                    self._left[bucket] -= 1
            self._submit_ready()

    def _release_all(self):
        self._left = [0] * len(self.buckets)
        self._submit_ready()
        self._armed = False
        if self.into_weights and not self.defer_pull:
            self.channel.submit(self._pull_weights, [n for b in self.buckets for n in b])

    def cancel(self):
        """A backward that does not overlap follows one that did without an update between:
        what that one started is dropped (its reductions are not the ones update needs)."""
        if self.submitted:
            self.channel.drain()
            self.submitted = False

    def end_backward(self):
        """After a backward pass: queue whatever backward did not report (lock-safe)."""
        if self._armed:
            with self._lock:
                if self._armed:
                    self._release_all()

    # ---- update ----------------------------------------------------------------------
    def reduce(self):
        """In ``update``: finish the dense reduction (wait for the overlapped buckets, or run
        them now); the summed gradients are then in the gradient arrays (or the new weights in
        the parameter arrays)."""
        if self.submitted:
            self.channel.drain()
            self.submitted = False
            if self.into_weights and self.defer_pull:
                self._pull_weights()
            if not self.into_weights:
                for name, bufs in self._bufs.items():
                    for grad, buf in zip(self.group._grad_arrays[self._index[name]], bufs):
                        buf.copyto(grad)
            return
        self.channel.drain()
        for bucket in range(len(self.buckets)):
            self._reduce(bucket)

    @property
    def names(self):
        """The dense parameters this exchange reduces."""
        return set(self._index)
