"""Freeze MXNet 1.9.1's profiler output into fixtures/ (run with the oracle):
/tmp/mxnet-ref/bin/python mxmod_tests/profiler/make_fixtures.py"""
import json
import os
import sys
import tempfile

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aggregate_scenario  # noqa: E402  (shared with the mxmod tests)


def main():
    with tempfile.TemporaryDirectory() as workdir:
        out = aggregate_scenario.run(mx, workdir)
    with open(os.path.join(HERE, 'fixtures', 'aggregate.json'), 'w') as dst:
        json.dump(out, dst, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
