"""Splitting a batch across devices and merging per-device results back.

The batch axis of each input or output comes from its layout ('NCHW' -> 0, 'TNC' -> 1; a layout
without 'N' gives -1, meaning "no batch axis": the whole array goes to every device and device
0's result is returned)."""
import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray import NDArray, concat
from ..ndarray.ndarray import from_xp

__all__ = ['_split_input_slice', '_load_general', '_load_data', '_load_label',
           '_merge_multi_context', '_prepare_group2ctxs', 'slice_along']


def _split_input_slice(batch_size, work_load_list):
    """Split ``batch_size`` samples into one consecutive slice per device by workload.

    Each device gets ``round(w * batch_size / sum(w))`` samples (Python's round-half-to-even);
    if that falls short of the batch the last device takes the rest.

    Raises
    ------
    ValueError
        When a device would get an empty slice.
    """
    total = sum(work_load_list)
    counts = [round(w * batch_size / total) for w in work_load_list]
    shortfall = batch_size - sum(counts)
    if shortfall > 0:
        counts[-1] += shortfall
    slices = []
    end = 0
    for count in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + count, batch_size))
        if begin >= end:
            raise ValueError('Too many slices. Some splits are empty: batch size %d cannot be '
                             'split over workloads %s' % (batch_size, list(work_load_list)))
        slices.append(slice(begin, end))
    return slices


def slice_along(arr, axis, begin, end):
    """A view of ``arr[begin:end]`` along ``axis`` (no copy)."""
    if axis == 0:
        return arr[begin:end]
    index = (slice(None),) * axis + (slice(begin, end),)
    return from_xp(arr._data[index], arr.context)


class _ShapeMismatch(MXNetError):
    """An array of another shape than the input it is loaded into."""


def _copy(src, dst):
    if src.shape != dst.shape:
        raise _ShapeMismatch('cannot load an array of shape %s into an input of shape %s'
                             % (src.shape, dst.shape))
    data, target = getattr(src, '_data', None), dst._data
    if type(data) is np.ndarray and type(target) is np.ndarray:   # host to host: copy directly
        if data is not target:
            target[...] = data
        return
    src.copyto(dst)


def _load_general(data, targets, major_axis, descs=None, kind='input'):
    """Copy each source array into its per-device targets.

    ``targets[i]`` is one NDArray (plain copy), or a list of ``(slice, array)`` pairs (the source
    is cut along its batch axis); a source given as a list is already split per device.
    ``descs`` (the bound DataDescs of the inputs, optional) and ``kind`` ('data' or 'label') name
    the input in the error raised for an array of another shape.
    """
    for index, (src, dsts, axis) in enumerate(zip(data, targets, major_axis)):
        try:
            _load_one(src, dsts, axis)
        except _ShapeMismatch as err:
            if descs is None or index >= len(descs):
                raise
            raise MXNetError(_mismatch_message(src, descs[index], kind, index, err)) from None


def _load_one(src, dsts, axis):
    if isinstance(dsts, NDArray):
        _copy(src, dsts)
    elif isinstance(src, (list, tuple)):
        for part, dst in zip(src, dsts):
            _copy(part, dst)
    else:
        for islice, dst in dsts:
            whole = axis < 0 or (islice.start == 0 and islice.stop == src.shape[axis])
            _copy(src if whole else slice_along(src, axis, islice.start, islice.stop), dst)


def _mismatch_message(src, desc, kind, index, err):
    """The error for input ``desc`` (the ``index``-th of ``kind``) given an array of another
    shape: the whole batch's shapes when the batch came whole, the device part's otherwise."""
    if isinstance(src, (list, tuple)):
        head = '%s (one device\'s part of the batch)' % err
    else:
        head = 'cannot load an array of shape %s into an input of shape %s' % (
            tuple(src.shape), tuple(desc.shape))
    return ("%s: %s '%s' (%s %d of the batch) was bound with shape %s; pass a %s of that shape, "
            "or bind (or reshape) the module with the new shapes"
            % (head, kind, desc.name, kind, index, tuple(desc.shape), kind))


def _load_pre_sliced(batches, targets, major_axis, field, descs=None):
    per_input = [[getattr(b, field)[i] for b in batches] for i in range(len(targets))]
    arrays = [[dst for _, dst in target] for target in targets]
    _load_general(per_input, arrays, major_axis, descs, field)


def _load_data(batch, targets, major_axis, descs=None):
    """Load ``batch.data`` (or a list of per-device batches) into the data arrays (``descs``:
    their bound DataDescs, naming them in errors)."""
    if isinstance(batch, list):
        _load_pre_sliced(batch, targets, major_axis, 'data', descs)
    else:
        _load_general(batch.data, targets, major_axis, descs, 'data')


def _load_label(batch, targets, major_axis, descs=None):
    """Load ``batch.label`` (or a list of per-device batches) into the label arrays (``descs``:
    their bound DataDescs, naming them in errors)."""
    if isinstance(batch, list):
        _load_pre_sliced(batch, targets, major_axis, 'label', descs)
    else:
        _load_general(batch.label, targets, major_axis, descs, 'label')


def _merge_multi_context(outputs, major_axis):
    """Concatenate per-device arrays along their batch axis on the first device.

    One device returns its own array (no copy); axis -1 returns device 0's array.
    """
    merged = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            ctx = tensors[0].context
            merged.append(concat(*[t.as_in_context(ctx) for t in tensors], dim=axis))
        else:
            merged.append(tensors[0])
    return merged


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """Normalize ``group2ctxs`` into a list (one per device) of ``{ctx_group: Context}`` dicts.

    Accepted: None; a list of dicts (one per device); a dict mapping a group to a Context, a
    one-element list (used on every device) or a list with one Context per device.
    """
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise ValueError('group2ctxs has %d entries; expected one per context (%d)'
                             % (len(group2ctxs), ctx_len))
        return group2ctxs
    if not isinstance(group2ctxs, dict):
        raise TypeError('group2ctxs should be a dict of str to Context (or list of Context), or a '
                        'list of such dicts; got %s' % type(group2ctxs).__name__)
    result = [{} for _ in range(ctx_len)]
    for group, ctxs in group2ctxs.items():
        if isinstance(ctxs, Context):
            ctxs = [ctxs] * ctx_len
        elif len(ctxs) == 1:
            ctxs = list(ctxs) * ctx_len
        elif len(ctxs) != ctx_len:
            raise ValueError('group2ctxs[%r] has %d contexts; expected 1 or %d'
                             % (group, len(ctxs), ctx_len))
        for i in range(ctx_len):
            result[i][group] = ctxs[i]
    return result


def _single_cpu(group):
    """(executor, data arrays, label arrays or None) when the group has one executor on a CPU
    (the batch is then copied whole and the executor called directly), else None."""
    if len(group.execs) != 1 or group.contexts[0].device_typeid == 2:
        return None
    data = tuple(pairs[0][1] for pairs in group.data_arrays)
    label = None if group.label_arrays is None else \
        tuple(pairs[0][1] for pairs in group.label_arrays)
    return group.execs[0], data, label


def _copied(batch, data_arrays, label_arrays):
    """Copy a batch's host arrays whole into one executor's inputs; False (nothing decided, some
    arrays perhaps copied) when an array is not a host array of the input's shape, or the batch
    has no list of data: the general loader then copies again and raises what it raises."""
    data = getattr(batch, 'data', None)
    if type(data) is not list or len(data) != len(data_arrays):
        return False
    for src, dst in zip(data, data_arrays):
        if not _copy_host(src, dst):
            return False
    if label_arrays is not None:
        label = getattr(batch, 'label', None)
        if label:
            if type(label) is not list or len(label) != len(label_arrays):
                return False
            for src, dst in zip(label, label_arrays):
                if not _copy_host(src, dst):
                    return False
    return True


def _copy_host(src, dst):
    data, target = getattr(src, '_data', None), dst._data
    if type(data) is not np.ndarray or type(target) is not np.ndarray or \
            data.shape != target.shape:
        return False
    if data is not target:
        target[...] = data
    return True
