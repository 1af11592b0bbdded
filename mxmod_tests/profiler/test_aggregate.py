"""``profiler.dumps()``: MXNet's table and JSON layouts, sorting and reset, against text that MXNet
1.9.1 printed for the same session (fixtures/aggregate.json, made by make_fixtures.py)."""
import json
import os

import pytest

import mxmod as mx
from mxmod.profiler.aggregate import AggregateStats

from . import aggregate_scenario

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope='module')
def mxnet_output():
    with open(os.path.join(HERE, 'fixtures', 'aggregate.json')) as src:
        return json.load(src)


def test_dumps_matches_mxnet_text(tmp_path, mxnet_output):
    ours = aggregate_scenario.run(mx, str(tmp_path))
    assert sorted(ours) == sorted(mxnet_output)
    for key, text in mxnet_output.items():
        assert ours[key] == text, key


def test_json_is_valid_and_sorted(tmp_path):
    aggregate_scenario.run(mx, str(tmp_path))   # leaves its statistics reset: fill anew
    stats = AggregateStats()
    for name, dur in (('b', 30.0), ('a', 30.0), ('c', 5.0), ('c', 100.0)):
        stats.add_duration('operator', name, dur)
    stats.add_counter('Device Storage', 'Memory: cpu/0', 4096)
    stats.add_counter('Device Storage', 'Memory: cpu/0', 1024)
    parsed = json.loads(stats.json('total', False))
    assert list(parsed['Time']['operator']) == ['c', 'b', 'a']     # ties: name descending
    assert parsed['Time']['operator']['c'] == {'Count': 2, 'Total': 0.105, 'Min': 0.005,
                                               'Max': 0.1, 'Avg': 0.0525}
    assert parsed['Memory']['Device Storage']['Memory: cpu/0'] == {
        'Count': 2, 'Min': 1.024, 'Max': 4.096, 'Avg': 1.536}
    ascending = json.loads(stats.json('avg', True))['Time']['operator']
    assert [v['Avg'] for v in ascending.values()] == sorted(v['Avg'] for v in ascending.values())
    table = stats.table('count', False).splitlines()
    assert table[table.index('Device Storage') + 2].split() == [
        'Name', 'Total', 'Count', 'Min', 'Use', '(kB)', 'Max', 'Use', '(kB)', 'Avg', 'Use', '(kB)']


def test_dumps_argument_checks():
    with pytest.raises(ValueError, match='format'):
        mx.profiler.dumps(format='xml')
    with pytest.raises(ValueError, match='sort_by'):
        mx.profiler.dumps(sort_by='median')
    with pytest.raises(ValueError, match='ascending'):
        mx.profiler.dumps(ascending='yes')
