"""The emulation refuses what real cupy refuses (so the emulated runs can fail), and its NCCL
checks what real NCCL needs."""
import gc

import numpy as np
import pytest

from ..gpu_emulation import DeviceArray, nccl_collectives


def test_no_implicit_host_conversion(gpus):
    x = gpus.arange(6, dtype='float32')
    with pytest.raises(TypeError, match='Implicit conversion'):
        np.asarray(x)
    with pytest.raises(TypeError, match='Implicit conversion'):
        np.array([x, x])
    np.testing.assert_array_equal(x.get(), np.arange(6))
    np.testing.assert_array_equal(gpus.asnumpy(x * 2), np.arange(6) * 2)


def test_numpy_arrays_are_not_device_operands(gpus):
    x = gpus.ones((2, 3))
    for bad in (lambda: x + np.ones((2, 3)), lambda: gpus.maximum(x, np.zeros(3)),
                lambda: gpus.concatenate([x, np.ones((2, 3))]), lambda: np.add(x, np.ones(3))):
        with pytest.raises(TypeError, match='numpy'):
            bad()
    assert float((x + np.float32(2)).sum()) == 18.0   # numpy scalars are fine, as in cupy


def test_kernels_only_on_the_current_device(gpus):
    with gpus.cuda.Device(1):
        y = gpus.ones(4)
    assert y.device.id == 1
    with pytest.raises(ValueError, match='different from the current device'):
        y + 1
    with pytest.raises(ValueError, match='different from the current device'):
        y.sum()
    with gpus.cuda.Device(1):
        assert float(y.sum()) == 4.0
    moved = gpus.asarray(y)              # asarray copies to the current device, as cupy does
    assert moved.device.id == 0 and moved is not y
    assert y.get().sum() == 4.0          # host copies work from any device
    with pytest.raises(RuntimeError, match='invalid device'):
        with gpus.cuda.Device(2):
            pass


def test_scalars_are_zero_dim_device_arrays_and_namespace_is_cupys(gpus):
    x = gpus.arange(4.0)
    total = x.sum()
    assert isinstance(total, DeviceArray) and total.shape == ()
    assert isinstance(x[1], DeviceArray) and float(x[1]) == 1.0
    for name in ('errstate', 'frompyfunc', 'nditer', 'seterr'):
        with pytest.raises(AttributeError):
            getattr(gpus, name)
    with pytest.raises(AttributeError):
        x.tostring()
    with pytest.raises(AttributeError):
        gpus.random.RandomState(0).integers(0, 3)


def test_fake_nccl_sums_and_catches_misuse(gpus):
    nccl = gpus.cuda.nccl
    comms = nccl.NcclCommunicator.initAll([0, 1])
    bufs = []
    for dev, val in ((0, 1.0), (1, 2.0)):
        with gpus.cuda.Device(dev):
            bufs.append(gpus.full((5,), val, dtype='float32'))
    before = nccl_collectives()
    nccl.groupStart()
    for comm, buf in zip(comms, bufs):
        comm.allReduce(buf.data.ptr, buf.data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    nccl.groupEnd()
    assert nccl_collectives() == before + 1
    for buf in bufs:
        np.testing.assert_array_equal(buf.get(), 3.0)
    with pytest.raises(nccl.NcclError, match='deadlock'):
        comms[0].allReduce(bufs[0].data.ptr, bufs[0].data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    with pytest.raises(nccl.NcclError, match='lives on device 0'):
        comms[1].allReduce(bufs[0].data.ptr, bufs[0].data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    nccl.groupStart()
    comms[0].allReduce(bufs[0].data.ptr, bufs[0].data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    with pytest.raises(nccl.NcclError, match='would hang'):
        nccl.groupEnd()
    with gpus.cuda.Device(1):
        temp = gpus.ones(5, dtype='float32')
    nccl.groupStart()
    comms[0].allReduce(bufs[0].data.ptr, bufs[0].data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    comms[1].allReduce(temp.data.ptr, bufs[1].data.ptr, 5, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    del temp
    gc.collect()
    with pytest.raises(nccl.NcclError, match='freed'):
        nccl.groupEnd()
