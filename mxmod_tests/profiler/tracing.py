"""Reading the profiler's trace files in tests."""
import json


def load_trace(path):
    """(events without metadata, {tid: thread name}, {pid: process name}) of a trace file."""
    with open(path) as src:
        events = json.load(src)['traceEvents']
    threads = {(e['pid'], e['tid']): e['args']['name'] for e in events
               if e['ph'] == 'M' and e['name'] == 'thread_name'}
    processes = {e['pid']: e['args']['name'] for e in events
                 if e['ph'] == 'M' and e['name'] == 'process_name'}
    return [e for e in events if e['ph'] != 'M'], threads, processes


def names(events, category, tid=None):
    """Names of the events of ``category`` (on track ``tid`` when given)."""
    return [e['name'] for e in events if e['cat'] == category and (tid is None or e['tid'] == tid)]
