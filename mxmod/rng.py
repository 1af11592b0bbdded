"""Random number streams, one per device, reseeded by ``mx.random.seed``."""
import numpy as np

from .context import xp_of

_STREAMS = {}
_SEED = [None]


def seed(seed_state, ctx='all'):
    """Seed the random streams of every device (``ctx='all'``) or of one context."""
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError('seed_state must be an int, got %r' % (seed_state,))
    if ctx == 'all':
        _STREAMS.clear()
        _SEED[0] = int(seed_state)
    else:
        _STREAMS[ctx] = _make(ctx, int(seed_state))


def _make(ctx, seed_value):
    xp = xp_of(ctx)
    if xp is np:
        return np.random.RandomState(seed_value)
    with xp.cuda.Device(ctx.device_id):
        return xp.random.RandomState(seed_value)


def generator(ctx):
    """The RandomState of a context (numpy's on CPU, cupy's on GPU)."""
    stream = _STREAMS.get(ctx)
    if stream is None:
        base = _SEED[0]
        if base is None:
            base = int(np.random.randint(0, 2 ** 31 - 1))
        stream = _STREAMS[ctx] = _make(ctx, (base + 7919 * ctx.device_typeid + ctx.device_id) % (2 ** 32))
    return stream
