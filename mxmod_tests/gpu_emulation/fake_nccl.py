"""Fake ``cupy.cuda.nccl`` over the emulated devices: communicators made by ``initAll`` and the
allReduce collective, matched across ranks at ``groupEnd`` and run on the raw device addresses.

It checks what real NCCL needs and would otherwise hang or corrupt memory on: one thread calling
a multi-rank collective outside ``groupStart``/``groupEnd`` (a deadlock), every rank of a clique
taking part with the same count, type and operation, each buffer inside a live allocation of the
communicator's own device, and the buffers still alive when the group is launched."""
import ctypes
import types
import weakref

import numpy as np

from . import devarray

_TYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64,
          6: np.float16, 7: np.float32, 8: np.float64}
_OPS = {0: np.add, 1: np.multiply, 2: np.maximum, 3: np.minimum}
_STATE = {'depth': 0, 'pending': [], 'cliques': 0, 'launched': 0}


class NcclError(RuntimeError):
    pass


class NcclCommunicator(object):
    """One rank of a clique of communicators (one per device)."""

    def __init__(self, clique, rank, ndev, device):
        self._clique, self._rank, self._ndev, self._device = clique, rank, ndev, device

    @staticmethod
    def initAll(devices):  # pylint: disable=invalid-name
        """One communicator per device id in ``devices`` (or per device 0..n-1 for an int)."""
        ids = list(range(devices)) if isinstance(devices, int) else [int(d) for d in devices]
        if len(set(ids)) != len(ids):
            raise NcclError('NCCL_INVALID_USAGE: duplicate devices in initAll: %s' % ids)
        for dev in ids:
            if not 0 <= dev < devarray.device_count():
                raise NcclError('NCCL_INVALID_ARGUMENT: no device %d' % dev)
        _STATE['cliques'] += 1
        return [NcclCommunicator(_STATE['cliques'], r, len(ids), d) for r, d in enumerate(ids)]

    def device_id(self):
        return self._device

    def rank_id(self):
        return self._rank

    def size(self):
        return self._ndev

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # pylint: disable=invalid-name
        """Queue (inside a group) or run (single rank) an allreduce of ``count`` elements."""
        if datatype not in _TYPES or op not in _OPS:
            raise NcclError('NCCL_INVALID_ARGUMENT: datatype %r / op %r' % (datatype, op))
        if not isinstance(stream, int):
            raise TypeError('stream must be an int pointer, got %r' % (stream,))
        nbytes = int(count) * np.dtype(_TYPES[datatype]).itemsize
        refs = []
        for what, ptr in (('sendbuf', sendbuf), ('recvbuf', recvbuf)):
            root, dev = devarray.owner_of(ptr, nbytes)
            if dev != self._device:
                raise NcclError('NCCL_INVALID_ARGUMENT: %s of rank %d lives on device %d, the '
                                'communicator on device %d' % (what, self._rank, dev, self._device))
            refs.append(weakref.ref(root))
        _STATE['pending'].append((self, sendbuf, recvbuf, int(count), datatype, op, refs))
        if _STATE['depth'] == 0:
            if self._ndev > 1:
                _STATE['pending'].clear()
                raise NcclError('allReduce on a %d-rank clique outside groupStart/groupEnd from one '
                                'thread would deadlock in real NCCL' % self._ndev)
            _launch()

    def destroy(self):
        pass


def groupStart():  # pylint: disable=invalid-name
    _STATE['depth'] += 1


def groupEnd():  # pylint: disable=invalid-name
    if _STATE['depth'] == 0:
        raise NcclError('groupEnd without groupStart')
    _STATE['depth'] -= 1
    if _STATE['depth'] == 0:
        _launch()


def _view(ptr, count, dtype):
    nbytes = count * np.dtype(dtype).itemsize
    return np.frombuffer((ctypes.c_char * nbytes).from_address(ptr), dtype=dtype, count=count)


def _launch():
    pending, _STATE['pending'] = _STATE['pending'], []
    by_clique = {}
    for call in pending:
        by_clique.setdefault(call[0]._clique, {}).setdefault(call[0]._rank, []).append(call)
    for clique, ranks in by_clique.items():
        ndev = next(iter(ranks.values()))[0][0]._ndev
        lengths = {r: len(calls) for r, calls in ranks.items()}
        if len(ranks) != ndev or len(set(lengths.values())) != 1:
            raise NcclError('clique %d: ranks called allReduce %s times (of %d ranks): real NCCL '
                            'would hang' % (clique, lengths, ndev))
        for calls in zip(*[ranks[r] for r in sorted(ranks)]):
            if len({(c[3], c[4], c[5]) for c in calls}) != 1:
                raise NcclError('clique %d: ranks disagree on count/type/op: %s'
                                % (clique, [(c[3], c[4], c[5]) for c in calls]))
            for call in calls:
                if any(ref() is None for ref in call[6]):
                    raise NcclError('a buffer of rank %d was freed before the group ran'
                                    % call[0]._rank)
            count, dtype, op = calls[0][3], _TYPES[calls[0][4]], _OPS[calls[0][5]]
            total = _view(calls[0][1], count, dtype).copy()
            for call in calls[1:]:
                total = op(total, _view(call[1], count, dtype))
            for call in calls:
                _view(call[2], count, dtype)[...] = total
            _STATE['launched'] += 1


def launched():
    """How many collectives the fake NCCL has run (tests use it to see NCCL was used)."""
    return _STATE['launched']


nccl = types.ModuleType('cupy.cuda.nccl')
nccl.__dict__.update(
    available=True, NcclCommunicator=NcclCommunicator, NcclError=NcclError, groupStart=groupStart,
    groupEnd=groupEnd, get_version=lambda: 22105,
    NCCL_INT8=0, NCCL_CHAR=0, NCCL_UINT8=1, NCCL_INT32=2, NCCL_INT=2, NCCL_UINT32=3, NCCL_INT64=4,
    NCCL_UINT64=5, NCCL_FLOAT16=6, NCCL_HALF=6, NCCL_FLOAT32=7, NCCL_FLOAT=7, NCCL_FLOAT64=8,
    NCCL_DOUBLE=8, NCCL_SUM=0, NCCL_PROD=1, NCCL_MAX=2, NCCL_MIN=3)
