"""Whole checkpoints: a manifest ties the files of one save together; a save killed (SIGKILL) or
failing at any point leaves either the previous checkpoint or a set that loading reports as torn,
never a silent mix; files and folder are synced; temporaries of killed saves disappear at the
next save; a missing folder is named."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import mxmod as mx
from mxmod import atomic_io
from mxmod.checkpoint import TornCheckpointError
from mxmod_tests.hardening import killable_save as ks
from mxmod_tests.hardening.common import MXNET_CKPT, trained_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (atomic_io function, call number, kill after the call?) -> what loading then gives:
# 1 = the previous save, 2 = the interrupted save, 'torn' = TornCheckpointError.
# A save stages symbol, params, states, then the manifest (stage_file 1-4), commits the manifest
# (commit_staged 1, fsync_dir 1), then symbol, params and states (commit_staged 2-4, fsync_dir 2).
KILL_POINTS = [
    ('stage_file', 1, False, 1), ('stage_file', 2, True, 1), ('stage_file', 3, True, 1),
    ('stage_file', 4, True, 1), ('write_file_atomic', 1, False, 1),
    ('commit_staged', 1, False, 1), ('commit_staged', 1, True, 'torn'),
    ('fsync_dir', 1, True, 'torn'), ('commit_staged', 2, False, 'torn'),
    ('commit_staged', 3, False, 'torn'), ('commit_staged', 4, False, 'torn'),
    ('commit_staged', 4, True, 2), ('fsync_dir', 2, False, 2),
]


def _temporaries(folder):
    return [n for n in os.listdir(folder) if '.tmp-' in n]


def _result(prefix):
    try:
        return ks.loaded_value(prefix)
    except TornCheckpointError as err:
        assert 'ckpt-0001' in str(err)
        return 'torn'


def _patch(name, call, after, action):
    original = getattr(atomic_io, name)
    count = [0]

    def wrapper(*args, **kwargs):
        count[0] += 1
        if count[0] == call and not after:
            action()
        result = original(*args, **kwargs)
        if count[0] == call and after:
            action()
        return result
    return wrapper


def test_manifest_lists_every_file_of_the_save(tmp_path):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 5)
    with open(prefix + '-0001.manifest.json') as handle:
        manifest = json.load(handle)
    assert sorted(manifest['files']) == ['ckpt-0001.params', 'ckpt-0001.states',
                                         'ckpt-symbol.json']
    for name, entry in manifest['files'].items():
        assert entry['bytes'] == os.path.getsize(str(tmp_path / name))
    assert manifest['optimizer_position']['num_update'] == 1
    assert ks.loaded_value(prefix) == 5


@pytest.mark.parametrize('name, call, after, expected', KILL_POINTS)
def test_sigkill_during_save(tmp_path, name, call, after, expected):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 1)
    pid = os.fork()
    if pid == 0:   # the child dies by SIGKILL at the chosen point (no cleanup runs)
        try:
            setattr(atomic_io, name, _patch(name, call, after,
                                            lambda: os.kill(os.getpid(), signal.SIGKILL)))
            ks.save(mod, prefix, 2)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert _result(prefix) == expected
    ks.save(mod, prefix, 3)            # the next save cleans up and loads whole
    assert _temporaries(str(tmp_path)) == []
    assert ks.loaded_value(prefix) == 3


# an exception raised by the code right after a staged write cannot happen in Python code
# (only a kill can strike there): those points are the SIGKILL test's
@pytest.mark.parametrize('name, call, after, expected',
                         [p for p in KILL_POINTS if not (p[0] == 'stage_file' and p[2])])
def test_failure_during_save(tmp_path, monkeypatch, name, call, after, expected):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 1)

    def fail():
        raise OSError('disk full (simulated)')
    monkeypatch.setattr(atomic_io, name, _patch(name, call, after, fail))
    with pytest.raises(OSError, match='simulated'):
        ks.save(mod, prefix, 2)
    assert _temporaries(str(tmp_path)) == []     # an exception cleans up at once
    assert _result(prefix) == expected
    monkeypatch.undo()
    ks.save(mod, prefix, 3)
    assert ks.loaded_value(prefix) == 3


def _saving_child(prefix):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    return subprocess.Popen([sys.executable, '-m', 'mxmod_tests.hardening.killable_save',
                             prefix], stdout=subprocess.PIPE, env=env, cwd=ROOT)


def _kill_while_saving(tmp_path, delay):
    prefix = str(tmp_path / 'ckpt')
    child = _saving_child(prefix)
    try:
        done = [int(child.stdout.readline())]      # the first save is complete
        time.sleep(delay)
    finally:
        child.kill()
        child.wait()
    done += [int(line) for line in child.stdout.read().split()]
    child.stdout.close()
    result = _result(prefix)
    assert result == 'torn' or done[-1] <= result <= done[-1] + 1
    return result


def test_sigkill_of_a_saving_process(tmp_path):
    _kill_while_saving(tmp_path, 0.05)
    mod = ks.make_module()
    ks.save(mod, str(tmp_path / 'ckpt'), 1000)
    assert _temporaries(str(tmp_path)) == []
    assert ks.loaded_value(str(tmp_path / 'ckpt')) == 1000


@pytest.mark.slow
def test_sigkill_of_a_saving_process_many_times(tmp_path):
    outcomes = [_kill_while_saving(tmp_path, 0.01 * k) for k in range(25)]
    assert any(o != 'torn' for o in outcomes)


def test_torn_sets_from_two_saves_are_refused(tmp_path):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 1)
    old = {n: open(str(tmp_path / n), 'rb').read() for n in os.listdir(str(tmp_path))}
    ks.save(mod, prefix, 2)
    for name in ('ckpt-0001.params', 'ckpt-0001.states', 'ckpt-0001.manifest.json'):
        new = open(str(tmp_path / name), 'rb').read()
        with open(str(tmp_path / name), 'wb') as handle:
            handle.write(old[name])
        with pytest.raises(TornCheckpointError, match='torn checkpoint|not the one saved'):
            ks.loaded_value(prefix)
        with open(str(tmp_path / name), 'wb') as handle:
            handle.write(new)
    assert ks.loaded_value(prefix) == 2


def test_torn_params_refused_by_every_loader(tmp_path):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 1)
    with open(prefix + '-0001.params', 'ab') as handle:
        handle.write(b'\0')
    for load in (lambda: mx.model.load_checkpoint(prefix, 1),
                 lambda: mx.model.load_params(prefix, 1),
                 lambda: mx.mod.Module.load(prefix, 1)):
        with pytest.raises(TornCheckpointError, match=r"ckpt-0001\.params"):
            load()


def test_states_from_another_save_refused(tmp_path):
    prefix = str(tmp_path / 'ckpt')
    mod = ks.make_module()
    ks.save(mod, prefix, 1)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=False)    # .states now stale
    assert ks.loaded_value.__name__
    mx.mod.Module.load(prefix, 1)                                   # parameters alone: fine
    with pytest.raises(TornCheckpointError, match='not part of the checkpoint'):
        mx.mod.Module.load(prefix, 1, load_optimizer_states=True)


def test_damaged_manifest_refused(tmp_path):
    prefix = str(tmp_path / 'ckpt')
    ks.save(ks.make_module(), prefix, 1)
    for text in ('{', '[]', '{"format": "mxmod-checkpoint", "files": {"a": 3}}', '\xff'):
        with open(prefix + '-0001.manifest.json', 'w', encoding='latin-1') as handle:
            handle.write(text)
        with pytest.raises(TornCheckpointError, match='manifest'):
            mx.model.load_checkpoint(prefix, 1)


def test_checkpoints_without_manifest_load_as_mxnet_wrote_them(tmp_path):
    mod = mx.mod.Module.load(MXNET_CKPT, 1, load_optimizer_states=True)
    mod.bind(data_shapes=[('data', (5, 4))], label_shapes=[('softmax_label', (5,))])
    mod.init_optimizer(optimizer='adam')
    assert sorted(mod._updater.states) == [0, 1, 2, 3]


def test_files_and_folder_are_synced(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(handle):
        synced.append(os.path.isdir('/proc/self/fd/%d' % handle)
                      if os.path.exists('/proc/self/fd/%d' % handle) else None)
        real_fsync(handle)
    monkeypatch.setattr(os, 'fsync', fsync)
    mod = ks.make_module()
    ks.save(mod, str(tmp_path / 'ckpt'), 1)
    assert synced.count(False) == 4        # symbol, params, states, manifest
    assert synced.count(True) >= 1         # the folder, after the renames


def test_missing_folder_named_not_a_temporary(tmp_path):
    target = str(tmp_path / 'nope' / 'net')
    mod = trained_module(steps=0)
    for save in (lambda: mod.save_checkpoint(target, 1, save_optimizer_states=True),
                 lambda: mx.nd.save(target + '.params', {'a': mx.nd.ones(2)}),
                 lambda: mod.symbol.save(target + '-symbol.json'),
                 lambda: mod.save_params(target + '.params'),
                 lambda: mod.save_optimizer_states(target + '.states')):
        with pytest.raises(mx.MXNetError, match=r"'.*nope/net.*'.*directory .*nope' does "
                                                r"not exist") as info:
            save()
        assert isinstance(info.value, FileNotFoundError) and '.tmp-' not in str(info.value)


def test_stale_temporaries_of_dead_processes_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, '-c', 'pass'])
    dead.wait()
    host = atomic_io._HOST
    stale = '.net-0001.params.tmp-%d@%s.abc123' % (dead.pid, host)
    alive = '.net-0001.params.tmp-%d@%s.def456' % (os.getpid(), host)
    elsewhere = '.net-0001.params.tmp-%d@%s.ghi789' % (dead.pid, host + 'x')
    for name in (stale, alive, elsewhere, 'unrelated.tmp-1@x.y'):
        (tmp_path / name).write_bytes(b'partial')
    mx.nd.save(str(tmp_path / 'other.params'), [mx.nd.ones(1)])
    assert sorted(os.listdir(str(tmp_path))) == sorted([alive, elsewhere, 'unrelated.tmp-1@x.y',
                                                        'other.params'])
