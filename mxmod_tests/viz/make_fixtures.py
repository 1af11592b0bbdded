"""Freeze MXNet 1.9.1's print_summary output for the model-zoo networks (zoo_models.py) into
fixtures/<name>.json.gz (the network's symbol JSON and the printed tables), and its plot_network
graphs for plot_cases.py into fixtures/plots.json.gz. Run with the oracle:
/tmp/mxnet-ref/bin/python mxmod_tests/viz/make_fixtures.py"""
import gzip
import json
import os
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plot_cases  # noqa: E402  (shared with the mxmod tests)
import zoo_models  # noqa: E402


def _write(name, record):
    path = os.path.join(HERE, 'fixtures', name + '.json.gz')
    with open(path, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as out:
        out.write(json.dumps(record, indent=0, sort_keys=True).encode('utf-8'))


def plots():
    """MXNet's plot_network output for plot_cases.CASES (networks given by their JSON)."""
    symbols = {'small': plot_cases.small_graph(mx)}
    for name in ('lenet', 'resnet-18'):
        symbols[name] = zoo_models.build(mx, name)
    record = {'symbols': {k: v.tojson() for k, v in symbols.items()}, 'plots': {}}
    for case, (network, kwargs) in plot_cases.CASES.items():
        record['plots'][case] = plot_cases.plot(mx, symbols[network], kwargs)
    _write('plots', record)


def main():
    for name, (_, _, data_shape) in sorted(zoo_models.MODELS.items()):
        symbol = zoo_models.build(mx, name)
        record = {'symbol': symbol.tojson(), 'data_shape': list(data_shape),
                  'summary': zoo_models.summaries(mx, symbol, data_shape)}
        _write(name, record)
    plots()


if __name__ == '__main__':
    main()
