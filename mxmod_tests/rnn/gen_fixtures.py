"""Freeze MXNet 1.9.1's behaviour for the mx.rnn tests (run with the oracle's Python):

    /tmp/mxnet-ref/bin/python mxmod_tests/rnn/gen_fixtures.py

Writes fixtures/symbols.json (tojson, listings, inferred shapes of every symbol_cases case),
fixtures/io.json (encode_sentences results, BucketSentenceIter batches over two epochs under fixed
seeds, the printed warning) and fixtures/fused.npz (fused parameter vectors unpacked by MXNet and
forward outputs of the fused RNN operator)."""
import contextlib
import io
import json
import os
import random
import sys

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import symbol_cases  # noqa: E402  pylint: disable=wrong-import-position
import io_cases  # noqa: E402  pylint: disable=wrong-import-position

OUT = os.path.join(HERE, 'fixtures')


def gen_symbols():
    result = {}
    for case in symbol_cases.CASES:
        sym, shapes = symbol_cases.build(mx, case)
        arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
        result[case.__name__] = {
            'json': sym.tojson(), 'list_arguments': sym.list_arguments(),
            'list_outputs': sym.list_outputs(),
            'list_auxiliary_states': sym.list_auxiliary_states(),
            'arg_shapes': [list(s) for s in arg_shapes],
            'out_shapes': [list(s) for s in out_shapes],
            'aux_shapes': [list(s) for s in aux_shapes]}
    return result


def iterate(it, epochs):
    out = []
    for _ in range(epochs):
        batches = []
        for batch in it:
            batches.append({'bucket_key': batch.bucket_key, 'pad': batch.pad,
                            'data': batch.data[0].asnumpy().tolist(),
                            'label': batch.label[0].asnumpy().tolist(),
                            'provide_data': [[d.name, list(d.shape), d.layout]
                                             for d in batch.provide_data],
                            'provide_label': [[d.name, list(d.shape), d.layout]
                                              for d in batch.provide_label]})
        out.append(batches)
        it.reset()
    return out


def gen_io():
    result = {'encode': [], 'bucket': []}
    for case in io_cases.ENCODE_CASES:
        coded, vocab = mx.rnn.encode_sentences(**case)
        result['encode'].append({'coded': coded, 'vocab': vocab})
    for case in io_cases.bucket_cases():
        random.seed(case['seed'])
        np.random.seed(case['seed'])
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            it = mx.rnn.BucketSentenceIter(case['sentences'], **case['kwargs'])
        result['bucket'].append({
            'stdout': text.getvalue(), 'buckets': list(it.buckets),
            'default_bucket_key': it.default_bucket_key,
            'provide_data': [[d.name, list(d.shape), d.layout] for d in it.provide_data],
            'provide_label': [[d.name, list(d.shape), d.layout] for d in it.provide_label],
            'epochs': iterate(it, 2)})
    return result


FUSED_CONFIGS = [dict(mode='lstm', num_layers=2, bidirectional=True, num_hidden=3, num_input=4),
                 dict(mode='gru', num_layers=2, bidirectional=False, num_hidden=3, num_input=2),
                 dict(mode='rnn_tanh', num_layers=1, bidirectional=True, num_hidden=2,
                      num_input=3),
                 dict(mode='rnn_relu', num_layers=3, bidirectional=False, num_hidden=2,
                      num_input=2)]


def gen_fused():
    store = {}
    rs = np.random.RandomState(7)
    for k, cfg in enumerate(FUSED_CONFIGS):
        cell = mx.rnn.FusedRNNCell(cfg['num_hidden'], num_layers=cfg['num_layers'],
                                   mode=cfg['mode'], bidirectional=cfg['bidirectional'],
                                   prefix='f%d_' % k)
        data = mx.sym.Variable('data')
        out, _ = cell.unroll(4, data, layout='TNC', merge_outputs=True)
        dshape = (4, 2, cfg['num_input'])
        arg_shapes, _, _ = out.infer_shape(data=dshape)
        size = dict(zip(out.list_arguments(), arg_shapes))['f%d_parameters' % k][0]
        vec = rs.uniform(-0.8, 0.8, size).astype(np.float32)
        x = rs.normal(0, 1, dshape).astype(np.float32)
        store['%d:parameters' % k] = vec
        store['%d:data' % k] = x
        unpacked = cell.unpack_weights({'f%d_parameters' % k: mx.nd.array(vec)})
        for name, arr in unpacked.items():
            store['%d:unpacked:%s' % (k, name)] = arr.asnumpy()
        ex = out.bind(mx.cpu(), {'data': mx.nd.array(x), 'f%d_parameters' % k: mx.nd.array(vec)})
        store['%d:output' % k] = ex.forward(is_train=False)[0].asnumpy()
    return store


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'symbols.json'), 'w') as f:
        json.dump(gen_symbols(), f, indent=1, sort_keys=True)
    with open(os.path.join(OUT, 'io.json'), 'w') as f:
        json.dump(gen_io(), f)
    np.savez(os.path.join(OUT, 'fused.npz'), **gen_fused())


if __name__ == '__main__':
    main()
