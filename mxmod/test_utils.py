"""``mx.test_utils``: what MXNet's test helpers module offers, for MXNet's tests and users' tests.

The helpers live in ``mxmod.testing`` by concern and are gathered here. As in MXNet,
``from mxmod.test_utils import *`` also hands out the modules this one imports (``mx``, ``np``,
``rnd``, ``npt``, ...), which MXNet's test files rely on."""
# pylint: disable=unused-import,wildcard-import,unused-wildcard-import
import bz2  # noqa: F401
import ctypes  # noqa: F401
import errno  # noqa: F401
import gzip  # noqa: F401
import json  # noqa: F401
import logging  # noqa: F401
import numbers  # noqa: F401
import os  # noqa: F401
import platform  # noqa: F401
import struct  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import traceback  # noqa: F401
import zipfile  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager  # noqa: F401

import numpy as np  # noqa: F401
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

import mxmod as mx  # noqa: F401
from .base import NDArrayHandle, py_str, MXNetError  # noqa: F401
from .context import Context, current_context  # noqa: F401
from .ndarray import array, NDArray  # noqa: F401
from .util import getenv, setenv  # noqa: F401

# ---- tolerances -------------------------------------------------------------------------------
from .testing.tolerance import *  # noqa: F401,F403
# ---- comparisons ------------------------------------------------------------------------------
from .testing.compare import *  # noqa: F401,F403
from .testing.compare import _find_max_violation  # noqa: F401
# ---- contexts, environment, retries, platform ----------------------------------------------------
from .testing.harness import *  # noqa: F401,F403
# ---- random inputs ----------------------------------------------------------------------------
from .testing.inputs import *  # noqa: F401,F403
# sparse inputs (real CSR / row_sparse arrays) take the place of the dense generators of the same
# name: rand_ndarray, rand_sparse_ndarray, create_sparse_array, assign_each ...
from .sparse_test_utils import *  # noqa: F401,F403
# ---- checks of bound symbols ------------------------------------------------------------------
from .testing.gradients import *  # noqa: F401,F403
from .testing.gradients import _parse_location, _parse_aux_states  # noqa: F401
from .testing.consistency import *  # noqa: F401,F403
# ---- random generators ------------------------------------------------------------------------
from .testing.stats import *  # noqa: F401,F403
# ---- data sets ------------------------------------------------------------------------------------
from .dataset_utils import (download, get_mnist, get_mnist_pkl, get_mnist_ubyte,  # noqa: F401
                            get_cifar10, get_mnist_iterator, get_zip_data, get_bz2_data)


def __getattr__(name):
    # ``ss`` (scipy.stats, as MXNet's module exports it) is imported on first use: it is slow
    # to import and only the statistical checks need it
    if name == 'ss':
        try:
            import scipy.stats as stats  # pylint: disable=import-outside-toplevel
        except ImportError:
            stats = None
        globals()['ss'] = stats
        return stats
    raise AttributeError("module 'mxmod.test_utils' has no attribute %r" % name)


# what ``from mxmod.test_utils import *`` hands out: every public name, as in MXNet
__all__ = sorted([name for name in globals() if not name.startswith('_')] + ['ss'])
