"""Every profiler test starts and ends with a stopped profiler and no recorded events."""
import os

import pytest

import mxmod as mx
from mxmod.profiler.state import take_events


def _reset(workdir):
    mx.profiler.set_state('stop')
    mx.profiler.set_config(filename=os.path.join(workdir, 'unused.json'), continuous_dump=False)
    take_events()


@pytest.fixture(autouse=True)
def stopped_profiler(tmp_path):
    _reset(str(tmp_path))
    yield
    _reset(str(tmp_path))
