"""``mx.sym.contrib``: the operators registered as ``_contrib_<Name>``, under ``<Name>``."""
from ..ops.base import OPS as _OPS
from .register import make_function as _make_function
from .control_flow import foreach, while_loop, cond  # noqa: F401


def _install(namespace, prefix='_contrib_'):
    """Put every operator registered as ``<prefix><name>`` into ``namespace`` as ``<name>``
    (symbols are named after ``<name>``, as MXNet does)."""
    for name in list(_OPS):
        if name.startswith(prefix):
            namespace[name[len(prefix):]] = _make_function(name, name[len(prefix):])


_install(globals())


def rand_zipfian(true_classes, num_sampled, range_max):
    """Symbols drawing ``num_sampled`` classes in [0, range_max), with replacement, from the
    approximately Zipfian distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1).

    Returns
    -------
    (samples, expected_count_true, expected_count_sample)
        The int64 samples, and the float64 expected counts of ``true_classes`` and of the
        samples among ``num_sampled`` draws.
    """
    import math  # pylint: disable=import-outside-toplevel
    from .random import uniform  # pylint: disable=import-outside-toplevel
    from .symbol import Symbol  # pylint: disable=import-outside-toplevel
    if not isinstance(true_classes, Symbol):
        raise TypeError('rand_zipfian: true_classes must be a Symbol, got %s'
                        % type(true_classes).__name__)
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype='float64')
    sampled = (rand.exp() - 1).astype('int64') % range_max
    true_f = true_classes.astype('float64')
    count_true = ((true_f + 2.0) / (true_f + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype('float64')
    count_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, count_true, count_sampled
