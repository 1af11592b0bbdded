"""Run by ``mxmod.launch -n 2 -s 1`` (or mpiexec): the workers push and pull a dist_async key
in a loop for up to 60 s; each creates ``<folder>/ready-<rank>`` once it has made a round trip
to the server. A test then kills the server rank: every rank must end within seconds, the job
non-zero, with a message naming the dead rank.

Usage: dead_peer.py FOLDER"""
import os
import sys
import time

import mxmod as mx

kv = mx.kv.create('dist_async')
kv.init('w', mx.nd.zeros((4,)))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
out = mx.nd.zeros((4,))
began = time.time()
while time.time() - began < 60:
    kv.push('w', mx.nd.ones((4,)))
    kv.pull('w', out=out)
    marker = os.path.join(sys.argv[1], 'ready-%d' % kv.rank)
    if not os.path.exists(marker):
        open(marker, 'w').close()
    time.sleep(0.01)
raise AssertionError('rank %d ran 60 s without noticing the dead server' % kv.rank)
