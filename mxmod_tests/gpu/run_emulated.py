"""Run a Python script with two emulated GPUs: ``python run_emulated.py SCRIPT [ARGS...]``.

``mx.gpu(0)`` and ``mx.gpu(1)`` then work on a machine without a GPU, under the device rules of
mxmod_tests/gpu_emulation (a check of the GPU code paths, not of speed)."""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mxmod_tests.gpu_emulation import emulated_gpus  # noqa: E402

if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: run_emulated.py SCRIPT [ARGS...]')
    sys.argv = sys.argv[1:]
    with emulated_gpus(2):
        runpy.run_path(sys.argv[0], run_name='__main__')
