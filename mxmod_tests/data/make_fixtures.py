"""Write the MXNet-made fixtures of the data tests (run with the oracle's Python):
/tmp/mxnet-ref/bin/python mxmod_tests/data/make_fixtures.py

fixtures/mxnet_written.rec/.idx: records written by MXNet 1.9.1 (payloads from data_cases.py,
including ones with the magic word inside, so multi-part records). fixtures/images.rec: 10 small
JPEGs packed by mxmod (data_cases.write_images), and fixtures/mxnet_batches.npz: MXNet's
ImageRecordIter batches over it for the deterministic settings of data_cases.ITER_CASES."""
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data_cases  # noqa: E402


def main():
    fix = os.path.join(HERE, 'fixtures')
    writer = mx.recordio.MXIndexedRecordIO(os.path.join(fix, 'mxnet_written.idx'),
                                           os.path.join(fix, 'mxnet_written.rec'), 'w')
    for key, payload in enumerate(data_cases.payloads()):
        writer.write_idx(key, payload)
    writer.close()
    out = {}
    rec = os.path.join(fix, 'images.rec')
    for name, cfg in data_cases.ITER_CASES.items():
        it = mx.io.ImageRecordIter(path_imgrec=rec, **cfg)
        out[name] = np.concatenate([b.data[0].asnumpy() for b in it])
        it.reset()
        out[name + '_label'] = np.concatenate([b.label[0].asnumpy() for b in it])
    np.savez_compressed(os.path.join(fix, 'mxnet_batches.npz'), **out)


if __name__ == '__main__':
    main()
