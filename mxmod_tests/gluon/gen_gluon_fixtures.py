"""Freeze MXNet 1.9.1's imperative Gluon and mx.np behaviour for the tests (run with the
oracle's Python):

    /tmp/mxnet-ref/bin/python mxmod_tests/gluon/gen_gluon_fixtures.py

Writes fixtures/gluon_layers.npz and gluon_losses.npz (outputs and gradients of every case of
layer_cases.py, imperative and hybridized), gluon_trainer.npz (parameters after Trainer
steps), gluon_saveload.npz (bytes of files MXNet writes) and gluon_meta.json (Parameter
names, prefixes, exported symbol JSON, mx.np results, the block_transcript lines)."""
import json
import os
import sys
import tempfile

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import layer_cases  # noqa: E402  pylint: disable=wrong-import-position
import gluon_cases  # noqa: E402  pylint: disable=wrong-import-position
import block_transcript  # noqa: E402  pylint: disable=wrong-import-position

OUT = os.path.join(HERE, 'fixtures')


def layers(meta):
    arrays = {}
    meta['layers'] = {}
    for name in layer_cases.LAYERS:
        for mode in ('imperative', 'hybridized'):
            if mode == 'hybridized' and name in gluon_cases.NOT_HYBRIDIZABLE:
                continue
            result, names, prefix = layer_cases.run_layer(mx, name, mode == 'hybridized')
            for key, value in result.items():
                arrays['%s/%s/%s' % (name, mode, key)] = value
            meta['layers'][name] = {'params': names, 'prefix': prefix}
    np.savez_compressed(os.path.join(OUT, 'gluon_layers.npz'), **arrays)
    return len(arrays)


def losses():
    arrays = {}
    for name in layer_cases.LOSSES:
        for mode in ('imperative', 'hybridized'):
            if mode == 'hybridized' and name in gluon_cases.NOT_HYBRIDIZABLE:
                continue
            for key, value in layer_cases.run_loss(mx, name, mode == 'hybridized').items():
                arrays['%s/%s/%s' % (name, mode, key)] = value
    np.savez_compressed(os.path.join(OUT, 'gluon_losses.npz'), **arrays)
    return len(arrays)


def trainer():
    arrays = {}
    for name in gluon_cases.TRAINER_CASES:
        for key, value in gluon_cases.run_trainer(mx, name).items():
            arrays['%s/%s' % (name, key)] = value
    np.savez_compressed(os.path.join(OUT, 'gluon_trainer.npz'), **arrays)
    return len(arrays)


def saveload(meta):
    arrays = {}
    tmp = tempfile.mkdtemp()
    files = gluon_cases.write_files(mx, tmp)
    for key, path in files.items():
        with open(path, 'rb') as handle:
            data = handle.read()
        if path.endswith('.json'):
            meta['saveload_' + key] = json.loads(data.decode('utf-8'))
        else:
            arrays[key] = np.frombuffer(data, dtype=np.uint8)
    net = gluon_cases.saveload_net(mx)
    arrays['forward'] = net(mx.nd.array(gluon_cases.SAVELOAD_INPUT)).asnumpy()
    np.savez_compressed(os.path.join(OUT, 'gluon_saveload.npz'), **arrays)


def numpy_front_end(meta):
    mx.set_np_shape(True)
    try:
        meta['np'] = gluon_cases.np_results(mx)
    finally:
        mx.set_np_shape(False)


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {}
    counts = (layers(meta), losses(), trainer())
    saveload(meta)
    numpy_front_end(meta)
    meta['transcript'] = block_transcript.transcript(mx)
    with open(os.path.join(OUT, 'gluon_meta.json'), 'w') as handle:
        json.dump(meta, handle, indent=1, sort_keys=True)
    print('wrote %d layer, %d loss and %d trainer arrays' % counts)


if __name__ == '__main__':
    main()
