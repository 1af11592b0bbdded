"""Run by ``mxmod.launch -n 2 [-s 1]``: bad arguments of set_embedding_cache raise naming the
argument and the allowed values; without server ranks it says how to get them. A capacity in
rows larger than a table caches the table whole (before or after the table exists).
Prints 'OK <rank>'."""
import os

import mxmod as mx
from mxmod.base import MXNetError


def raises(fn, *texts):
    try:
        fn()
    except MXNetError as err:
        for text in texts:
            assert text in str(err), (str(err), text)
        return
    raise AssertionError('no MXNetError for %s' % (texts,))


kv = mx.kv.create('dist_sync')
if int(os.environ.get('MXMOD_NUM_SERVERS', '0') or 0):
    # set before the tables exist: a capacity larger than a table caches it whole on arrival
    early = mx.kv.create('dist_sync')
    early.set_embedding_cache('lfu', 1000000000, 5)
    early.init(['emb', 'small'], [mx.nd.sparse.zeros('row_sparse', (50, 3)),
                                  mx.nd.sparse.zeros('row_sparse', (4, 3))])
    caches = early._cache.caches  # pylint: disable=protected-access
    assert {k: c.capacity for k, c in caches.items()} == {'emb': 50, 'small': 4}
kv.init('emb', mx.nd.sparse.zeros('row_sparse', (50, 3)))
kv.init('dense', mx.nd.zeros((2,)))
if int(os.environ.get('MXMOD_NUM_SERVERS', '0') or 0) == 0:
    raises(lambda: kv.set_embedding_cache('lfu', 10, 5), 'no server ranks', '-s S')
else:
    raises(lambda: kv.set_embedding_cache('mru', 10, 5), "policy='mru'", "'lru'", "'lfu'")
    raises(lambda: kv.set_embedding_cache('lfu', 10, -1), 'bound=-1', '>= 0')
    kv.set_embedding_cache('lfu', 51, 5)
    assert kv._cache.caches['emb'].capacity == 50  # pylint: disable=protected-access
    raises(lambda: kv.set_embedding_cache('lfu', 1.5, 5), 'capacity=1.5', '(0, 1]')
    raises(lambda: kv.set_embedding_cache('lfu', 0, 5), 'capacity=0')
    raises(lambda: kv.set_embedding_cache('lfu', 10, 5, keys=['dense']), "key 'dense'",
           "['emb']")
    kv.set_embedding_cache('LRU', 0.5, 0)
raises(lambda: mx.kv.create('local').set_embedding_cache('lfu', 10, 5), 'no server ranks')
kv.barrier()
print('OK %d' % kv.rank)
