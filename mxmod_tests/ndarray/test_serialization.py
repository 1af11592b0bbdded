"""mx.nd.save / load / load_frombuffer against files written by MXNet 1.9.1.

Golden files come from mxmod_tests/golden; fixtures/*.params were written by the oracle with
gen_serialization_fixtures.py (fixtures/arrays.npz holds the same arrays)."""
import os
import struct

import numpy as np
import pytest

import mxmod as mx
from mxmod.ndarray import serialization
from mxmod_tests.conftest import GOLDEN

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
GOLDEN_FILES = ['probe_dict.params', 'probe_list.params', 'probe_alltypes.params',
                'probe_empty.params', 'fit_mlp-0001.params', 'fit_mlp_mod-0002.params']
FIXTURE_FILES = ['bool', 'scalar', 'empty', 'cpu1', 'unicode', 'mixed_list']


def _bytes(path):
    with open(path, 'rb') as handle:
        return handle.read()


def _fixture_arrays(name):
    arrays = np.load(os.path.join(FIXTURES, 'arrays.npz'))
    prefix = name + '/'
    return {k[len(prefix):]: arrays[k] for k in arrays.files if k.startswith(prefix)}


def _assert_same(loaded, expected):
    assert loaded.context == mx.cpu(0)
    assert loaded.shape == expected.shape
    assert loaded.dtype == expected.dtype.type
    np.testing.assert_array_equal(loaded.asnumpy(), expected)


def test_probe_dict_values_and_order():
    data = mx.nd.load(os.path.join(GOLDEN, 'probe_dict.params'))
    assert list(data) == ['arg:w_f32', 'arg:b_f16', 'aux:i_i32']
    _assert_same(data['arg:w_f32'], np.arange(6, dtype=np.float32).reshape(2, 3))
    _assert_same(data['arg:b_f16'], np.array([1, -2, 0.5], np.float16))
    _assert_same(data['aux:i_i32'], np.array([[1, -1], [2, 3]], np.int32))


def test_probe_list_and_empty():
    data = mx.nd.load(os.path.join(GOLDEN, 'probe_list.params'))
    assert isinstance(data, list) and len(data) == 1
    _assert_same(data[0], np.array([7], np.float32))
    assert mx.nd.load(os.path.join(GOLDEN, 'probe_empty.params')) == []


def test_probe_alltypes_matches_npz():
    data = mx.nd.load(os.path.join(GOLDEN, 'probe_alltypes.params'))
    expected = np.load(os.path.join(GOLDEN, 'probe_alltypes.npz'))
    assert list(data) == list(expected.files)
    for name in expected.files:
        _assert_same(data[name], expected[name])


@pytest.mark.parametrize('name', FIXTURE_FILES)
def test_oracle_fixtures_load(name):
    data = mx.nd.load(os.path.join(FIXTURES, name + '.params'))
    expected = _fixture_arrays(name)
    if isinstance(data, list):
        data = {str(i): arr for i, arr in enumerate(data)}
    assert sorted(data) == sorted(expected)
    for key, arr in data.items():
        _assert_same(arr, expected[key])


@pytest.mark.parametrize('path', [os.path.join(GOLDEN, f) for f in GOLDEN_FILES]
                         + [os.path.join(FIXTURES, f + '.params') for f in FIXTURE_FILES])
def test_resave_is_byte_identical(path, tmp_path):
    """Loading then saving keeps MXNet's bytes (contexts here are all cpu(0) after load, and
    the originals were written from cpu(0) except cpu1.params, which is rebuilt below)."""
    if path.endswith('cpu1.params'):
        pytest.skip('stored contexts are cpu(1)/cpu_pinned(0); see test_context_is_recorded')
    out = str(tmp_path / 'again.params')
    mx.nd.save(out, mx.nd.load(path))
    assert _bytes(out) == _bytes(path)


def test_context_is_recorded(tmp_path):
    expected = _fixture_arrays('cpu1')
    out = str(tmp_path / 'c.params')
    mx.nd.save(out, {'w': mx.nd.array(expected['w'], ctx=mx.cpu(1)),
                     'p': mx.nd.array(expected['p'], ctx=mx.cpu_pinned(0))})
    assert _bytes(out) == _bytes(os.path.join(FIXTURES, 'cpu1.params'))


def test_fresh_arrays_written_like_mxnet(tmp_path):
    """Arrays built in mxmod (not loaded) give the oracle's bytes, 0-d and empty ones included."""
    for name in ['bool', 'scalar', 'empty', 'unicode', 'mixed_list']:
        expected = _fixture_arrays(name)
        arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in expected.items()}
        if name in ('bool', 'mixed_list'):
            data = [arrays[str(i)] for i in range(len(arrays))]
        else:
            data = {k: arrays[k] for k in sorted(arrays)}
        if name == 'empty':
            data = {'e0': arrays['e0'], 'e1': arrays['e1']}
        out = str(tmp_path / (name + '.params'))
        mx.nd.save(out, data)
        assert _bytes(out) == _bytes(os.path.join(FIXTURES, name + '.params')), name


def test_scalar_roundtrip_keeps_zero_dims(tmp_path):
    out = str(tmp_path / 's.params')
    mx.nd.save(out, [mx.nd.array(np.float64(-1.25), dtype='float64'), mx.nd.ones((2,))])
    loaded = mx.nd.load(out)
    assert loaded[0].shape == () and loaded[0].asnumpy() == -1.25
    _assert_same(loaded[1], np.ones(2, np.float32))


def test_single_ndarray_saved_as_list(tmp_path):
    out = str(tmp_path / 'one.params')
    mx.nd.save(out, mx.nd.array([[1, 2]]))
    loaded = mx.nd.load(out)
    assert isinstance(loaded, list)
    _assert_same(loaded[0], np.array([[1, 2]], np.float32))


def test_load_frombuffer_matches_load():
    path = os.path.join(GOLDEN, 'probe_dict.params')
    from_file = mx.nd.load(path)
    from_buf = mx.nd.load_frombuffer(_bytes(path))
    assert list(from_buf) == list(from_file)
    for key in from_file:
        _assert_same(from_buf[key], from_file[key].asnumpy())
    with pytest.raises(TypeError, match='buf'):
        mx.nd.load_frombuffer(3)


def _record(magic, shape, flag, payload, stype=True, dims='q'):
    head = struct.pack('<I', magic) + (struct.pack('<i', 0) if stype else b'')
    if dims == 'q':
        head += struct.pack('<i', len(shape)) + struct.pack('<%dq' % len(shape), *shape)
    else:
        head += struct.pack('<%dI' % len(shape), *shape)
    return head + struct.pack('<iii', 1, 0, flag) + payload


def _container(records, names=()):
    body = struct.pack('<QQQ', 0x112, 0, len(records)) + b''.join(records)
    body += struct.pack('<Q', len(names))
    for name in names:
        body += struct.pack('<Q', len(name)) + name.encode()
    return body


def test_legacy_and_v3_records():
    v1 = struct.pack('<Ii', 0xF993FAC8, 1) + struct.pack('<q', 2) + struct.pack('<iii', 1, 0, 4) \
        + np.array([5, -6], np.int32).tobytes()
    pre_v1 = struct.pack('<II', 1, 2) + struct.pack('<iii', 1, 0, 0) + np.array([1, 2], '<f4').tobytes()
    v3 = _record(0xF993FACA, (), 0, np.array(3.5, '<f4').tobytes())
    loaded = mx.nd.load_frombuffer(_container([v1, pre_v1], ['a', 'b']))
    _assert_same(loaded['a'], np.array([5, -6], np.int32))
    _assert_same(loaded['b'], np.array([1, 2], np.float32))
    with mx.np_shape(True):
        loaded = mx.nd.load_frombuffer(_container([v3], ['c']))
    _assert_same(loaded['c'], np.array(3.5, np.float32))


def test_v3_records_need_np_shape_semantics():
    # MXNet 1.9.1 (NDArray::Load): a V3 record (saved under np shape semantics) loads only under
    # them; older records refuse to load under thread-local np shape semantics
    v2 = _record(0xF993FAC9, (2,), 0, np.array([1, 2], '<f4').tobytes())
    v3 = _record(0xF993FACA, (), 0, np.array(3.5, '<f4').tobytes())
    with pytest.raises(mx.MXNetError, match='saved in np shape semantics'):
        mx.nd.load_frombuffer(_container([v3]))
    with mx.np_shape(True):
        with pytest.raises(mx.MXNetError, match='not saved in np shape semantics'):
            mx.nd.load_frombuffer(_container([v2]))
    prev = mx.util.set_np_shape(2)      # globally on: the check is skipped for old records
    try:
        _assert_same(mx.nd.load_frombuffer(_container([v2]))[0], np.array([1, 2], np.float32))
    finally:
        mx.util.set_np_shape(prev)


def test_save_under_np_shape_writes_v3(tmp_path):
    path = str(tmp_path / 'x.params')
    arrays = [mx.nd.array(np.arange(3)), mx.nd.array(np.zeros((2, 0, 1)))]
    with mx.np_shape(True):
        arrays.append(mx.nd.array(np.array(7.0)))
        mx.nd.save(path, arrays)
        with mx.np_shape(True):
            back = mx.nd.load(path)
    raw = open(path, 'rb').read()
    assert struct.unpack('<I', raw[24:28])[0] == 0xF993FACA
    assert [b.shape for b in back] == [(3,), (2, 0, 1), ()]
    assert float(back[2].asnumpy()) == 7.0
    with pytest.raises(mx.MXNetError):
        mx.nd.load(path)
    mx.nd.save(path, arrays[:2])
    with mx.np_shape(True):
        with pytest.raises(mx.MXNetError):
            mx.nd.load(path)
    assert [b.shape for b in mx.nd.load(path)] == [(3,), (2, 0, 1)]


def test_none_record_loads_as_none():
    none = struct.pack('<Iii', 0xF993FAC9, 0, 0)
    dense = _record(0xF993FAC9, (1,), 0, np.array([2], '<f4').tobytes())
    loaded = mx.nd.load_frombuffer(_container([none, dense]))
    assert loaded[0] is None
    _assert_same(loaded[1], np.array([2], np.float32))


@pytest.mark.parametrize('data,exc,match', [
    ([np.ones(2)], TypeError, 'dict str->NDArray'),
    ({1: mx.nd.ones(2)}, TypeError, 'dict str->NDArray'),
    ({'a': np.ones(2)}, TypeError, 'dict str->NDArray'),
    ((mx.nd.ones(2),), ValueError, 'tuple'),
    (3, ValueError, 'int'),
])
def test_save_rejects_bad_data(tmp_path, data, exc, match):
    with pytest.raises(exc, match=match):
        mx.nd.save(str(tmp_path / 'x.params'), data)


def test_save_rejects_unsupported_dtype(tmp_path):
    arr = mx.nd.from_xp(np.ones(2, np.uint16), mx.cpu())
    with pytest.raises(TypeError, match='uint16'):
        mx.nd.save(str(tmp_path / 'x.params'), [arr])


def test_missing_file_names_it(tmp_path):
    path = str(tmp_path / 'nope.params')
    with pytest.raises(mx.MXNetError, match='nope.params'):
        mx.nd.load(path)
    with pytest.raises(TypeError, match='fname'):
        mx.nd.load(3)


def test_corrupt_files_name_file_and_expectation(tmp_path):
    good = _bytes(os.path.join(GOLDEN, 'probe_dict.params'))
    cases = {'garbage.params': (b'hello world garbage bytes', 'list magic'),
             'short.params': (good[:10], 'list header'),
             'trunc.params': (good[:100], 'array 1'),
             'names.params': (good[:0xb6] + struct.pack('<Q', 2), 'expected 0 or 3'),
             'dtype.params': (good[:0x3c] + struct.pack('<i', 99) + good[0x40:], 'dtype code 99')}
    for fname, (payload, match) in cases.items():
        path = tmp_path / fname
        path.write_bytes(payload)
        with pytest.raises(mx.MXNetError, match=match) as info:
            mx.nd.load(str(path))
        assert fname in str(info.value)


def test_truncated_sparse_record_rejected():
    sparse = struct.pack('<Iii', 0xF993FAC9, 1, 1)      # row_sparse, storage shape cut short
    with pytest.raises(mx.MXNetError, match='shape of array 0'):
        mx.nd.load_frombuffer(_container([sparse]))


@pytest.mark.skipif(mx.context.num_gpus() == 0, reason='needs a GPU (cupy)')
def test_gpu_array_saved_from_host_copy(tmp_path):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = str(tmp_path / 'g.params')
    mx.nd.save(out, {'g': mx.nd.array(values, ctx=mx.gpu(0))})
    raw = _bytes(out)
    ref = str(tmp_path / 'c.params')
    mx.nd.save(ref, {'g': mx.nd.array(values)})
    expected = bytearray(_bytes(ref))
    struct.pack_into('<i', expected, 24 + 12 + 16, 2)  # dev_type gpu in the record's context
    assert raw == bytes(expected)
    _assert_same(mx.nd.load(out)['g'], values)


def test_single_record_helpers():
    """One record alone (the bytes MXNet pickles as an NDArray's handle)."""
    arr = mx.nd.array([[1, 2], [3, 4]], dtype='int64')
    raw = serialization.record_to_bytes(arr)
    whole = _bytes(os.path.join(FIXTURES, 'empty.params'))
    assert raw[:4] == whole[24:28]  # V2 magic, as in a file
    np.testing.assert_array_equal(serialization.record_from_bytes(raw), arr.asnumpy())
    assert serialization.record_from_bytes(raw).dtype == np.int64
    with pytest.raises(mx.MXNetError, match='2 bytes follow'):
        serialization.record_from_bytes(raw + b'xx')
    with pytest.raises(TypeError, match='NDArray'):
        serialization.record_to_bytes(np.ones(2))


def test_non_native_byte_order_and_strided_arrays(tmp_path):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    swapped = mx.nd.from_xp(values.astype('>f4'), mx.cpu())
    strided = mx.nd.from_xp(np.asfortranarray(values), mx.cpu())
    plain = str(tmp_path / 'plain.params')
    mx.nd.save(plain, [mx.nd.array(values)])
    for arr in (swapped, strided):
        out = str(tmp_path / 'x.params')
        mx.nd.save(out, [arr])
        assert _bytes(out) == _bytes(plain)
