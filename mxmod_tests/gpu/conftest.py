"""The ``gpus`` fixture: the test body runs with cupy emulated on the CPU (two GPUs)."""
import pytest

from ..gpu_emulation import emulated_gpus


@pytest.fixture
def gpus():
    """Yield the fake cupy module while two emulated GPUs are installed."""
    with emulated_gpus(2) as cupy:
        yield cupy
