"""The scaling model: a training step's time on N data-parallel workers, predicted from one
process's profile and a description of the network.

A step is forward, backward and update. The dense gradients travel in fusion buckets taken in
backward order (as mxmod's kvstores send them); with overlap a bucket starts when backward has
finished all its gradients and the previous bucket is done, so communication hides behind the
rest of backward; without overlap it all follows backward. A bucket of ``b`` bytes costs:

- ring all-reduce over N workers: ``2 (N-1)/N b / B + 2 (N-1) a`` (B bandwidth, a latency);
- hierarchical all-reduce (p ranks a host, H hosts): a reduce and a broadcast inside the host at
  the intra-host bandwidth, and a ring among the H hosts on the network;
- parameter servers (S servers, sharded evenly): every worker pushes and pulls ``b`` while each
  server receives and sends ``N b / S``: ``2 max(b, N b / S) / B + 2 a``. Sparse (embedding)
  gradients travel as the rows a batch touches; an embedding cache multiplies their bytes by its
  data rate (rows transferred per row requested).

Ranks sharing a host's cores compute slower: the compute times are stretched by
``ranks_per_host * threads / cores_per_host`` when that exceeds 1. With ``update_on_kvstore``
(mxmod's default for distributed stores) the optimizer runs bucket by bucket with the
communication. Efficiency is the one-worker step time over the N-worker step time (the batch per
worker stays the same)."""
import math

from ...base import MXNetError
from ...module.overlap import exchange_bucket_bytes, plan_buckets

__all__ = ['Network', 'predict', 'recommend_bucket', 'overlap_bound', 'MODES',
           'BUCKET_CANDIDATES_MB']

MODES = ('ring', 'hierarchical', 'ps')
BUCKET_CANDIDATES_MB = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)


class Network(object):
    """The links between workers.

    Parameters
    ----------
    bandwidth : float
        Bytes per second of each worker's (and server's) network link.
    latency : float
        Seconds per message.
    ranks_per_host : int
        Worker processes on one host (they share its cores and its intra-host link).
    cores_per_host : int, optional
        Cores of a host (None: enough for every rank).
    intra_bandwidth : float
        Bytes per second between ranks of one host (hierarchical all-reduce).
    intra_latency : float
    threads : int
        Compute threads of each rank.
    """

    def __init__(self, bandwidth, latency=0.0, ranks_per_host=1, cores_per_host=None,
                 intra_bandwidth=5e9, intra_latency=1e-6, threads=1):
        if bandwidth <= 0 or latency < 0 or ranks_per_host < 1:
            raise MXNetError('Network: need bandwidth > 0, latency >= 0 and ranks_per_host >= 1, '
                             'got %r, %r, %r' % (bandwidth, latency, ranks_per_host))
        self.bandwidth = float(bandwidth)
        self.latency = float(latency)
        self.ranks_per_host = int(ranks_per_host)
        self.cores_per_host = cores_per_host
        self.intra_bandwidth = float(intra_bandwidth)
        self.intra_latency = float(intra_latency)
        self.threads = int(threads)

    def slowdown(self, workers):
        """How much slower each rank computes when the ranks of a host share its cores."""
        if not self.cores_per_host:
            return 1.0
        local = min(workers, self.ranks_per_host)
        return max(1.0, local * self.threads / float(self.cores_per_host))


def _ring(nbytes, workers, bandwidth, latency):
    if workers <= 1:
        return 0.0
    return 2.0 * (workers - 1) / workers * nbytes / bandwidth + 2 * (workers - 1) * latency


def bucket_cost(nbytes, workers, net, mode='ring', servers=None):
    """Seconds to reduce one bucket of ``nbytes`` over ``workers`` workers."""
    if workers <= 1:
        return 0.0
    if mode == 'ring':
        return _ring(nbytes, workers, net.bandwidth, net.latency)
    if mode == 'hierarchical':
        local = min(workers, net.ranks_per_host)
        hosts = int(math.ceil(workers / float(local)))
        inside = _ring(nbytes, local, net.intra_bandwidth, net.intra_latency)
        return inside + _ring(nbytes, hosts, net.bandwidth, net.latency)
    if mode == 'ps':
        servers = servers or workers
        return 2.0 * max(nbytes, workers * nbytes / float(servers)) / net.bandwidth \
            + 2 * net.latency
    raise MXNetError('unknown mode %r; choose one of %s' % (mode, ', '.join(MODES)))


def _buckets(profile, bucket_bytes, cache_data_rate):
    """(ready time, bytes) of each bucket, in backward order."""
    params = profile['params']
    sizes = {}
    for p in params:
        nbytes = p['bytes']
        if p.get('sparse'):
            nbytes = p.get('touched_bytes', nbytes) * (cache_data_rate or 1.0)
        sizes[p['name']] = nbytes
    ready = {p['name']: p['ready_s'] for p in params}
    if bucket_bytes is None:
        bucket_bytes = exchange_bucket_bytes(sum(p['bytes'] for p in params if not p.get('sparse')))
    groups = plan_buckets([p['name'] for p in params], sizes, bucket_bytes)
    return [(max(ready[n] for n in g), sum(sizes[n] for n in g)) for g in groups]


def predict(profile, workers, net, mode='ring', bucket_bytes=None, overlap=True,
            update_on_kvstore=True, servers=None, cache_data_rate=None, compute_scale=1.0):
    """Predicted step of ``workers`` workers.

    Parameters
    ----------
    profile : dict
        From :func:`~mxmod.tools.scaling.profile.profile_module`.
    workers : int
    net : Network
    mode : {'ring', 'hierarchical', 'ps'}
    bucket_bytes : int, optional
        Fusion bucket size (default: mxmod's, see ``overlap.exchange_bucket_bytes``).
    overlap : bool
    update_on_kvstore : bool
    servers : int, optional
        Parameter servers (mode 'ps'; default as many as workers).
    cache_data_rate : float, optional
        Embedding-cache data rate applied to sparse gradients (mode 'ps').
    compute_scale : float
        Multiplies the profile's compute times (e.g. to stand for a faster device).

    Returns
    -------
    dict
        ``step_s``, ``compute_s``, ``comm_s`` (all buckets back to back), ``exposed_s`` (step
        minus compute), ``efficiency`` (one worker's step / this step), ``buckets``.
    """
    slow = compute_scale * net.slowdown(workers)
    forward = profile['forward_s'] * slow
    backward = profile['backward_s'] * slow
    update = profile['update_s'] * slow
    compute = forward + backward + update
    single = (profile['forward_s'] + profile['backward_s'] + profile['update_s']) * compute_scale
    buckets = _buckets(profile, bucket_bytes, cache_data_rate if mode == 'ps' else None)
    total = float(sum(b for _, b in buckets)) or 1.0
    costs = [bucket_cost(b, workers, net, mode, servers) for _, b in buckets]
    if workers <= 1:
        step = compute
    else:
        share = update if update_on_kvstore else 0.0
        clock = 0.0
        for (ready, nbytes), cost in zip(buckets, costs):
            start = ready * slow if overlap else backward
            clock = max(clock, start) + cost + share * nbytes / total
        step = forward + max(backward, clock) + (0.0 if update_on_kvstore else update)
    return {'workers': workers, 'step_s': step, 'compute_s': compute, 'comm_s': sum(costs),
            'exposed_s': step - compute, 'efficiency': single / step, 'buckets': len(buckets)}


def recommend_bucket(profile, workers, net, mode='ring', **kwargs):
    """The bucket size (bytes) among :data:`BUCKET_CANDIDATES_MB` with the shortest predicted
    step, and that prediction."""
    best = None
    for megabytes in BUCKET_CANDIDATES_MB:
        size = int(megabytes * (1 << 20))
        result = predict(profile, workers, net, mode, bucket_bytes=size, **kwargs)
        if best is None or result['step_s'] < best[1]['step_s'] * (1 - 1e-9):
            best = (size, result)
    return best


def overlap_bound(profile, t_compute, t_comm, bucket_bytes=None):
    """The best overlap efficiency the gradient-ready times allow.

    Communication (``t_comm`` in all, shared among the buckets by their bytes) starts for each
    bucket no earlier than backward finishes it; compute (``t_compute`` = forward + backward,
    split as in the profile) runs unhindered.

    Returns
    -------
    float
        ``(t_compute + t_comm - t_best) / min(t_compute, t_comm)``.
    """
    fwd, bwd = profile['forward_s'], profile['backward_s']
    scale = t_compute / (fwd + bwd)
    buckets = _buckets(profile, bucket_bytes, None)
    total = float(sum(b for _, b in buckets)) or 1.0
    clock = 0.0
    for ready, nbytes in buckets:
        clock = max(clock, ready * scale) + t_comm * nbytes / total
    best = fwd * scale + max(bwd * scale, clock)
    return (t_compute + t_comm - best) / min(t_compute, t_comm)
