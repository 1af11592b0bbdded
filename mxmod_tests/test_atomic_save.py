"""Saving never destroys an earlier file: bad input raises before anything is written, and a write
that fails part-way leaves the old file and no temporary behind."""
import os

import pytest

import mxmod as mx


def test_bad_input_keeps_existing_params(tmp_path):
    fname = str(tmp_path / 'net-0001.params')
    mx.nd.save(fname, {'arg:w': mx.nd.ones((2, 2))})
    before = open(fname, 'rb').read()
    with pytest.raises((TypeError, ValueError, mx.MXNetError)):
        mx.nd.save(fname, {'arg:w': 'not an array'})
    assert open(fname, 'rb').read() == before


def test_failed_write_keeps_existing_files(tmp_path, monkeypatch):
    prefix = str(tmp_path / 'net')
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    mx.model.save_checkpoint(prefix, 1, sym, {'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros((2,))}, {})
    files = sorted(os.listdir(tmp_path))
    saved = {f: open(os.path.join(tmp_path, f), 'rb').read() for f in files}

    def broken_replace(src, dst):
        raise OSError('disk full (simulated)')
    monkeypatch.setattr(os, 'replace', broken_replace)
    with pytest.raises(OSError, match='simulated'):
        mx.model.save_checkpoint(prefix, 1, sym, {'fc_weight': mx.nd.zeros((2, 3))}, {})
    assert sorted(os.listdir(tmp_path)) == files
    for f, data in saved.items():
        assert open(os.path.join(tmp_path, f), 'rb').read() == data
