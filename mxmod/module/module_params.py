"""Module's parameters (a mixin of :class:`mxmod.module.module.Module`): reading them back from
the devices, initializing them in sorted-name order, and assigning given values."""
import warnings

from ..base import MXNetError
from ..initializer import Uniform, InitDesc
from . import param_checks


class ParamsMixin(object):
    """get_params / init_params / set_params of a Module."""

    def get_params(self):
        """``(arg_params, aux_params)`` on CPU, averaged over devices when they changed."""
        self._require('get_params', binded=False)
        self._drain_comm()
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize parameters in sorted-name order and copy them to every device.

        Values in ``arg_params``/``aux_params`` win; a parameter missing from a given dict is a
        RuntimeError unless ``allow_missing`` (then ``initializer`` fills it, if not None).
        Names the network does not have are ignored, whatever ``allow_extra`` says, as in
        MXNet (a checkpoint of a whole network set into a truncated one, or the union of a
        SequentialModule's parameters handed to each of its modules).
        """
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. '
                          'init_params call ignored.', stacklevel=2)
            return
        self._require('init_params', params=False)
        self._drain_comm()
        initializer = param_checks.as_initializer(initializer)
        param_checks.check_given(self._arg_params, self._aux_params, arg_params, aux_params)
        attrs = self._symbol.attr_dict()
        for own, given in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name, arr in sorted(own.items()):
                self._init_one(InitDesc(name, attrs.get(name, None)), arr, given, initializer,
                               allow_missing)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    @staticmethod
    def _init_one(desc, arr, given, initializer, allow_missing):
        if given is None:
            initializer(desc, arr)
        elif desc in given:
            if given[desc] is not arr:
                given[desc].copyto(arr)
        elif not allow_missing:
            raise MXNetError('%s is not presented: the given parameters have no %r (pass '
                             'allow_missing=True to initialize it instead)' % (desc, str(desc)))
        elif initializer is not None:
            initializer(desc, arr)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameters; with ``allow_missing`` they are copied to the devices directly."""
        if arg_params is None and not allow_missing:
            raise MXNetError('set_params: arg_params is None; give a dict of name to NDArray '
                             '(or pass allow_missing=True to keep the current values)')
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. '
                          'set_params call ignored.', stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self):
        """Copy the (device-averaged) parameters into the module's CPU dicts."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        if self._kvstore and self._update_on_kvstore:
            if hasattr(self._kvstore, 'flush'):
                # the embedding cache's held-back updates reach the servers first
                self._kvstore.flush()
            for name, value in sorted(self._arg_params.items()):
                if getattr(value, 'stype', 'default') == 'row_sparse':
                    from ..ndarray import arange  # pylint: disable=import-outside-toplevel
                    row_ids = arange(0, value.shape[0], dtype='int64')
                    self._kvstore.row_sparse_pull(name, value, row_ids=row_ids)
        self._params_dirty = False
