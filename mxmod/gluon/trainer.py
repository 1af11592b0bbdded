"""``mx.gluon.Trainer``: applies an optimizer to a set of Parameters after each backward,
reducing gradients across devices through a KVStore (mxmod's local or device store; none for
one device) and updating the weights there or on each device."""
from .. import autograd, optimizer as opt
from ..kvstore import KVStoreBase
from ..module.kvstore_helpers import _create_kvstore
from .parameter import Parameter
from .parameter_dict import ParameterDict

__all__ = ['Trainer']


class Trainer(object):
    """Apply ``optimizer`` to ``params``.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        A dict's Parameters are taken in the order of their sorted names.
    optimizer : str or Optimizer
    optimizer_params : dict, optional
        Arguments of the optimizer's constructor (only with a name).
    kvstore : str or KVStore, default 'device'
    compression_params : dict, optional
        Gradient compression of the kvstore.
    update_on_kvstore : bool, optional
        Whether the kvstore runs the optimizer (default: its own choice).
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device',
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError('First argument must be a list or dict of Parameters, got %s.'
                             % type(params))
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError('First argument must be a list or dict of Parameters, got list '
                                 'of %s.' % type(param))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)  # pylint: disable=protected-access
            self._contains_sparse_weight |= param._stype != 'default'  # pylint: disable=protected-access
            self._contains_sparse_grad |= param._grad_stype != 'default'  # pylint: disable=protected-access
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {'kvstore': kvstore, 'update_on_kvstore': update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError('All Parameters must be initialized on the same set of '
                                     'contexts, but Parameter %s is initialized on %s while '
                                     'previous Parameters are initialized on %s.'
                                     % (param.name, ctx, contexts))
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError('optimizer_params must be None if optimizer is an instance '
                                     'of Optimizer instead of str')
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _init_params(self):
        if not self._kv_initialized:
            raise AssertionError('Cannot initialize parameters in KVStore when KVStore is not '
                                 'initialized.')
        waiting = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:  # pylint: disable=protected-access
                    waiting.append(param)
                    continue
                arrays = param._check_and_get(param._data, list)  # pylint: disable=protected-access
                idx = self._param2idx[param.name]
                if param._stype != 'default':  # pylint: disable=protected-access
                    self._kvstore.init(idx, arrays[0])
                else:
                    self._kvstore.broadcast(idx, arrays[0], arrays)
        self._params_to_init = waiting

    def _reset_kvstore(self):
        if self._kvstore and 'dist' in self._kvstore.type:
            raise RuntimeError('Cannot reset distributed KVStore.')
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        config = self._kvstore_params
        wanted = config['update_on_kvstore']
        arg_arrays = {} if self._contains_sparse_weight else \
            {param.name: param.data(self._contexts[0]) for param in self._params}
        if self._contains_sparse_weight:
            kvstore = config['kvstore']
            if isinstance(kvstore, str):
                from .. import kvstore as kvs  # pylint: disable=import-outside-toplevel
                kvstore = kvs.create(kvstore)
            update_on_kvstore = True
            self._distributed = 'dist' in kvstore.type
            if wanted is False:
                raise ValueError('Cannot set update_on_kvstore=False when sparse weights are '
                                 'present.')
        else:
            kvstore, update_on_kvstore = _create_kvstore(config['kvstore'], len(self._contexts),
                                                         arg_arrays)
            self._distributed = 'dist' in kvstore.type if kvstore else False
            if self._contains_sparse_grad:
                update_on_kvstore = self._distributed
                if wanted is not None:
                    if wanted is False and self._distributed:
                        raise ValueError('Cannot set update_on_kvstore=False on dist kvstore '
                                         'when sparse gradients are present.')
                    update_on_kvstore = wanted
            else:
                if self._distributed and 'async' in kvstore.type:
                    update_on_kvstore = True
                    if wanted is False:
                        raise ValueError('Please set update_on_kvstore=True when training in '
                                         'async mode.')
                if wanted is not None:
                    update_on_kvstore = wanted
                if kvstore and update_on_kvstore and \
                        not kvstore.is_capable(KVStoreBase.OPTIMIZER):
                    if wanted:
                        raise ValueError('Please set update_on_kvstore=False when training with '
                                         '%s' % type(kvstore))
                    update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning('Optimizer has to be defined before its learning rate can be '
                              'accessed.')
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The Optimizer."""
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning('Optimizer has not been initialized yet')

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning('Optimizer has to be defined before its learning rate is mutated.')
        self._optimizer.set_learning_rate(lr)

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        idx = self._param2idx[parameter.name]
        # the store writes the rows into the parameter's arrays, as MXNet's engine does, even
        # inside autograd.record() (the write is not part of the recorded computation)
        with autograd.pause(train_mode=autograd.is_training()):
            self._prepare()
            if full_idx and 'dist' not in self._kvstore.type:
                if row_id.size != out.shape[0]:
                    raise AssertionError('row_sparse_pull: %d row ids for %d rows'
                                         % (row_id.size, out.shape[0]))
                self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
            else:
                self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized and \
                self._optimizer.rescale_grad != scale:
            raise UserWarning('Possible change in the `batch_size` from previous `step` '
                              'detected. Optimizer gradient normalizing factor will not change '
                              'w.r.t new batch_size when update_on_kvstore=True and when '
                              'distributed kvstore is used.')
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """One optimization step: reduce the gradients (scaled by ``1 / batch_size``) and
        update the Parameters.

        Parameters
        ----------
        batch_size : int
        ignore_stale_grad : bool, default False
            Skip Parameters whose gradient no backward wrote since the last step, instead of
            raising.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum the gradients over the devices (for ``update`` after editing them)."""
        self._prepare()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError('allreduce_grads() when parameters are updated on kvstore is '
                                 'not supported. Try setting `update_on_kvstore` to False when '
                                 'creating trainer.')
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            grads = param.list_grad()
            if grads[0].stype != 'default':
                self._kvstore.push(i, grads, priority=-i)
                if param._stype == 'default':  # pylint: disable=protected-access
                    target = param.list_data() if self._update_on_kvstore else grads
                    self._kvstore.pull(i, target, priority=-i, ignore_sparse=self._distributed)
            elif self._update_on_kvstore:
                self._kvstore.pushpull(i, grads, out=param.list_data(), priority=-i)
            else:
                self._kvstore.pushpull(i, grads, priority=-i)

    def update(self, batch_size, ignore_stale_grad=False):
        """Update the Parameters from their (already reduced) gradients."""
        self._prepare()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError('update() when parameters are updated on kvstore is not '
                                 'supported. Try setting `update_on_kvstore` to False when '
                                 'creating trainer.')
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        updates = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):  # pylint: disable=protected-access
                    if not data._fresh_grad:
                        raise UserWarning(
                            'Gradient of Parameter `%s` on context %s has not been updated by '
                            'backward since last `step`. This could mean a bug in your model '
                            'that made it only use a subset of the Parameters (Blocks) for this '
                            'iteration. If you are intentionally only using a subset, call step '
                            'with ignore_stale_grad=True to suppress this warning and skip '
                            'updating of Parameters with stale gradient'
                            % (param.name, data.context))
            if self._kvstore and self._update_on_kvstore:
                continue
            for pending, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    pending.append((i, grad, arr))
                    arr._fresh_grad = False
        if self._kvstore and self._update_on_kvstore:
            return
        for updater, pending in zip(self._updaters, updates):
            if pending:
                indices, grads, weights = zip(*pending)
                updater(list(indices), list(grads), list(weights))

    def save_states(self, fname):
        """Save the optimizer states (and the optimizer) to ``fname``."""
        self._prepare()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError('Cannot save trainer states when some parameters are not '
                                     'yet initialized in kvstore.')
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, 'wb') as handle:
                handle.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load optimizer states saved by ``save_states``."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer  # pylint: disable=protected-access
        else:
            with open(fname, 'rb') as handle:
                states = handle.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
