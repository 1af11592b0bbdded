"""Importing a submodule that MXNet 1.9.1 has and mxmod leaves out (``from mxnet.gluon.data
import DataLoader``, as the getting-started tutorial does) raises the MXNetError that says what
mxmod covers, as the attribute does (``mx.gluon.data``), not a bare ModuleNotFoundError; the error
is also an ImportError, so ``except ImportError`` fallbacks keep working. Submodules mxmod has
import as before, and names MXNet does not have either fail as usual."""
import importlib
import sys

import pytest

import mxmod as mx
from mxmod.base import MXNetError


@pytest.mark.parametrize('name,says', [
    ('mxmod.gluon.data', r'mx\.gluon\.data is not available.*of mx\.gluon it implements only'),
    ('mxmod.gluon.data.vision', r'mx\.gluon\.data is not available'),
    ('mxmod.gluon.contrib.estimator', r'mx\.gluon\.contrib\.estimator is not available'),
    ('mxmod.numpy_extension.image', r'mx\.numpy_extension\.image is not available.*NumPy-sem'),
    ('mxmod.contrib.text', r'mx\.contrib\.text is not available'),
    ('mxmod.amp', r'mx\.amp is not available.*mx\.amp is outside its scope'),
    ('mxmod.amp.lists', r'mx\.amp is not available'),
])
def test_import_of_left_out_submodule_raises_mxneterror(name, says):
    with pytest.raises(MXNetError, match=says) as info:
        importlib.import_module(name)
    assert isinstance(info.value, ImportError) and name.startswith(info.value.name)
    assert name not in sys.modules


def test_from_import_forms():
    with pytest.raises(MXNetError, match=r'mx\.gluon\.data is not available'):
        from mxmod.gluon.data import DataLoader  # noqa: F401  pylint: disable=unused-import
    try:
        from mxmod.gluon.data.vision import transforms  # noqa: F401  pylint: disable=unused-import
    except ImportError:  # what a program falling back on another loader catches
        pass


def test_present_submodules_and_unknown_names_unchanged():
    for name in ('mxmod.gluon.nn', 'mxmod.gluon.loss', 'mxmod.gluon.model_zoo.vision',
                 'mxmod.contrib.tensorboard', 'mxmod.gluon.rnn'):
        assert importlib.import_module(name) is not None
    for name in ('mxmod.no_such_module', 'mxmod.gluon._private'):
        with pytest.raises(ModuleNotFoundError) as info:
            importlib.import_module(name)
        assert not isinstance(info.value, MXNetError)
    with pytest.raises(AttributeError):  # mx.contrib's attribute protocol is unchanged
        mx.contrib.text  # pylint: disable=pointless-statement
