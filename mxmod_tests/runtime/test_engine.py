"""``mx.engine``: the bulk size is set, returned and restored per thread; results do not
depend on it."""
import threading

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


def test_set_bulk_size_returns_the_previous_size():
    assert mx.engine.set_bulk_size(7) == 0
    assert mx.engine.set_bulk_size(3) == 7
    assert mx.engine.set_bulk_size(0) == 3
    for bad in (-1, 2.5, '4', True):
        with pytest.raises(MXNetError, match='set_bulk_size'):
            mx.engine.set_bulk_size(bad)


def test_bulk_scope_restores_and_is_per_thread():
    seen = []
    with mx.engine.bulk(10):
        worker = threading.Thread(target=lambda: seen.append(mx.engine.set_bulk_size(1)))
        worker.start()
        worker.join()
        with pytest.raises(ValueError):
            with mx.engine.bulk(4):
                raise ValueError('inside')
        assert mx.engine.set_bulk_size(10) == 10
    assert seen == [0]                       # another thread has its own setting
    assert mx.engine.set_bulk_size(0) == 0   # restored after the scope


def test_results_do_not_depend_on_bulking():
    def run():
        x = mx.nd.ones((10,))
        x *= 2
        for _ in range(20):
            x += 1
        return x.asnumpy()
    with mx.engine.bulk(10):
        bulked = run()
    np.testing.assert_array_equal(bulked, run())
    np.testing.assert_array_equal(bulked, np.full(10, 22.0))
