"""``MXMOD_CHECK_NUMERICS=1``: stop at the first operator that produces NaN or Inf.

When the variable is set as an executor is bound, the executor runs through its monitor path
with a checker that looks at every input before the forward pass, every operator output in
forward order and every gradient an operator's backward produces, and raises
:class:`NumericsError` naming the first operator (node name and type), the pass, the output and
how many values are NaN or Inf. A Monitor the user installs still sees what it would see
without the check. When the variable is unset the executor is bound exactly as before: the check
costs nothing."""
import os

import numpy as np

from ..base import MXNetError

__all__ = ['NumericsError', 'enabled', 'install', 'chain']

ENV = 'MXMOD_CHECK_NUMERICS'


class NumericsError(MXNetError, FloatingPointError):
    """An operator produced NaN or Inf (raised with MXMOD_CHECK_NUMERICS=1)."""


def enabled():
    """Whether MXMOD_CHECK_NUMERICS asks for the check."""
    return os.environ.get(ENV, '').strip().lower() not in ('', '0', 'false', 'no', 'off')


def _labels(exe):
    """Monitor label -> (kind, description) for every output and backward output."""
    table = {}
    for name in list(exe._plan.arg_names) + list(exe._plan.aux_names):  # pylint: disable=protected-access
        table[name] = ('input', 'the input %r (before any operator ran)' % name)
    for step in exe._plan.steps:  # pylint: disable=protected-access
        op = step.op
        what = 'operator %r (%s)' % (step.name, op.op_name)
        for out in op.list_outputs()[:op.num_visible_outputs()]:
            table['%s_%s' % (step.name, out)] = (
                'forward', '%s produced {bad} in its output %r during the forward pass'
                % (what, out))
        args = op.list_arguments()
        for i, arg in enumerate(args):
            label = '%s_backward_output' % step.name if len(args) == 1 else \
                '%s_backward_output%d' % (step.name, i)
            table[label] = ('backward', 'the backward pass of %s produced {bad} in the gradient '
                                        'of its input %r' % (what, arg))
    return table


class _Checker(object):
    """The monitor callback of a checked executor (chaining to a user's monitor)."""

    def __init__(self, exe, user=None, user_all=False):
        self.table = _labels(exe)
        self.user, self.user_all = user, user_all

    def __call__(self, label, arr):
        data = arr._data  # pylint: disable=protected-access
        if np.dtype(data.dtype).kind in 'fc':
            xp = arr.context.xp
            finite = xp.isfinite(data)
            if not bool(finite.all()):
                nans = int(xp.isnan(data).sum())
                bad = 'NaN' if nans else 'Inf'
                kind, text = self.table.get(label, ('other', 'the value %r' % label))
                counts = '%d NaN and %d Inf of %d values' % (nans, int(data.size) - int(
                    finite.sum()) - nans, int(data.size))
                if kind == 'input':
                    raise NumericsError('%s: %s holds %s (%s)' % (ENV, text, bad, counts))
                raise NumericsError('%s: %s (%s); it is the first value to go non-finite'
                                    % (ENV, text.format(bad=bad), counts))
        if self.user is not None and (self.user_all or self.table.get(
                label, ('other',))[0] in ('forward', 'backward')):
            self.user(label, arr)


def install(exe):
    """Route ``exe`` through the checker when MXMOD_CHECK_NUMERICS is set (at bind time)."""
    if enabled():
        exe._monitor = _Checker(exe)  # pylint: disable=protected-access
        exe._monitor_all = True  # pylint: disable=protected-access


def chain(exe, callback, monitor_all):
    """Install a user's monitor callback; under the check, behind the checker.

    Returns
    -------
    (callable, bool)
        What the executor's monitor and monitor_all become.
    """
    if isinstance(exe._monitor, _Checker):  # pylint: disable=protected-access
        return _Checker(exe, callback, monitor_all), True
    return callback, monitor_all
