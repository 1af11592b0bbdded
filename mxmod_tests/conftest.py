"""Shared test fixtures: seeded randomness and the oracle/GPU skips."""
import os

import numpy as np
import pytest

import mxmod as mx

if os.environ.get('MXMOD_TEST_DEVICE') == 'emulated-gpu':
    # the whole session runs with cupy emulated on the CPU (see gpu_emulation/)
    from .gpu_emulation import emulated_gpus
    _EMULATION = emulated_gpus(2)
    _EMULATION.__enter__()  # pylint: disable=no-member


@pytest.fixture(autouse=True)
def _seeded():
    np.random.seed(1234)
    if hasattr(mx, 'random'):
        mx.random.seed(1234)
    yield


ORACLE_PYTHON = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')


def oracle_available():
    """True when a venv with the real MXNet 1.9.1 is present (for cross-checks)."""
    return os.path.exists(ORACLE_PYTHON)


GOLDEN = os.environ.get('MXMOD_GOLDEN', os.path.join(os.path.dirname(__file__), 'golden'))
