"""Fixtures shared by the operator tests."""
import pytest


@pytest.fixture
def jit_state():
    """mxmod.ops.jit, its compiled-kernel switch restored after the test."""
    from mxmod.ops import jit
    previous = jit.enabled()
    yield jit
    jit.set_enabled(previous)
