"""A profiler session whose statistics are deterministic (counters and markers only), run with
MXNet (make_fixtures.py) and with mxmod (test_aggregate.py): ``dumps()`` must print the same
text."""
import os

SORTS = ('total', 'avg', 'min', 'max', 'count')


def run(mx, workdir):
    """Run the session with the module ``mx`` (mxnet or mxmod); return {label: dumps text}."""
    profiler = mx.profiler
    profiler.set_config(profile_symbolic=False, profile_imperative=False, profile_memory=False,
                        profile_api=False, aggregate_stats=True, continuous_dump=False,
                        filename=os.path.join(workdir, 'aggregate_scenario.json'))
    profiler.set_state('run')
    alpha = profiler.Domain('Alpha')
    first = profiler.Counter(alpha, 'first', 5)
    first += 3
    first -= 1
    long_name = profiler.Counter(alpha, 'a_counter_with_a_name_longer_than_25', 100)
    long_name.decrement(40)
    long_name.increment(7)
    beta = alpha.new_counter('beta_counter', 9)
    beta.set_value(2)
    profiler.Marker(alpha, 'marked').mark('process')
    gamma = profiler.Domain('Gamma')
    odd = profiler.Counter(gamma, 'odd', 1)
    odd.set_value(12)
    profiler.pause()
    odd.set_value(1000)            # not recorded while paused
    profiler.resume()
    odd.increment(2)
    profiler.set_state('stop')
    out = {}
    for sort_by in SORTS:
        for ascending in (False, True):
            key = '%s_%s' % (sort_by, 'asc' if ascending else 'desc')
            out['table_' + key] = profiler.dumps(sort_by=sort_by, ascending=ascending)
            out['json_' + key] = profiler.dumps(format='json', sort_by=sort_by,
                                                ascending=ascending)
    out['reset'] = profiler.dumps(reset=True)
    out['after_reset'] = profiler.dumps()
    return out
