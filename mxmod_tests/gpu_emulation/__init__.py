"""An emulation of cupy (and NCCL) on the CPU, so that mxmod's GPU code paths run in CI.

``with emulated_gpus(2):`` makes ``import cupy`` load fake modules whose arrays live in host
memory but behave like cupy's on two GPUs: the device rules real cupy enforces (no implicit
host conversion, no numpy arrays in device operations, kernels only on the current device's
arrays, 0-d results, cupy's namespace only) raise here as they would on a GPU. It cannot show
speed or cupy's own numerical differences: the real check remains a run on a GPU machine."""
import contextlib
import sys

from . import devarray, fake_cupy, fake_nccl

__all__ = ['emulated_gpus', 'DeviceArray', 'nccl_collectives']

DeviceArray = devarray.DeviceArray


@contextlib.contextmanager
def emulated_gpus(count=2):
    """Run the body with ``cupy`` replaced by the emulation showing ``count`` GPUs."""
    import mxmod.context  # pylint: disable=import-outside-toplevel
    import mxmod.rng  # pylint: disable=import-outside-toplevel
    fakes = fake_cupy.modules()
    saved = {name: sys.modules.get(name) for name in fakes}
    old_count = devarray.device_count()
    devarray.set_device_count(count)
    sys.modules.update(fakes)
    mxmod.context._CUPY = None  # pylint: disable=protected-access
    _drop_gpu_streams(mxmod.rng)
    try:
        yield fake_cupy.cupy
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
        mxmod.context._CUPY = None  # pylint: disable=protected-access
        _drop_gpu_streams(mxmod.rng)
        devarray.set_device_count(old_count)


def _drop_gpu_streams(rng):
    for ctx in [c for c in rng._STREAMS if c.device_type == 'gpu']:  # pylint: disable=protected-access
        del rng._STREAMS[ctx]  # pylint: disable=protected-access


def nccl_collectives():
    """How many NCCL collectives the emulation has run so far."""
    return fake_nccl.launched()
