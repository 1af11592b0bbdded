"""Regenerate fixtures/*.params with the oracle (MXNet 1.9.1):
/tmp/mxnet-ref/bin/python mxmod_tests/ndarray/gen_serialization_fixtures.py"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def cases():
    """name -> (data passed to mx.nd.save, numpy arrays it holds)."""
    rng = np.random.RandomState(3)
    f32 = rng.randn(3, 4).astype(np.float32)
    return {
        'bool': [mx.nd.array([True, False, True], dtype='bool')],
        'scalar': {'s': mx.nd.array(np.float32(3.5))},  # MXNet writes it; MXNet cannot read it
        'empty': {'e0': mx.nd.array(np.zeros((0,), np.float32)),
                  'e1': mx.nd.array(np.zeros((2, 0, 3)), dtype='int64')},
        'cpu1': {'w': mx.nd.array(f32, ctx=mx.cpu(1)), 'p': mx.nd.array([1, 2], ctx=mx.cpu_pinned(0))},
        'unicode': {u'gewicht_\u00e4\u4e2d': mx.nd.array([1.5, -2.25], dtype='float64')},
        'mixed_list': [mx.nd.array(f32), mx.nd.array([[1, 2]], dtype='int8'),
                       mx.nd.array([7], dtype='uint8'), mx.nd.array([0.1], dtype='float16')],
    }


def main():
    os.makedirs(HERE, exist_ok=True)
    arrays = {}
    for name, data in cases().items():
        mx.nd.save(os.path.join(HERE, name + '.params'), data)
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            arrays['%s/%s' % (name, key)] = value.asnumpy()
    np.savez(os.path.join(HERE, 'arrays.npz'), **arrays)


if __name__ == '__main__':
    main()
