"""mx.recordio against files written by MXNet 1.9.1 (fixtures) and, with the oracle, read back."""
import os
import pickle
import subprocess

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from mxmod_tests.data import data_cases

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def _write(tmp_path, payloads):
    rec, idx = str(tmp_path / 'x.rec'), str(tmp_path / 'x.idx')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for key, payload in enumerate(payloads):
        writer.write_idx(key, payload)
    writer.close()
    return rec, idx


def test_bytes_equal_mxnet_written(tmp_path):
    rec, idx = _write(tmp_path, data_cases.payloads())
    for mine, theirs in ((rec, 'mxnet_written.rec'), (idx, 'mxnet_written.idx')):
        with open(mine, 'rb') as a, open(os.path.join(FIX, theirs), 'rb') as b:
            assert a.read() == b.read()


def test_reads_mxnet_written():
    reader = mx.recordio.MXRecordIO(os.path.join(FIX, 'mxnet_written.rec'), 'r')
    assert [reader.read() for _ in data_cases.payloads()] == data_cases.payloads()
    assert reader.read() is None
    reader.reset()
    assert reader.read() == b''
    indexed = mx.recordio.MXIndexedRecordIO(os.path.join(FIX, 'mxnet_written.idx'),
                                            os.path.join(FIX, 'mxnet_written.rec'), 'r')
    expected = data_cases.payloads()
    for key in reversed(indexed.keys):
        assert indexed.read_idx(key) == expected[key]


def test_pack_unpack_labels():
    header, body = mx.recordio.unpack(mx.recordio.pack((0, 3.5, 7, 9), b'img'))
    assert (header.flag, header.label, header.id, header.id2, body) == (0, 3.5, 7, 9, b'img')
    label = np.array([1.5, 2, 3], np.float32)
    header, body = mx.recordio.unpack(mx.recordio.pack(mx.recordio.IRHeader(0, label, 1, 0), b'z'))
    assert header.flag == 3 and body == b'z'
    np.testing.assert_array_equal(header.label, label)


def test_pack_img_roundtrip():
    img = np.tile(np.arange(32, dtype=np.uint8)[:, None, None] * 8, (1, 20, 3))
    packed = mx.recordio.pack_img((0, 1.0, 5, 0), img, quality=100, img_fmt='.png')
    header, out = mx.recordio.unpack_img(packed)
    assert header.id == 5
    np.testing.assert_array_equal(out, img)


def test_pickle_and_tell(tmp_path):
    rec, idx = _write(tmp_path, [b'abc', b'defgh'])
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read_idx(1) == b'defgh' and clone.keys == [0, 1]
    writer = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'y.idx'), str(tmp_path / 'y.rec'), 'w')
    assert writer.tell() == 0
    writer.write_idx(0, b'abcde')
    assert writer.tell() == 16


def test_errors_name_the_file(tmp_path):
    with pytest.raises(mx.MXNetError, match='nothere.rec'):
        mx.recordio.MXRecordIO(str(tmp_path / 'nothere.rec'), 'r')
    with pytest.raises(ValueError):
        mx.recordio.MXRecordIO(str(tmp_path / 'a.rec'), 'x')
    rec, idx = _write(tmp_path, [b'0123456789' * 10])
    with open(rec, 'r+b') as handle:
        handle.truncate(50)
    with pytest.raises(mx.MXNetError, match='x.rec.*byte 0'):
        mx.recordio.MXRecordIO(rec, 'r').read()
    with open(idx, 'a') as handle:
        handle.write('7\t4096\n')
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    with pytest.raises(mx.MXNetError, match='past the end'):
        reader.read_idx(7)


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle')
def test_mxnet_reads_mxmod_written(tmp_path):
    rec, idx = _write(tmp_path, data_cases.payloads())
    script = ('import mxnet as mx, sys; r = mx.recordio.MXIndexedRecordIO(sys.argv[1], '
              'sys.argv[2], "r"); sys.stdout.buffer.write(repr([r.read_idx(k) for k in '
              'r.keys]).encode())')
    out = subprocess.run([ORACLE_PYTHON, '-c', script, idx, rec], capture_output=True,
                         check=True).stdout
    assert out.decode() == repr(data_cases.payloads())
