"""Random number streams, one per device, reseeded by ``mx.random.seed``."""
import numpy as np

from .context import xp_of

_STREAMS = {}
_INITIAL = {}     # per context, the state a stream was created with (see snapshot)
# MXNet seeds its generators with 0 at start-up: a program that never calls mx.random.seed draws
# the same numbers on every run (and on every worker of a distributed job)
_SEED = [0]


def seed(seed_state, ctx='all'):
    """Seed the random streams of every device (``ctx='all'``) or of one context."""
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError('seed_state must be an int, got %r' % (seed_state,))
    if ctx == 'all':
        _STREAMS.clear()
        _INITIAL.clear()
        _SEED[0] = int(seed_state)
    else:
        _STREAMS[ctx] = _make(ctx, int(seed_state))
        _INITIAL.pop(ctx, None)


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
        stream = _STREAMS[ctx] = _make(ctx, (base + 7919 * ctx.device_typeid + ctx.device_id) % (2 ** 32))
        if hasattr(stream, 'get_state'):
            _INITIAL[ctx] = stream.get_state()
    return stream


_FRESH = object()


def snapshot(ctxs):
    """The states of the random streams of ``ctxs``, for :func:`restore`. A stream not created
    yet is recorded as such (creating it here would draw its seed from numpy's global stream);
    restoring that record puts the stream back to the state it was created with. Streams
    without a readable state (cupy's) are left out."""
    states = {}
    for ctx in ctxs:
        stream = _STREAMS.get(ctx)
        if stream is None:
            states[ctx] = _FRESH
        elif hasattr(stream, 'get_state'):
            states[ctx] = stream.get_state()
    return states


def restore(states):
    """Put back stream states taken by :func:`snapshot`."""
    for ctx, state in states.items():
        if state is _FRESH:
            initial = _INITIAL.get(ctx)
            if ctx in _STREAMS and initial is not None:
                _STREAMS[ctx].set_state(initial)
        elif ctx in _STREAMS:       # (a stream reseeded since the snapshot is left alone)
            _STREAMS[ctx].set_state(state)
