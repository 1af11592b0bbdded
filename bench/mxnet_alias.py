"""``import mxnet`` (and ``mxnet.x``) gives mxmod's modules, for programs written for MXNet that
the benches run unchanged on mxmod: ``install()`` before they import it."""
import importlib
import importlib.abc
import importlib.util
import sys


class MXNetAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import mxnet[.x]`` gives ``mxmod[.x]``, module for module."""

    def find_spec(self, name, path=None, target=None):  # pylint: disable=unused-argument
        if name == 'mxnet' or name.startswith('mxnet.'):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module('mxmod' + spec.name[len('mxnet'):])

    def exec_module(self, module):
        pass


def install():
    """Put the alias first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, MXNetAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, MXNetAlias())
