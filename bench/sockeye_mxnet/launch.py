"""Run one Sockeye 1.18 command on mxmod or on MXNet:
``python launch.py mxmod|mxnet sockeye.train ARGS...``.

``mxmod`` maps ``import mxnet`` to mxmod (bench/mxnet_alias.py). Two shims, for both
implementations, mend Sockeye's own incompatibilities with the numpy of this interpreter (they
live here, never in mxmod): numpy >= 1.24 refuses to save a ragged list of arrays (Sockeye saves
its data iterator's permutations so), and numpy >= 2 refuses ``int()``/``float()`` of a
one-element 1-d array (Sockeye's translation lengths and scores)."""
import importlib.abc
import importlib.util
import os
import runpy
import sys

import numpy as np

_SAVE = np.save


def _save(file, arr, *args, **kwargs):
    if isinstance(arr, list) and len({getattr(a, 'shape', None) for a in arr}) > 1:
        ragged = np.empty(len(arr), dtype=object)
        ragged[:] = arr
        arr = ragged            # what numpy < 1.24 made of such a list
    return _SAVE(file, arr, *args, **kwargs)


def _scalar(value):
    if isinstance(value, np.ndarray) and value.size == 1 and value.ndim:
        return value.reshape(())
    return value


def _mend_inference(module):
    assemble = module.Translator._assemble_translation

    def mended(sequence, length, attention_lists, seq_score, *rest):
        return assemble(sequence, _scalar(length), attention_lists, _scalar(seq_score),
                        *[_scalar(r) for r in rest])
    module.Translator._assemble_translation = staticmethod(mended)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Mends sockeye.inference once it is imported (Sockeye wants mxnet imported late)."""

    def find_spec(self, name, path=None, target=None):  # pylint: disable=unused-argument
        if name != 'sockeye.inference':
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _mend_inference(module)
        spec.loader.exec_module = exec_module
        return spec


def main():
    impl, module = sys.argv[1], sys.argv[2]
    if impl == 'mxmod':
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from mxnet_alias import install  # pylint: disable=import-outside-toplevel
        install()
    elif impl != 'mxnet':
        raise SystemExit('launch.py: implementation must be mxmod or mxnet, got %r' % impl)
    np.save = _save
    sys.meta_path.insert(0, _AfterImport())
    sys.argv = [module] + sys.argv[3:]
    runpy.run_module(module, run_name='__main__', alter_sys=True)


if __name__ == '__main__':
    main()
