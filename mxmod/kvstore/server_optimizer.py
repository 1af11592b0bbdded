"""The optimizer of a synchronous store whose row_sparse tables live on server ranks ("hybrid"
training): every worker updates its replica of the dense values, the servers update the tables,
and saved optimizer states join both."""
from .local import KVStore
from .sharded import join_states

__all__ = ['ServerOptimizer']


class ServerOptimizer(object):
    """Mixin of :class:`~mxmod.kvstore.dist.DistKVStore`; needs ``_tables``, ``_coll``,
    ``_world``, ``_ask``, ``_ask_all``, ``_need_updater``, ``rank`` and ``type``."""

    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` at every push: to the dense values on every worker's replica and,
        with server ranks, to the row_sparse tables on the servers."""
        from ..optimizer import get_updater  # pylint: disable=import-outside-toplevel
        KVStore._set_updater(self, get_updater(optimizer))
        if self._tables is not None:
            from ..optimizer.pickling import dumps  # pylint: disable=import-outside-toplevel
            self._ship_to_servers('optimizer', dumps(optimizer))

    def _set_updater(self, updater):
        """Set ``updater(key, merged, stored)``; with server ranks it is also sent to them (it
        must be picklable)."""
        KVStore._set_updater(self, updater)
        if self._tables is not None and updater is not None:
            import pickle  # pylint: disable=import-outside-toplevel
            try:
                blob = pickle.dumps(updater)
            except Exception as err:  # pylint: disable=broad-except
                raise TypeError('kvstore %r updates its row_sparse tables on the server '
                                'processes, so the updater must be picklable; pickling %r '
                                'failed: %s' % (self.type, updater, err)) from err
            self._ship_to_servers('updater', blob)

    set_updater = _set_updater

    def _ship_to_servers(self, op, blob):
        if self.rank == 0:
            self._ask_all(op, blob)
        self._coll.barrier('set_optimizer')

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states (with server ranks: the dense values' states of this
        worker and the tables' states gathered from the servers) to ``fname``."""
        if self._tables is None or not self._tables.tables:
            super(ServerOptimizer, self).save_optimizer_states(fname, dump_optimizer)
            return
        from ..optimizer.pickling import dumps, loads  # pylint: disable=import-outside-toplevel
        from ..base import write_file_atomic  # pylint: disable=import-outside-toplevel
        updater = self._need_updater('save_optimizer_states')
        self._tables.settle()
        states = dict(updater.states)
        shards = {}
        for blob in self._ask_all('get_states', False):
            for key, state in loads(blob).items():
                if key in self._tables:
                    shards.setdefault(key, []).append(state)
        for key, parts in shards.items():
            states[key] = join_states(parts)
        write_file_atomic(fname, dumps((states, updater.optimizer) if dump_optimizer
                                       else states))

    def load_optimizer_states(self, fname):
        """Load states written by :meth:`save_optimizer_states`; a table's states go to the
        servers (each its rows), the others to this worker's updater. Every worker calls it."""
        if self._tables is None or not self._tables.tables:
            super(ServerOptimizer, self).load_optimizer_states(fname)
            return
        from ..optimizer.pickling import dumps, load_states  # pylint: disable=import-outside-toplevel
        updater = self._need_updater('load_optimizer_states')
        with open(fname, 'rb') as fin:
            states, optimizer = load_states(fin.read(), fname)
        local = {k: v for k, v in states.items() if k not in self._tables}
        updater.set_states(dumps((local, optimizer) if optimizer is not None else local))
        self._tables.settle()
        if self.rank == 0:
            for index, server in enumerate(self._world.server_ranks):
                mine = {k: v for k, v in self._tables.split_states(states, index).items()
                        if k in self._tables}
                self._ask(server, 'set_states', None,
                          dumps((mine, optimizer) if optimizer is not None else mine))
        self._coll.barrier('load_optimizer_states')
