"""``mx.random``: seeding of the per-device random streams, and the samplers of ``mx.nd.random``."""
from .base import integer_types
from .context import Context
from . import rng as _rng
from .ndarray.random import *  # noqa: F401,F403  (uniform, normal, ... as mx.random.uniform ...)
from .ndarray.random import __all__ as _SAMPLERS

__all__ = ['seed'] + list(_SAMPLERS)


def seed(seed_state, ctx='all'):
    """Seed the random number generators.

    After ``seed(s)`` the same sequence of random operations gives the same numbers again
    (dropout masks, initializers, ``mx.nd.random.*``).

    Parameters
    ----------
    seed_state : int
        The seed.
    ctx : Context or 'all', default 'all'
        ``'all'`` seeds every device, each from ``seed_state`` and its device id (so devices draw
        different numbers); a Context seeds only that device, from ``seed_state`` alone.
    """
    if not isinstance(seed_state, integer_types):
        raise ValueError('seed_state must be int, got %r' % (seed_state,))
    if isinstance(ctx, str) and ctx == 'all':
        _rng.seed(int(seed_state))
    else:
        _rng.seed(int(seed_state), Context(ctx))
