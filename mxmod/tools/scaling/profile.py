"""Profiling one process's training step for the scaling model: forward, backward and update
times, and when backward finishes each parameter's gradient (with its size).

A profile is a plain dict (saved as JSON), so it can be taken on one machine and fed to
:mod:`mxmod.tools.scaling.model` anywhere."""
import json
import time

import numpy as np

from ... import threads as _threads
from ...base import MXNetError

__all__ = ['profile_module', 'save_profile', 'load_profile']

_KEYS = ('forward_s', 'backward_s', 'update_s', 'params')


def _median(values):
    return float(np.median(values)) if values else 0.0


def profile_module(mod, data_batch, steps=5, warmup=2, name='model', threads=None):
    """Time ``steps`` training steps of a bound, initialized Module (one context, no kvstore).

    Profile the step as one rank will run it: the model scales nothing by thread count, so a
    profile taken on two threads predicts ranks of one thread too fast. ``threads`` fixes the
    thread count for the profiled steps (``mxmod.launch`` gives each of N ranks on a host
    ``cores // N``); None keeps the current setting.

    Parameters
    ----------
    mod : Module
        With ``init_optimizer`` done and a single context.
    data_batch : DataBatch
    steps, warmup : int
    name : str
        Recorded in the profile.
    threads : int, optional
        Threads (BLAS and compiled kernels) for the profiled steps; recorded in the profile.

    Returns
    -------
    dict
        ``forward_s``, ``backward_s``, ``update_s`` (medians), ``batch_size`` and ``params``: one
        ``{'name', 'bytes', 'ready_s', 'sparse'}`` per parameter in the order backward finishes
        them, ``ready_s`` counted from the start of backward.
    """
    if not (mod.binded and mod.params_initialized and mod.optimizer_initialized):
        raise MXNetError('profile_module: bind the module, init_params and init_optimizer first')
    group = mod._exec_group
    if len(group.execs) != 1:
        raise MXNetError('profile_module: profile on one context (got %d)' % len(group.execs))
    exe = group.execs[0]
    order, late = exe.gradient_release_order()
    sizes = {}
    sparse = {}
    for pname, grads in zip(group.param_names, group._grad_arrays):
        if grads[0] is not None:
            sizes[pname] = int(grads[0].size) * np.dtype(grads[0].dtype).itemsize
            sparse[pname] = getattr(grads[0], 'stype', 'default') != 'default'
    ready, clock = {}, {}

    def hook(names):
        now = time.perf_counter() - clock['backward']
        for pname in names or ():
            ready.setdefault(pname, []).append(now)
    times = {'forward_s': [], 'backward_s': [], 'update_s': []}
    restore = _fix_threads(threads)
    exe.set_grad_ready_hook(hook)
    try:
        for step in range(warmup + steps):
            tic = time.perf_counter()
            mod.forward(data_batch, is_train=True)
            clock['backward'] = time.perf_counter()
            mod.backward()
            tac = time.perf_counter()
            mod.update()
            toc = time.perf_counter()
            if step == warmup - 1:
                ready.clear()
            if step >= warmup:
                times['forward_s'].append(clock['backward'] - tic)
                times['backward_s'].append(tac - clock['backward'])
                times['update_s'].append(toc - tac)
    finally:
        exe.set_grad_ready_hook(None)
        restore()
    result = {k: _median(v) for k, v in times.items()}
    end = result['backward_s']
    result['params'] = [{'name': p, 'bytes': sizes[p], 'sparse': sparse[p],
                         'ready_s': end if p in late else min(_median(ready.get(p, [])), end)}
                        for p in order if p in sizes]
    result['batch_size'] = int(group.batch_size)
    result['name'] = name
    result['threads'] = threads if threads is not None else _threads.get_num_threads()
    return result


def _fix_threads(threads):
    """Use ``threads`` threads until the returned function is called (None: no change)."""
    if threads is None:
        return lambda: None
    from threadpoolctl import ThreadpoolController  # pylint: disable=import-outside-toplevel
    gov = _threads.GOVERNOR
    mode, before = gov.mode, gov.threads
    libraries = [(lib, lib.num_threads) for lib in ThreadpoolController().lib_controllers]
    _threads.set_num_threads(threads)

    def restore():
        if mode == 'auto':
            _threads.set_num_threads(None)
        elif mode == 'fixed':
            _threads.set_num_threads(before)
        else:   # 'env': the libraries' own settings, as they were
            gov.mode, gov.threads = mode, before
            for lib, count in libraries:
                lib.set_num_threads(count)
    return restore


def save_profile(profile, path):
    """Write a profile as JSON."""
    with open(path, 'w') as out:
        json.dump(profile, out, indent=1)


def load_profile(path):
    """Read a profile written by :func:`save_profile`, checking its fields."""
    try:
        with open(path) as handle:
            profile = json.load(handle)
    except (OSError, ValueError) as err:
        raise MXNetError('cannot read the scaling profile %r: %s' % (path, err)) from None
    missing = [k for k in _KEYS if k not in profile]
    if missing or not isinstance(profile.get('params'), list):
        raise MXNetError('%r is not a scaling profile: missing %s' % (path, missing or ['params']))
    return profile
