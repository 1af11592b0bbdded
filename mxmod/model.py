"""``mx.model``: checkpoints (``prefix-symbol.json`` + ``prefix-%04d.params``) and the
``BatchEndParam`` record handed to batch-end callbacks."""
import logging
from collections import namedtuple

from .base import MXNetError
from .context import cpu
from . import ndarray as nd
from . import symbol as sym

__all__ = ['BatchEndParam', 'save_checkpoint', 'load_params', 'load_checkpoint']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])
BatchEndParam.__doc__ = """What batch-end callbacks receive: the epoch, the batch number in the
epoch, the evaluation metric and the caller's ``locals()``."""


def _params_file(prefix, epoch):
    return '%s-%04d.params' % (prefix, epoch)


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Save a model: the symbol to ``prefix-symbol.json`` and the parameters to
    ``prefix-%04d.params`` (keys ``arg:<name>`` and ``aux:<name>``, arrays copied to the CPU).

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
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {'arg:%s' % name: arr.as_in_context(cpu()) for name, arr in arg_params.items()}
    save_dict.update({'aux:%s' % name: arr.as_in_context(cpu())
                      for name, arr in aux_params.items()})
    param_name = _params_file(prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
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
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise MXNetError('%s holds %d unnamed arrays; a checkpoint needs arg:/aux: names'
                         % (fname, len(save_dict)))
    for key, value in save_dict.items():
        kind, sep, name = key.partition(':')
        if not sep:
            raise ValueError('%s: key %r has no "arg:" or "aux:" prefix' % (fname, key))
        if kind == 'arg':
            arg_params[name] = value
        elif kind == 'aux':
            aux_params[name] = value
    return (arg_params, aux_params)


def load_checkpoint(prefix, epoch):
    """Load a checkpoint written by :func:`save_checkpoint` (or by MXNet).

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
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return (symbol, arg_params, aux_params)


_KVSTORE_HELPERS = ('_create_kvstore', '_initialize_kvstore', '_update_params_on_kvstore',
                    '_update_params')


def __getattr__(name):
    # MXNet's model module holds Module's kvstore helpers; mxmod keeps them in the module layer
    if name in _KVSTORE_HELPERS:
        from .module import kvstore_helpers  # pylint: disable=import-outside-toplevel
        return getattr(kvstore_helpers, name)
    raise AttributeError("module 'mxmod.model' has no attribute %r" % name)
