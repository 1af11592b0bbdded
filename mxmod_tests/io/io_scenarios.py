"""Iterator scenarios shared by gen_io_fixtures.py (run on MXNet) and test_iterators.py (mxmod).

Each function takes the ``mx`` module under test and returns {name: (builder, epochs)}."""
import os

import numpy as np


def _data(num, *shape):
    return np.arange(num * int(np.prod(shape, dtype=int)), dtype=np.float64).reshape((num,) + shape)


def ndarray_scenarios(mx):
    """NDArrayIter cases: every last_batch_handle, odd sizes, lists/dicts, shuffle, layout."""
    x10, y10 = _data(10, 2), np.arange(10)
    cases = {}
    for handle in ('pad', 'discard', 'roll_over'):
        for num, bsz in ((10, 4), (10, 5), (7, 3), (5, 7), (3, 8)):
            cases['nd_%s_%d_%d' % (handle, num, bsz)] = (
                lambda n=num, b=bsz, h=handle: mx.io.NDArrayIter(
                    _data(n, 2), np.arange(n), batch_size=b, last_batch_handle=h), 4)
    cases['nd_corner_tile'] = (lambda: mx.io.NDArrayIter(np.arange(10), batch_size=25), 2)
    cases['nd_list_nolabel'] = (lambda: mx.io.NDArrayIter([x10, x10 * 2], batch_size=4), 2)
    cases['nd_dict_sorted'] = (lambda: mx.io.NDArrayIter(
        {'zeta': x10, 'alpha': -x10}, {'lb': y10, 'la': y10 + 1}, batch_size=3), 2)
    cases['nd_names'] = (lambda: mx.io.NDArrayIter(x10, y10, 5, data_name='img',
                                                   label_name='lab'), 1)
    cases['nd_label_list'] = (lambda: mx.io.NDArrayIter(x10, [y10, y10], 6,
                                                        last_batch_handle='roll_over'), 3)
    cases['nd_ndarray_int'] = (lambda: mx.io.NDArrayIter(
        mx.nd.array(x10, dtype='int32'), mx.nd.array(y10, dtype='int64'), 4), 2)
    cases['nd_ndarray_int_shuffle'] = (lambda: _seeded(mx, lambda: mx.io.NDArrayIter(
        mx.nd.array(x10, dtype='int32'), y10, 4, shuffle=True)), 3)
    cases['nd_shuffle_roll'] = (lambda: _seeded(mx, lambda: mx.io.NDArrayIter(
        x10, y10, 4, shuffle=True, last_batch_handle='roll_over')), 3)
    cases['nd_shuffle_pad'] = (lambda: _seeded(mx, lambda: mx.io.NDArrayIter(
        {'a': x10, 'b': x10 + 100}, y10, 3, shuffle=True)), 2)
    cases['nd_layout_ntc'] = (lambda: mx.io.NDArrayIter(_data(6, 3, 2), np.arange(6), 4,
                                                        layout='NTC'), 2)
    cases['nd_layout_tnc'] = (lambda: mx.io.NDArrayIter(_data(6, 4, 2), None, 2,
                                                        layout='TNC', last_batch_handle='discard'), 2)
    cases['nd_float64_numpy'] = (lambda: mx.io.NDArrayIter(np.ones((4, 2), np.float64) / 3,
                                                           np.zeros(4, np.int32), 4), 1)
    return cases


def wrapper_scenarios(mx):
    """ResizeIter and PrefetchingIter over NDArrayIters."""
    x10, y10 = _data(10, 2), np.arange(10)
    return {
        'wrap_resize_grow': (lambda: mx.io.ResizeIter(mx.io.NDArrayIter(x10, y10, 4), 5), 3),
        'wrap_resize_shrink': (lambda: mx.io.ResizeIter(mx.io.NDArrayIter(x10, y10, 3), 2), 3),
        'wrap_resize_keep': (lambda: mx.io.ResizeIter(mx.io.NDArrayIter(x10, y10, 4), 2,
                                                      reset_internal=False), 4),
        'wrap_prefetch_one': (lambda: mx.io.PrefetchingIter(mx.io.NDArrayIter(x10, y10, 4)), 3),
        'wrap_prefetch_two': (lambda: mx.io.PrefetchingIter(
            [mx.io.NDArrayIter(x10, y10, 4), mx.io.NDArrayIter({'a': -x10, 'b': x10}, y10 * 2, 4)],
            rename_data=[{'data': 'd1'}, {'a': 'a2', 'b': 'b2'}],
            rename_label=[{'softmax_label': 'l1'}, {'softmax_label': 'l2'}]), 2),
        'wrap_prefetch_roll': (lambda: mx.io.PrefetchingIter(
            mx.io.NDArrayIter(x10, y10, 3, last_batch_handle='roll_over')), 3),
    }


def _seeded(mx, build):
    np.random.seed(7)
    return build()


def _write(path, rows):
    with open(path, 'w') as handle:
        handle.write(''.join(','.join(str(v) for v in row) + '\n' for row in rows))


def csv_scenarios(mx, folder):
    """CSVIter cases (writes the csv files into ``folder``)."""
    os.makedirs(folder, exist_ok=True)
    data7 = os.path.join(folder, 'data7.csv')
    label7 = os.path.join(folder, 'label7.csv')
    _write(data7, np.arange(21).reshape(7, 3) * 0.5)
    _write(label7, np.arange(7).reshape(7, 1) * 10)
    data3 = os.path.join(folder, 'data3.csv')
    _write(data3, np.arange(6).reshape(3, 2) + 1)
    ints = os.path.join(folder, 'ints.csv')
    _write(ints, [[200000001, -7, 2147483648, 3]] * 5)
    cases = {
        'csv_round_3': (lambda: mx.io.CSVIter(data_csv=data7, data_shape=(3,), label_csv=label7,
                                              batch_size=3), 4),
        'csv_round_4': (lambda: mx.io.CSVIter(data_csv=data7, data_shape=(3,), batch_size=4), 5),
        'csv_noround_3': (lambda: mx.io.CSVIter(data_csv=data7, data_shape=(3,), label_csv=label7,
                                                batch_size=3, round_batch=False), 2),
        'csv_noround_5': (lambda: mx.io.CSVIter(data_csv=data7, data_shape=(1, 3),
                                                batch_size=5, round_batch=False), 2),
        'csv_small_noround': (lambda: mx.io.CSVIter(data_csv=data3, data_shape=(2,),
                                                    batch_size=5, round_batch=False), 2),
        'csv_exact': (lambda: mx.io.CSVIter(data_csv=data7, data_shape=(3,), batch_size=7,
                                            label_csv=label7, label_shape=(1,)), 2),
        'csv_int64': (lambda: mx.io.CSVIter(data_csv=ints, data_shape=(2, 2), batch_size=2,
                                            dtype='int64'), 2),
        'csv_int32': (lambda: mx.io.CSVIter(data_csv=ints, data_shape=(4,), batch_size=2,
                                            dtype='int32', round_batch=False), 1),
        'csv_label_vec': (lambda: mx.io.CSVIter(data_csv=data3, data_shape=(2,), batch_size=2,
                                                label_csv=data3, label_shape=(2,)), 2),
    }
    return cases
