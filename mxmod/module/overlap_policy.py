"""Gradient communication overlapped with backward (overlap.py): when a backward may start it.

When it overlaps: communication started during backward must give what ``update`` would have
given from the arrays as they are when it is called (MXNet's engine orders the user's edits of
the gradients before the pushes of ``update``). So by default (``MXMOD_OVERLAP_COMM`` unset):

- the backward passes of ``fit``'s training steps overlap (``forward_backward`` then ``update``
  at once, on mxmod's own module classes: a subclass overriding one may edit in between);
- a backward the user calls overlaps only once the module's own steps have shown that it goes
  straight to ``update``: ``USER_STEPS`` user steps of one backward then one update with
  nothing in between, and no code outside mxmod's modules has read the gradient arrays (the
  executor group's ``grad_arrays``, an executor's ``grad_arrays`` or ``grad_dict``). A loop
  that edits the gradients (clipping by hand, adding a second batch's), runs two backwards
  per update or a backward without update (input gradients) never overlaps, and behaves as in
  MXNet. With ``update_on_kvstore`` such a backward's new weights reach the parameters only in
  ``update``, so a backward without update leaves them; a loop that first reads the gradients
  after its first steps may find that step's communication already sent.

``MXMOD_OVERLAP_COMM=1`` overlaps every backward of a module with a kvstore (a loop that
promises no edits); ``0`` never."""
import os
import threading

__all__ = ['ENV_OVERLAP', 'USER_STEPS', 'overlap_mode', 'overlap_enabled', 'fit_step',
           'in_fit_step', 'backward_may_overlap']

ENV_OVERLAP = 'MXMOD_OVERLAP_COMM'


def overlap_mode():
    """``'off'`` (``MXMOD_OVERLAP_COMM`` 0/false), ``'on'`` (1/true: every backward of a module
    with a kvstore) or ``'fit'`` (unset, the default: fit's steps, and a user's loop once it has
    shown that it goes straight from backward to update)."""
    value = os.environ.get(ENV_OVERLAP, '').strip().lower()
    if value in ('0', 'false', 'no', 'off'):
        return 'off'
    if value in ('1', 'true', 'yes', 'on'):
        return 'on'
    if value in ('', 'fit', 'auto'):
        return 'fit'
    raise ValueError('%s=%r: expected 0 (never overlap), 1 (every backward) or unset (fit\'s '
                     'steps and plain user loops)' % (ENV_OVERLAP, value))


def overlap_enabled():
    """False when ``MXMOD_OVERLAP_COMM`` turns overlap off."""
    return overlap_mode() != 'off'


_STEP = threading.local()


class fit_step(object):  # pylint: disable=invalid-name
    """Marks, in this thread, a ``forward_backward`` that ``update`` follows at once (fit's
    training step): its backward may overlap the gradient communication. Only for modules
    whose ``forward_backward``, ``backward`` and ``update`` are mxmod's own (a subclass that
    overrides one may edit the gradients in between)."""

    def __init__(self, module):
        self.active = overlap_mode() == 'fit' and _own_step(module)

    def __enter__(self):
        if self.active:
            _STEP.depth = getattr(_STEP, 'depth', 0) + 1
        return self

    def __exit__(self, *exc):
        if self.active:
            _STEP.depth -= 1
        return False


def _own_step(module):
    cls = type(module)
    return all(getattr(getattr(cls, name, None), '__module__', '').startswith('mxmod.module.')
               for name in ('forward_backward', 'forward', 'backward', 'update'))


def in_fit_step():
    """Whether this thread is inside one of fit's training steps (``fit_step``)."""
    return getattr(_STEP, 'depth', 0) > 0


# a backward the user calls may overlap once the module's own steps were this many times one
# backward then one update, with nothing in between
USER_STEPS = 2


def backward_may_overlap():
    """How a backward starting now may start the gradient communication: ``'always'``
    (``MXMOD_OVERLAP_COMM=1``), ``'fit'`` (one of fit's steps), ``'user'`` (a backward the user
    calls: only once the module has seen that its steps go straight to update) or None
    (``MXMOD_OVERLAP_COMM=0``)."""
    mode = overlap_mode()
    if mode == 'off':
        return None
    if mode == 'on':
        return 'always'
    return 'fit' if in_fit_step() else 'user'
