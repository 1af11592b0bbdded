"""``mx.model``: checkpoints (``prefix-symbol.json`` + ``prefix-%04d.params``) and the
``BatchEndParam`` record handed to batch-end callbacks."""
import logging
from collections import namedtuple

from .base import MXNetError
from .context import cpu
from . import checkpoint
from . import ndarray as nd
from . import symbol as sym
from .ndarray import serialization
from .symbol import json_io

__all__ = ['BatchEndParam', 'save_checkpoint', 'load_params', 'load_checkpoint']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])
BatchEndParam.__doc__ = """What batch-end callbacks receive: the epoch, the batch number in the
epoch, the evaluation metric and the caller's ``locals()``."""


class ParamsFileError(MXNetError, ValueError):
    """A ``.params`` file whose names are not those of a checkpoint (``arg:``/``aux:``)."""


def _params_file(prefix, epoch):
    return '%s-%04d.params' % (prefix, epoch)


def _symbol_file(prefix):
    return '%s-symbol.json' % prefix


def params_bytes(arg_params, aux_params, what='save_checkpoint'):
    """The ``.params`` bytes of a checkpoint: ``arg:<name>`` and ``aux:<name>`` entries (arrays
    copied to the CPU)."""
    save_dict = {}
    for kind, params in (('arg', arg_params), ('aux', aux_params)):
        if not isinstance(params, dict):
            raise TypeError('%s: %s_params must be a dict of name to NDArray, got %s'
                            % (what, kind, type(params).__name__))
        for name, arr in params.items():
            if not isinstance(arr, nd.NDArray):
                raise TypeError('%s: %s_params[%r] is a %s, expected an NDArray'
                                % (what, kind, name, type(arr).__name__))
            save_dict['%s:%s' % (kind, name)] = arr.as_in_context(cpu())
    return serialization.dumps(save_dict)


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Save a model: the symbol to ``prefix-symbol.json`` and the parameters to
    ``prefix-%04d.params`` (keys ``arg:<name>`` and ``aux:<name>``, arrays copied to the CPU).

    The files are written as one save with ``prefix-%04d.manifest.json`` (sizes and hashes,
    see :mod:`mxmod.checkpoint`), so that loading detects a set torn by a crash.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    epoch : int
        Epoch number, used in the parameter file name.
    symbol : Symbol or None
        The network; not written when None.
    arg_params : dict of str to NDArray
        The network's weights.
    aux_params : dict of str to NDArray
        The network's auxiliary states.
    remove_amp_cast : bool, optional
        Drop amp_cast/amp_multicast operators from the saved symbol.
    """
    contents = {}
    if symbol is not None:
        contents[_symbol_file(prefix)] = symbol.tojson(remove_amp_cast=remove_amp_cast)
    param_name = _params_file(prefix, epoch)
    contents[param_name] = params_bytes(arg_params, aux_params)
    checkpoint.save_files(prefix, epoch, contents)
    logging.info('Saved checkpoint to "%s"', param_name)


def split_params(save_dict, fname):
    """Split a loaded ``.params`` dict into ``(arg_params, aux_params)`` by key prefix.

    Parameters
    ----------
    save_dict : dict or list
        What ``mx.nd.load`` returned.
    fname : str
        The file, for errors.
    """
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise MXNetError('%s holds %d unnamed arrays; a checkpoint needs arg:/aux: names'
                         % (fname, len(save_dict)))
    for key, value in save_dict.items():
        kind, sep, name = key.partition(':')
        if not sep or kind not in ('arg', 'aux'):
            raise ParamsFileError('Invalid param file %s: key %r has neither an "arg:" nor an "aux:" '
                             'prefix' % (fname, key))
        if value is None:
            raise ParamsFileError('Invalid param file %s: %r holds an uninitialized array'
                             % (fname, key))
        (arg_params if kind == 'arg' else aux_params)[name] = value
    return (arg_params, aux_params)


def load_params(prefix, epoch, reader=None):
    """Load the parameters of a checkpoint.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    epoch : int
        Epoch number of the parameter file.

    Returns
    -------
    arg_params : dict of str to NDArray
        Entries saved under ``arg:<name>``.
    aux_params : dict of str to NDArray
        Entries saved under ``aux:<name>``.
    """
    fname = _params_file(prefix, epoch)
    if reader is None:      # a save running meanwhile: read again until one save is whole
        return checkpoint.load_whole(prefix, epoch, lambda r: load_params(prefix, epoch, r))
    data = reader.read(fname, 'parameters')
    return split_params(serialization.loads(data, 'file %r' % fname), fname)


def load_symbol(prefix, reader):
    """``prefix-symbol.json``, verified against the checkpoint's manifest."""
    fname = _symbol_file(prefix)
    text = reader.read(fname, 'symbol', required=False)
    return json_io.load_source(text, fname)


def load_checkpoint(prefix, epoch):
    """Load a checkpoint written by :func:`save_checkpoint` (or by MXNet).

    When the checkpoint has a manifest (mxmod's saves), every file is checked against it: a load
    that meets a save of the same checkpoint under way loads again until it reads one whole save
    (the old or the new), and a set that stays torn raises
    :class:`mxmod.checkpoint.TornCheckpointError`.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    epoch : int
        Epoch number of the parameter file.

    Returns
    -------
    symbol : Symbol
        The network from ``prefix-symbol.json``.
    arg_params : dict of str to NDArray
        The weights.
    aux_params : dict of str to NDArray
        The auxiliary states.
    """
    def load(reader):
        return (load_symbol(prefix, reader),) + load_params(prefix, epoch, reader)
    return checkpoint.load_whole(prefix, epoch, load)


_KVSTORE_HELPERS = ('_create_kvstore', '_initialize_kvstore', '_update_params_on_kvstore',
                    '_update_params')


def __getattr__(name):
    # MXNet's model module holds Module's kvstore helpers; mxmod keeps them in the module layer
    if name in _KVSTORE_HELPERS:
        from .module import kvstore_helpers  # pylint: disable=import-outside-toplevel
        return getattr(kvstore_helpers, name)
    raise AttributeError("module 'mxmod.model' has no attribute %r" % name)
