"""Gluon's errors: a Parameter used before its deferred initialization ran, and the failed
consistency checks that MXNet's Gluon asserts."""
from ..base import MXNetError

__all__ = ['DeferredInitializationError', 'CheckError']


class DeferredInitializationError(MXNetError):
    """A Parameter was used before its deferred initialization could run (its shape is only
    known after the first forward pass)."""


class CheckError(MXNetError, AssertionError):
    """A failed consistency check. MXNet's Gluon asserts these, so the error is both an
    MXNetError and an AssertionError."""
