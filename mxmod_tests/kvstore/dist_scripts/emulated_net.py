"""Under MXMOD_NET_EMULATION=bandwidth=1Gbit/s,latency=100us: store calls of 4 MB take at least
the emulated link's time. Prints ``OK <kvtype>``."""
import sys
import time

import mxmod as mx
from mxmod.kvstore import net_emulation

KVTYPE = sys.argv[1]
NBYTES = 4 << 20
kv = mx.kv.create(KVTYPE)
value = mx.nd.ones((NBYTES // 4,))
kv.init(0, value)
if KVTYPE == 'dist_async':
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.0))
link = net_emulation.link()
assert link is not None
if KVTYPE == 'dist_sync':
    # a ring allreduce over 2 ranks sends half of 2 x 4 MB in 2 messages
    need = link.transfer_time(NBYTES, 2)
    for _ in range(3):
        tic = time.perf_counter()
        kv.pushpull(0, value)
        took = time.perf_counter() - tic
        assert took >= need, (took, need)
    assert abs(value.asnumpy()[0] - 8.0) < 1e-6
else:
    # the push crosses this worker's link, the pull reply the server's
    need = link.transfer_time(NBYTES, 1)
    for _ in range(3):
        tic = time.perf_counter()
        kv.push(0, value)
        kv.pull(0, out=value)
        took = time.perf_counter() - tic
        assert took >= 2 * need, (took, need)
    kv.barrier()
print('OK %s %d' % (KVTYPE, kv.rank))
