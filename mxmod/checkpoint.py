"""Whole checkpoints: the files of one save (``prefix-symbol.json``, ``prefix-%04d.params``,
``prefix-%04d.states``...) are recognisably one save.

A save stages every file as a synced temporary beside its target, then writes
``prefix-%04d.manifest.json`` (the size and SHA-256 of each file, and the optimizer's position
for an exact resume), then renames the temporaries over the targets and syncs the folder. A crash
before the manifest leaves the previous checkpoint untouched (its stale temporaries are removed
at the next save); a crash after it leaves files that do not match the manifest, which loading
reports as a torn checkpoint instead of mixing two saves. MXNet ignores the manifest, so it still
loads every file; checkpoints without a manifest (MXNet's) load unchecked.

A load that runs while another process saves the same checkpoint can see the new manifest with
some old files, or the reverse. :func:`load_whole` therefore loads again whenever the files
changed during a load that found them torn, until one load sees a whole save (the old one or the
new one); it raises :class:`TornCheckpointError` only for a set that stays torn while nothing
changes for :data:`SETTLE_SECONDS` (an interrupted save), or that keeps changing without ever
being whole for :data:`RETRY_SECONDS`."""
import hashlib
import json
import os
import re
import time
import uuid

from .base import MXNetError
from . import atomic_io

__all__ = ['TornCheckpointError', 'manifest_name', 'save_files', 'CheckpointReader',
           'reader_for', 'load_whole', 'load_whole_for']

FORMAT = 'mxmod-checkpoint'
VERSION = 1
_EPOCH_FILE = re.compile(r'^(?P<prefix>.*)-(?P<epoch>\d{4,})\.(params|states)$')
# a torn set that stays unchanged this long is reported (no save is under way)
SETTLE_SECONDS = 1.0
# longest a load keeps retrying while saves keep replacing the files
RETRY_SECONDS = 30.0


class TornCheckpointError(MXNetError):
    """The files of a checkpoint are not those of one complete save."""


def manifest_name(prefix, epoch):
    """``prefix-%04d.manifest.json``."""
    return '%s-%04d.manifest.json' % (prefix, epoch)


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _stage_all(contents, writers):
    """Stage each file; return {target: (temporary, entry)}."""
    staged = {}
    try:
        for target, data in contents.items():
            raw = data.encode('utf-8') if isinstance(data, str) else bytes(data)
            staged[target] = (atomic_io.stage_file(target, raw),
                              {'bytes': len(raw), 'sha256': _digest(raw)})
        for target, write in writers.items():
            tmp = atomic_io.new_stage_name(target)
            staged[target] = (tmp, None)
            write(tmp)
            with open(tmp, 'rb') as handle:
                raw = handle.read()
            staged[target] = (tmp, {'bytes': len(raw), 'sha256': _digest(raw)})
    except BaseException:
        for tmp, _ in staged.values():
            atomic_io.discard_staged(tmp)
        raise
    return staged


def save_files(prefix, epoch, contents, writers=None, extra=None):
    """Save the files of one checkpoint as one save.

    Parameters
    ----------
    prefix : str
        Path prefix of the checkpoint (its folder must exist).
    epoch : int
        The epoch number in the file names.
    contents : dict of str to bytes or str
        Target path -> contents.
    writers : dict of str to callable, optional
        Target path -> ``write(path)`` for files another component writes (a kvstore's
        optimizer states); each is called with a temporary path.
    extra : dict, optional
        JSON-serializable entries stored in the manifest (e.g. the optimizer position).
    """
    staged = _stage_all(dict(contents), dict(writers or {}))
    manifest = {'format': FORMAT, 'version': VERSION, 'epoch': int(epoch),
                'save_id': uuid.uuid4().hex, 'time': time.time(),
                'files': {os.path.basename(t): entry for t, (_, entry) in staged.items()}}
    manifest.update(extra or {})
    pending = list(staged.items())
    try:
        atomic_io.write_file_atomic(manifest_name(prefix, epoch),
                                    json.dumps(manifest, indent=1, sort_keys=True))
        while pending:
            target, (tmp, _) = pending[0]
            atomic_io.commit_staged(tmp, target)
            pending.pop(0)
    finally:
        for _, (tmp, _) in pending:
            atomic_io.discard_staged(tmp)
    atomic_io.fsync_dir(os.path.dirname(os.path.abspath(manifest_name(prefix, epoch))))


def _load_manifest(path):
    try:
        with open(path, 'rb') as handle:
            manifest = json.loads(handle.read().decode('utf-8'))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise TornCheckpointError('checkpoint manifest %r cannot be read (%s); the checkpoint '
                                  'cannot be verified' % (path, err)) from None
    if not isinstance(manifest, dict) or manifest.get('format') != FORMAT:
        raise TornCheckpointError('%r is not an mxmod checkpoint manifest' % path)
    files = manifest.get('files')
    if not isinstance(files, dict) or not all(
            isinstance(e, dict) and isinstance(e.get('bytes'), int)
            and isinstance(e.get('sha256'), str) for e in files.values()):
        raise TornCheckpointError('checkpoint manifest %r is malformed (no valid "files" '
                                  'table)' % path)
    return manifest


class CheckpointReader(object):
    """Reads the files of one checkpoint, checking each against its manifest when there is one.

    Parameters
    ----------
    prefix : str
    epoch : int
    """

    def __init__(self, prefix, epoch):
        self.prefix, self.epoch = prefix, epoch
        self.manifest_path = manifest_name(prefix, epoch)
        self.manifest = _load_manifest(self.manifest_path)

    @property
    def position(self):
        """The optimizer position saved with the checkpoint (None when absent)."""
        return (self.manifest or {}).get('optimizer_position')

    def read(self, fname, what, required=True):
        """The bytes of ``fname``, verified against the manifest.

        Parameters
        ----------
        fname : str
        what : str
            What the file is ('parameters', 'optimizer states'), for errors.
        required : bool
            Whether a manifest must list the file (False for the symbol, which a
            parameters-only save does not write).
        """
        try:
            with open(fname, 'rb') as handle:
                data = handle.read()
        except OSError as err:
            if isinstance(err, FileNotFoundError) and self.manifest is not None and \
                    os.path.basename(fname) in self.manifest['files']:
                raise TornCheckpointError(
                    'torn checkpoint: the %s file %r listed in %r is missing; the save was '
                    'interrupted (or is still under way)' % (what, fname, self.manifest_path)) \
                    from None
            raise MXNetError('cannot read the %s file %r of checkpoint %s-%04d: %s'
                             % (what, fname, self.prefix, self.epoch,
                                err.strerror or err)) from None
        if self.manifest is not None:
            self._verify(fname, data, what, required)
        return data

    def _verify(self, fname, data, what, required):
        entry = self.manifest['files'].get(os.path.basename(fname))
        if entry is None:
            if required:
                raise TornCheckpointError(
                    'the %s file %r is not part of the checkpoint saved as %r (which holds %s); '
                    'it comes from another save' % (what, fname, self.manifest_path,
                                                    sorted(self.manifest['files'])))
            return
        if entry['bytes'] != len(data) or entry['sha256'] != _digest(data):
            raise TornCheckpointError(
                'torn checkpoint: the %s file %r (%d bytes) is not the one saved with %r '
                '(%d bytes, sha256 %s...); the save was interrupted or the file was replaced '
                'by another save' % (what, fname, len(data), self.manifest_path,
                                     entry['bytes'], entry['sha256'][:12]))


def _fingerprint(prefix):
    """(name, inode, size, mtime) of every file of the folder whose name starts like ``prefix``'s
    files (any save of the prefix changes it)."""
    folder, stem = os.path.split(os.fspath(prefix))
    found = []
    try:
        with os.scandir(folder or '.') as entries:
            for entry in entries:
                if entry.name.startswith(stem) or entry.name.startswith('.' + stem):
                    try:
                        info = entry.stat()
                    except OSError:         # removed meanwhile
                        continue
                    found.append((entry.name, info.st_ino, info.st_size, info.st_mtime_ns))
    except OSError:
        return None
    return sorted(found)


def _wait_for_change(prefix, before, deadline):
    """Poll the files of ``prefix`` until they differ from ``before`` (True: load again) or stay
    as they are for SETTLE_SECONDS, or the deadline passes (False)."""
    still_since, pause = time.monotonic(), 0.001
    while True:
        if _fingerprint(prefix) != before:
            return True
        now = time.monotonic()
        if now - still_since >= SETTLE_SECONDS or now >= deadline:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


def load_whole(prefix, epoch, load):
    """``load(reader)`` with a :class:`CheckpointReader` of checkpoint ``prefix``/``epoch``,
    loaded again while a concurrent save replaces its files, so that what it returns comes from
    one whole save.

    Parameters
    ----------
    prefix : str
    epoch : int
    load : callable
        Reads every file it needs through the reader it is given.

    Raises
    ------
    TornCheckpointError
        When the set stays torn with no save under way (SETTLE_SECONDS), or saves keep
        replacing it for RETRY_SECONDS without one load seeing a whole save.
    """
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        before = _fingerprint(prefix)
        reader = CheckpointReader(prefix, epoch)
        try:
            return load(reader)
        except TornCheckpointError as err:
            if reader.manifest is None or before is None:
                raise
            if _wait_for_change(prefix, before, deadline) and time.monotonic() < deadline:
                continue
            changing = _fingerprint(prefix) != before
            raise TornCheckpointError('%s (%s)' % (err, (
                'saves kept replacing the files for %.0f s without one load seeing a whole save'
                % RETRY_SECONDS) if changing else (
                'the files stayed so for %.1f s: no save is under way, this set is torn'
                % SETTLE_SECONDS))) from None


def load_whole_for(fname, load):
    """:func:`load_whole` for the checkpoint that ``fname`` (``prefix-%04d.params`` or
    ``.states``) belongs to; ``load(reader)`` gets None when ``fname`` has no manifest."""
    match = _EPOCH_FILE.match(os.fspath(fname)) if isinstance(fname, (str, os.PathLike)) else None
    if match is None or not os.path.exists(manifest_name(match.group('prefix'),
                                                         int(match.group('epoch')))):
        return load(None)

    def checked(reader):
        return load(reader if reader.manifest is not None else None)
    return load_whole(match.group('prefix'), int(match.group('epoch')), checked)


def reader_for(fname):
    """The :class:`CheckpointReader` whose manifest covers ``fname`` (``prefix-%04d.params`` or
    ``.states``), or None when ``fname`` is not a checkpoint file with a manifest."""
    match = _EPOCH_FILE.match(os.fspath(fname)) if isinstance(fname, (str, os.PathLike)) else None
    if match is None:
        return None
    reader = CheckpointReader(match.group('prefix'), int(match.group('epoch')))
    return reader if reader.manifest is not None else None
