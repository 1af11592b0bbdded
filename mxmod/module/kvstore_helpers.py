"""How a Module uses a kvstore: whether there is one, whether the optimizer runs on it, and the
per-batch gradient reduction and parameter update (MXNet's ``model._create_kvstore`` and friends).

Cross-device gradients are always summed; averaging comes only from the optimizer's
``rescale_grad``. With ``update_on_kvstore`` the store keeps one optimizer state per parameter
(keyed by name) and broadcasts the new weights; otherwise every device runs the updater on its
own copy with index ``param_index * num_device + device_index``."""
import os

import numpy as np

from .. import kvstore as kvs

__all__ = ['per_device_lists', '_create_kvstore', '_initialize_kvstore', '_update_params_on_kvstore',
           '_update_params']

# 'local' stores with a parameter larger than this update on the devices instead
BIG_PARAM_ELEMENTS = 16 * 1024 * 1024


def _create_kvstore(kvstore, num_device, arg_params):
    """Decide the kvstore and whether updates run on it.

    Parameters
    ----------
    kvstore : KVStoreBase, str or None
    num_device : int
        Number of devices of this process.
    arg_params : dict of str to NDArray
        The parameters (their sizes matter for ``'local'``).

    Returns
    -------
    (KVStoreBase or None, bool)
        The store (None when one device trains without a distributed store) and
        ``update_on_kvstore``.
    """
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kvs.base.check_type_name(kvstore, 'kvstore')
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == 'local' and arg_params:
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if largest > BIG_PARAM_ELEMENTS:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be a KVStore, a str or None, got %r (%s)'
                        % (kvstore, type(kvstore).__name__))
    if kv is None:
        return None, False
    return kv, update_on_kvstore and kv.is_capable(kvs.KVStoreBase.OPTIMIZER)


def _stype(arr):
    return getattr(arr, 'stype', 'default')


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put every parameter into the store (with ``update_on_kvstore`` also onto the devices)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or _stype(arg_params[name]) != 'default':
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _exchange(kvstore, param_arrays, grad_arrays, param_names, into_weights, exchange=None):
    """Sum every parameter's device gradients through the store; the results land in the weights
    (``into_weights``, the store holds the optimizer) or back in the gradients. With a Module's
    ``exchange`` (:class:`~mxmod.module.overlap.GradientExchange`) the dense gradients go in its
    buckets (already under way when backward overlapped them); otherwise in one list call (so a
    distributed store can fuse small gradients). Sparse arrays go key by key."""
    done = set()
    if exchange is not None:
        exchange.reduce()
        done = exchange.names
    names, grads, outs = [], [], []
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        if name in done:
            continue
        target = arg_list if into_weights else grad_list
        if _stype(grad_list[0]) == 'default' and _stype(arg_list[0]) == 'default':
            names.append(name)
            grads.append(grad_list)
            outs.append(target)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=target, priority=-index)
    if names:
        kvstore.pushpull(names, grads, out=outs if into_weights else None)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names, exchange=None):
    """Push each parameter's device gradients; the store updates and the weights are pulled."""
    _exchange(kvstore, param_arrays, grad_arrays, param_names, into_weights=True,
              exchange=exchange)


def per_device_lists(param_arrays, grad_arrays, num_device):
    """What ``_update_params`` hands the updater: per device, the indices (``param_index *
    num_device + device``), gradients and weights of the parameters that have gradients."""
    per_device = [([], [], []) for _ in range(num_device)]
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        for k, (weight, grad) in enumerate(zip(arg_list, grad_list)):
            indices, grads, weights = per_device[k]
            indices.append(index * num_device + k)
            grads.append(grad)
            weights.append(weight)
    return [tuple(map(tuple, lists)) for lists in per_device if lists[0]]


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None, exchange=None):
    """Sum gradients through ``kvstore`` (when given), then update every device's copy locally.

    ``updater`` is called once per device with ``(indices, grads, weights)`` lists, index
    ``param_index * num_device + device_index``.
    """
    if kvstore:
        _exchange(kvstore, param_arrays, grad_arrays, param_names, into_weights=False,
                  exchange=exchange)
    for indices, grads, weights in per_device_lists(param_arrays, grad_arrays, num_device):
        updater(list(indices), list(grads), list(weights))
