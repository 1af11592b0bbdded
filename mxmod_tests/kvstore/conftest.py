"""Shared fixtures of the kvstore tests."""
import sys

import numpy as np
import pytest

from .dist_scripts.runner import run, script


@pytest.fixture(scope='session')
def sparse_single(tmp_path_factory):
    """The embedding model of dist_scripts/sparse_fit.py trained by one process on the whole
    batch (the local store): the reference the distributed runs must equal."""
    path = str(tmp_path_factory.mktemp('sparse_single') / 'single.npz')
    code, _, err, _ = run([sys.executable, script('sparse_fit.py'), 'single', path])
    assert code == 0, err
    return dict(np.load(path))
