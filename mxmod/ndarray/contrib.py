"""``mx.nd.contrib``: the operators registered as ``_contrib_<Name>``, under ``<Name>``, and
MXNet's Python-level contrib functions (isinf, isfinite, isnan, rand_zipfian)."""
import math

import numpy as np

from ..context import as_context
from ..ops.base import OPS as _OPS
from .register import make_function as _make_function
from .control_flow import foreach, while_loop, cond  # noqa: F401


def _install(namespace, prefix='_contrib_'):
    """Put every operator registered as ``<prefix><name>`` into ``namespace`` as ``<name>``."""
    for name in list(_OPS):
        if name.startswith(prefix):
            namespace[name[len(prefix):]] = _make_function(name)


_install(globals())


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0 (in ``data``'s dtype)."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where ``data`` is neither infinite nor NaN, else 0."""
    from .dispatch import FUNCTIONS  # pylint: disable=import-outside-toplevel
    return FUNCTIONS['logical_and'](data.abs() != np.inf, data == data)  # pylint: disable=comparison-with-itself


def isnan(data):
    """1 where ``data`` is NaN, else 0."""
    return data != data  # pylint: disable=comparison-with-itself


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Sample ``num_sampled`` classes in [0, range_max) from the approximately Zipfian
    distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1), with replacement.

    Returns
    -------
    (samples, expected_count_true, expected_count_sample)
        The int64 samples, and the float64 expected counts of ``true_classes`` and of the
        samples among ``num_sampled`` draws.
    """
    from .random import uniform  # pylint: disable=import-outside-toplevel
    ctx = as_context(ctx)
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype='float64', ctx=ctx)
    sampled = (rand.exp() - 1).astype('int64') % range_max
    true_cls = true_classes.as_in_context(ctx).astype('float64')
    count_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype('float64')
    count_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, count_true, count_sampled
