"""Module checkpoints: one save writes the symbol, the parameters, the optimizer states and a
manifest (sizes, hashes and the optimizer's position) as a whole (see :mod:`mxmod.checkpoint`);
loading verifies them, refuses optimizer states that belong to another network, and restores the
optimizer's update counters so that training resumes exactly.

For a resumed ``fit(begin_epoch=n)`` to end bit-identical to an uninterrupted run, the checkpoint
brings the weights, the optimizer states, the update counters and the learning-rate scheduler's
progress; the user must bring the rest: the same network, optimizer settings, batch size and
devices, and data in the same order (an iterator that yields the batches of epoch ``n`` as the
uninterrupted run did: no shuffling, or a shuffle seeded per epoch), and the random seed of
random operators such as Dropout (``mx.random.seed``)."""
import contextlib
import os
import tempfile

import numpy as np

from .. import checkpoint
from .. import ndarray
from ..base import MXNetError
from ..ndarray import serialization
from ..symbol import json_io
from ..model import params_bytes, load_params, load_symbol
from ..optimizer.pickling import load_states, read_states_file
from ..optimizer.position import get_position, restore_position
from ..optimizer.states_check import check_states_match
from ..optimizer.state_keys import int_layout_devices

__all__ = ['save_module_checkpoint', 'load_module_checkpoint', 'load_module_states',
           'restore_saved_position', 'save_bucketing_checkpoint', 'load_bucketing_files']


def _symbol_file(prefix):
    return '%s-symbol.json' % prefix


def _states_file(prefix, epoch):
    return '%s-%04d.states' % (prefix, epoch)


def live_optimizer(module):
    """The optimizer whose counters advance: the updater's (local or kvstore), else the module's."""
    if module._update_on_kvstore:
        updater = getattr(module._kvstore, '_updater', None)
    else:
        updater = module._updater
    return getattr(updater, 'optimizer', None) or module._optimizer


def save_module_checkpoint(module, prefix, epoch, save_optimizer_states, remove_amp_cast):
    """Write ``module``'s checkpoint files as one save (see :meth:`Module.save_checkpoint`)."""
    arg_params, aux_params = module.get_params()
    contents = {_symbol_file(prefix): module.symbol.tojson(remove_amp_cast=remove_amp_cast),
                '%s-%04d.params' % (prefix, epoch): params_bytes(arg_params, aux_params)}
    writers, extra = {}, {}
    if save_optimizer_states:
        module._require('save_optimizer_states', binded=False, params=False, optimizer=True)
        module._drain_comm()
        fname = _states_file(prefix, epoch)
        if module._update_on_kvstore:
            writers[fname] = module._kvstore.save_optimizer_states
        else:
            contents[fname] = module._updater.get_states()
    if module.optimizer_initialized:
        extra['optimizer_position'] = get_position(live_optimizer(module))
    checkpoint.save_files(prefix, epoch, contents, writers, extra)


class PreloadedStates(str):
    """The path of a checkpoint's ``.states`` file carrying the bytes and optimizer position
    read (and verified) together with the checkpoint's parameters, so that ``init_optimizer``
    loads those and not what a later save put in the file."""

    def __new__(cls, fname, blob, position):
        self = super(PreloadedStates, cls).__new__(cls, fname)
        self.blob, self.position = blob, position
        return self


def load_module_checkpoint(module_class, prefix, epoch, load_optimizer_states, kwargs):
    """Create a module from a checkpoint (see :meth:`Module.load`); the files are verified
    against the manifest now (all from one save, see :func:`mxmod.checkpoint.load_whole`), the
    optimizer states are loaded by ``init_optimizer``."""
    states_file = _states_file(prefix, epoch)

    def load(reader):
        symbol = load_symbol(prefix, reader)
        arg_params, aux_params = load_params(prefix, epoch, reader)
        states = None
        if load_optimizer_states:
            blob = reader.read(states_file, 'optimizer states')
            load_states(blob, states_file)
            states = PreloadedStates(states_file, blob, reader.position)
        return symbol, arg_params, aux_params, states
    symbol, arg_params, aux_params, states = checkpoint.load_whole(prefix, epoch, load)
    mod = module_class(symbol=symbol, **kwargs)
    mod._arg_params = arg_params
    mod._aux_params = aux_params
    mod.params_initialized = True
    if load_optimizer_states:
        mod._preload_opt_states = states
    return mod


def _update_keys(module, saved_keys):
    """Update key -> (parameter name, weight) for every weight the module's updater sees, and
    the same for the keys of the other layout (see :mod:`mxmod.optimizer.state_keys`)."""
    group = module._exec_group
    pairs = list(zip(group.param_names, group.param_arrays))
    by_name = {name: (name, arrays[0]) for name, arrays in pairs}
    num_dev = len(module._context)
    by_index = {i * num_dev + k: (name, arrays[k]) for i, (name, arrays) in enumerate(pairs)
                for k in range(num_dev)}
    if not module._update_on_kvstore:
        return by_index, by_name
    saved_dev = int_layout_devices(saved_keys, len(pairs))
    return by_name, {i * saved_dev + k: (name, arrays[0]) for i, (name, arrays) in enumerate(pairs)
                     for k in range(saved_dev)}


def _saved_states(fname):
    """(bytes, optimizer position or None) of the states file ``fname``: those preloaded with
    its checkpoint, else read now (from one whole save when it has a manifest)."""
    if isinstance(fname, PreloadedStates):
        return fname.blob, fname.position

    def load(reader):
        if reader is None:
            return read_states_file(fname), None
        return reader.read(fname, 'optimizer states'), reader.position
    return checkpoint.load_whole_for(fname, load)


def restore_saved_position(module, fname, position=None):
    """Restore the optimizer position saved with the checkpoint that ``fname`` belongs to (or
    ``position``, read with the states).

    Returns
    -------
    bool
        Whether a saved position was found.
    """
    if position is None:
        position = _saved_states(fname)[1]
    if position is None:
        return False
    for optimizer in {id(o): o for o in (module._optimizer, live_optimizer(module))}.values():
        restore_position(optimizer, position, checkpoint.manifest_name(*_prefix_epoch(fname)))
    return True


@contextlib.contextmanager
def _scratch_copy(blob):
    """The path of a private temporary file holding ``blob``, removed afterwards."""
    handle, path = tempfile.mkstemp(prefix='mxmod-states-', suffix='.states')
    try:
        with os.fdopen(handle, 'wb') as out:
            out.write(blob)
        yield path
    finally:
        os.unlink(path)


def _prefix_epoch(fname):
    prefix, _, rest = str(fname).rpartition('-')
    return prefix, int(rest.split('.')[0])


def load_module_states(module, fname):
    """Load optimizer states into ``module`` (see :meth:`Module.load_optimizer_states`); the
    bytes and the optimizer position come from one save."""
    blob, position = _saved_states(fname)
    states, optimizer = load_states(blob, fname)
    weights, aliases = _update_keys(module, states)
    check_states_match(states, weights, optimizer or live_optimizer(module), fname, aliases)
    if module._update_on_kvstore:    # the bytes checked here, not what a save put there since
        with _scratch_copy(blob) as copy:
            module._kvstore.load_optimizer_states(copy)
    else:
        module._updater.set_states(blob, source=fname)
    restore_saved_position(module, fname, position)


def save_bucketing_checkpoint(module, prefix, epoch, remove_amp_cast):
    """Write a BucketingModule's parameters, bucket symbols and bucket keys as one save."""
    arg_params, aux_params = module.get_params()
    contents = {'%s-%04d.params' % (prefix, epoch): params_bytes(arg_params, aux_params)}
    for bucket_key in module._buckets:
        symbol, _, _ = module._sym_gen(bucket_key)
        contents['%s-%s-symbol.json' % (prefix, bucket_key)] = symbol.tojson(
            remove_amp_cast=remove_amp_cast)
    keys = ndarray.array(list(module._buckets.keys()), dtype=np.int32)
    contents['%s.buckets' % prefix] = serialization.dumps([keys])
    checkpoint.save_files(prefix, epoch, contents)


def load_bucketing_files(prefix, epoch):
    """(bucket key -> Symbol, arg_params, aux_params) of a BucketingModule checkpoint, from one
    whole save."""
    return checkpoint.load_whole(prefix, epoch, lambda r: _bucketing_files(prefix, epoch, r))


def _bucketing_files(prefix, epoch, reader):
    fname = '%s.buckets' % prefix
    loaded = serialization.loads(reader.read(fname, 'bucket keys', required=False),
                                 'file %r' % fname)
    if not isinstance(loaded, list) or len(loaded) != 1 or loaded[0] is None \
            or loaded[0].ndim != 1:
        raise MXNetError('%r must hold one 1-d array of bucket keys' % fname)
    keys = [int(k) for k in loaded[0].asnumpy().astype('int32')]
    sym_dict = {}
    for key in keys:
        name = '%s-%s-symbol.json' % (prefix, key)
        sym_dict[key] = json_io.load_source(reader.read(name, 'symbol', required=False), name)
    arg_params, aux_params = load_params(prefix, epoch, reader)
    return sym_dict, arg_params, aux_params
