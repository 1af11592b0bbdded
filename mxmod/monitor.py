"""Monitor: collect statistics of operator outputs, weights and gradients while training."""
import logging
import re
from math import sqrt

import numpy as np

from .context import device_scope
from .ndarray import NDArray, from_xp

__all__ = ['Monitor']


def _default_stat(x):
    """||x|| / sqrt(x.size), as a one-element NDArray on x's device."""
    xp = x.context.xp
    data = x._data  # pylint: disable=protected-access
    dtype = data.dtype if data.dtype.kind == 'f' else np.dtype(np.float32)
    norm = xp.sqrt(xp.sum(xp.square(data.astype(np.float64)))).astype(dtype)
    value = norm / dtype.type(sqrt(data.size))
    return from_xp(xp.asarray(value, dtype=dtype).reshape((1,)), x.context)


def _format_stats(values):
    """MXNet's text form of a stat: scalars as numbers, arrays as printed arrays, tab-ended."""
    if isinstance(values, NDArray):
        values = [values]
    if not isinstance(values, list):
        raise TypeError('Monitor stat_func must return an NDArray or a list of NDArrays, got %s'
                        % type(values).__name__)
    text = ''
    for value in values:
        if not isinstance(value, NDArray):
            raise TypeError('Monitor stat_func must return NDArrays, got %s'
                            % type(value).__name__)
        if value.shape == (1,):
            text += str(value.asscalar()) + '\t'
        else:
            text += str(value.asnumpy()) + '\t'
    return text


class Monitor(object):
    """Monitor inputs, outputs, weights and gradients of executors.

    Parameters
    ----------
    interval : int
        Collect on every ``interval``-th batch (counted by ``tic``).
    stat_func : callable(NDArray) -> NDArray, optional
        Statistic of each tensor; defaults to ``norm(x) / sqrt(x.size)``.
    pattern : str, default '.*'
        Regular expression (``re.match``) selecting tensor names; e.g. ``'.*weight|.*output'``,
        or ``'.*backward.*'`` for gradients.
    sort : bool, default False
        Sort the results by name.
    monitor_all : bool, default False
        Monitor operator inputs as well as outputs.
    """

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        self.stat_func = stat_func if stat_func is not None else _default_stat
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """Executor callback: record the stat of one named tensor when collecting."""
            if isinstance(name, bytes):
                name = name.decode('utf-8')
            if not self.activated or not self.re_prog.match(name):
                return
            if not isinstance(array, NDArray):
                raise TypeError('Monitor callback for %s expected an NDArray, got %s'
                                % (name, type(array).__name__))
            self.queue.append((self.step, name, self._stat(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Install the monitor callback on an executor (several executors may be installed).

        Parameters
        ----------
        exe : Executor
        """
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _sync(self):
        for exe in self.exes:
            for array in list(exe.arg_arrays) + list(exe.aux_arrays):
                array.wait_to_read()

    def tic(self):
        """Start collecting for this batch if it is an ``interval``-th one; call before forward."""
        if self.step % self.interval == 0:
            self._sync()
            self.queue = []
            self.activated = True
        self.step += 1

    def _stat(self, array):
        with device_scope(array.context):   # the stat runs on the array's own GPU
            return self.stat_func(array)

    def toc(self):
        """Stop collecting and return the batch's results; call after forward/backward.

        Adds the stats of every argument and auxiliary array of the installed executors whose
        name matches ``pattern``.

        Returns
        -------
        list of (int, str, str)
            ``(step, name, stat text)``; empty when this batch was not collected.
        """
        if not self.activated:
            return []
        self._sync()
        for exe in self.exes:
            symbol = exe._symbol  # pylint: disable=protected-access
            named = (list(zip(symbol.list_arguments(), exe.arg_arrays))
                     + list(zip(symbol.list_auxiliary_states(), exe.aux_arrays)))
            for name, array in named:
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self._stat(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = [(step, name, _format_stats(values)) for step, name, values in self.queue]
        self.queue = []
        return res

    def toc_print(self):
        """Stop collecting and log the results (``Batch: <step> <name> <stat>``)."""
        for step, name, text in self.toc():
            logging.info('Batch: {:7d} {:30s} {:s}'.format(step, name, text))
