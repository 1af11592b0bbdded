"""Freeze the oracle's (MXNet 1.9.1) data-iterator behaviour into fixtures/*.json:
/tmp/mxnet-ref/bin/python mxmod_tests/io/gen_io_fixtures.py

Each scenario in io_scenarios.py builds an iterator from plain numpy inputs; this script records
provide_data/provide_label and every batch (data, label, pad, index) of several epochs."""
import json
import os
import sys
import tempfile

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import io_scenarios  # noqa: E402  (shared with the mxmod tests)


def _desc(desc):
    return [desc.name, list(desc.shape), np.dtype(desc.dtype).name, desc.layout]


def _arr(arr):
    arr = arr.asnumpy()
    return {'dtype': arr.dtype.name, 'shape': list(arr.shape), 'values': arr.ravel().tolist()}


def record(it, epochs):
    """Describe ``it`` and its batches over ``epochs`` epochs (reset in between)."""
    out = {'provide_data': [_desc(d) for d in it.provide_data],
           'provide_label': [_desc(d) for d in it.provide_label], 'epochs': []}
    for _ in range(epochs):
        batches = []
        try:
            for batch in it:
                batches.append({'data': [_arr(a) for a in batch.data],
                                'label': [_arr(a) for a in (batch.label or [])],
                                'pad': batch.pad,
                                'index': None if batch.index is None
                                else np.asarray(batch.index).tolist()})
        except mx.base.MXNetError as err:  # the oracle fails here: mxmod must fail too
            batches.append({'error': str(err).strip().splitlines()[-1]})
            out['epochs'].append(batches)
            break
        out['epochs'].append(batches)
        it.reset()
    return out


def main():
    os.makedirs(os.path.join(HERE, 'fixtures'), exist_ok=True)
    results = {}
    for name, (build, epochs) in io_scenarios.ndarray_scenarios(mx).items():
        results[name] = record(build(), epochs)
    for name, (build, epochs) in io_scenarios.wrapper_scenarios(mx).items():
        results[name] = record(build(), epochs)
    csv_dir = tempfile.mkdtemp(prefix='csviter_')
    for name, (build, epochs) in io_scenarios.csv_scenarios(mx, csv_dir).items():
        results[name] = record(build(), epochs)
    with open(os.path.join(HERE, 'fixtures', 'iterators.json'), 'w') as handle:
        json.dump(results, handle, indent=0, sort_keys=True)


if __name__ == '__main__':
    main()
