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


def _read_fifo(path, sink):
    with open(path, 'rb') as handle:
        sink.append(handle.read())


def test_a_named_pipe_is_written_into_not_replaced(tmp_path):
    """Saving to a device or a named pipe (``/dev/null``, a FIFO a reader waits on) writes the
    bytes into it, as MXNet does; renaming a temporary over it would replace the device with a
    regular file (run as root, ``mx.nd.save('/dev/null', ...)`` destroyed /dev/null)."""
    import stat
    import threading
    plain = str(tmp_path / 'plain.params')
    data = {'arg:w': mx.nd.array([[1.0, 2.0], [3.0, 4.0]])}
    mx.nd.save(plain, data)
    fifo = str(tmp_path / 'pipe')
    os.mkfifo(fifo)
    received = []
    for save in (lambda: mx.nd.save(fifo, data),
                 lambda: mx.sym.var('data').save(fifo)):
        reader = threading.Thread(target=_read_fifo, args=(fifo, received), daemon=True)
        reader.start()
        save()
        reader.join(30)
        assert not reader.is_alive()
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received[0] == open(plain, 'rb').read()
    mx.nd.save(fifo + '-not-yet', data)   # a new name is still an ordinary atomic save
    assert open(fifo + '-not-yet', 'rb').read() == open(plain, 'rb').read()
    assert received[1] == mx.sym.var('data').tojson().encode()
    assert sorted(os.listdir(tmp_path)) == ['pipe', 'pipe-not-yet', 'plain.params']


def test_a_symbolic_link_is_written_through(tmp_path):
    """As open(fname, 'wb') and MXNet's savers: saving to a symbolic link replaces the file it
    points to (atomically, beside it) and keeps the link; a chain of links and a link to a file
    not yet there are followed too. Checkpoints (several files and a manifest) as well."""
    real_dir = tmp_path / 'store'
    real_dir.mkdir()
    real = real_dir / 'weights.params'
    mx.nd.save(str(real), {'arg:w': mx.nd.zeros((2,))})
    link = tmp_path / 'latest.params'
    link.symlink_to(real)
    chain = tmp_path / 'chain.params'
    chain.symlink_to(link)
    for k, name in enumerate((link, chain)):
        mx.nd.save(str(name), {'arg:w': mx.nd.ones((2,)) * (k + 1)})
        assert os.path.islink(name)
        assert mx.nd.load(str(real))['arg:w'].asnumpy().tolist() == [k + 1.0] * 2
    assert sorted(os.listdir(real_dir)) == ['weights.params']     # no temporary left
    dangling = tmp_path / 'new.json'
    dangling.symlink_to(real_dir / 'net-symbol.json')
    mx.sym.var('data').save(str(dangling))
    assert os.path.islink(dangling) and (real_dir / 'net-symbol.json').is_file()
    assert mx.sym.load(str(dangling)).list_arguments() == ['data']
    # a checkpoint whose params file is a link into another folder
    prefix = str(tmp_path / 'net')
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    (tmp_path / 'net-0003.params').symlink_to(real)
    mx.model.save_checkpoint(prefix, 3, sym, {'fc_weight': mx.nd.ones((2, 3)),
                                              'fc_bias': mx.nd.zeros((2,))}, {})
    assert os.path.islink(tmp_path / 'net-0003.params')
    _, args, _ = mx.model.load_checkpoint(prefix, 3)
    assert args['fc_weight'].asnumpy().tolist() == [[1.0] * 3] * 2
    assert sorted(mx.nd.load(str(real))) == ['arg:fc_bias', 'arg:fc_weight']
