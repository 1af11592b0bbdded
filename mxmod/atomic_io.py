"""Durable, all-or-nothing file writes (every ``.params``, ``.states`` and ``-symbol.json``).

A file is written to a temporary in its own folder, flushed to disk (``fsync``), renamed over the
target, and the folder is flushed so that the rename survives a crash. A temporary is named
``.<target>.tmp-<pid>@<host>.<random>``: a save that was killed leaves one behind, and the next
save into that folder removes the temporaries whose process no longer runs on this host."""
import os
import re
import socket
import stat
import tempfile

from .base import MXNetError

__all__ = ['write_file_atomic', 'resolved', 'is_special', 'stage_file', 'new_stage_name',
           'commit_staged', 'discard_staged', 'fsync_dir', 'remove_stale_temporaries',
           'SaveDirectoryError', 'SaveError']

_HOST = re.sub(r'[^A-Za-z0-9_-]', '_', socket.gethostname())[:64] or 'host'
_TEMP_PATTERN = re.compile(r'^\..+\.tmp-(\d+)@([A-Za-z0-9_-]+)\.[A-Za-z0-9_]+$')


def _read_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()   # read once at import: os.umask is process-wide, not thread-safe


class SaveDirectoryError(MXNetError, FileNotFoundError):
    """The folder a file is saved into does not exist (also a FileNotFoundError)."""


class SaveError(MXNetError, OSError):
    """The system refused writing a file (permissions, a full disk, a directory in the way);
    the message names the file asked for, not the temporary it is staged in."""


def _refused(fname, err):
    if os.path.isdir(fname):
        return SaveError('cannot save %r: it is a directory' % (fname,))
    return SaveError('cannot save %r: %s' % (fname, err.strerror or err))


def _pid_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:      # exists, but belongs to someone else
        return True
    return True


def remove_stale_temporaries(folder):
    """Delete the temporaries of killed saves in ``folder`` (this host's dead processes only).

    Returns
    -------
    list of str
        The removed paths.
    """
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMP_PATTERN.match(name)
        if match is None or match.group(2) != _HOST or _pid_alive(int(match.group(1))):
            continue
        path = os.path.join(folder, name)
        try:
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass     # another process removed it first, or it is not ours to remove
    return removed


def fsync_dir(folder):
    """Flush a folder's entries (renames, new files) to disk where the platform allows it."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass        # some file systems cannot sync a directory; the rename is still atomic
    finally:
        os.close(handle)


def _folder_of(fname):
    if not fname or fname.endswith(os.sep):
        raise SaveError('cannot save %r: a file name is needed' % (fname,))
    folder = os.path.dirname(os.path.abspath(fname))
    if not os.path.isdir(folder):
        if os.path.exists(folder):
            raise SaveDirectoryError('cannot save %r: %r is not a directory' % (fname, folder))
        raise SaveDirectoryError('cannot save %r: its directory %r does not exist (create it '
                                 'first)' % (fname, folder))
    return folder


def resolved(fname):
    """The file a save to ``fname`` writes: where a symbolic link (or a chain of them) points,
    as ``open(fname, 'wb')`` and MXNet's savers write through it, else ``fname`` itself. The
    temporary is made beside that file and renamed over it; the link stays as it is."""
    fname = os.fspath(fname)
    return os.path.realpath(fname) if os.path.islink(fname) else fname


def _as_bytes(data):
    return data.encode('utf-8') if isinstance(data, str) else data


def stage_file(fname, data):
    """Write ``data`` to a synced temporary beside ``fname`` (beside the file a symbolic link
    ``fname`` points to); return the temporary's path.

    Parameters
    ----------
    fname : str
        The final name (its folder must exist).
    data : bytes or str
        The contents (str is written as UTF-8).
    """
    fname = os.fspath(fname)
    target = resolved(fname)
    folder = _folder_of(target)
    remove_stale_temporaries(folder)
    prefix = '.%s.tmp-%d@%s.' % (os.path.basename(target), os.getpid(), _HOST)
    try:
        handle, tmp = tempfile.mkstemp(prefix=prefix, dir=folder)
    except OSError as err:
        raise _refused(fname, err) from None
    try:
        with os.fdopen(handle, 'wb') as out:
            out.write(_as_bytes(data))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)   # the permissions a plain open() would give
    except OSError as err:
        discard_staged(tmp)
        raise _refused(fname, err) from None
    except BaseException:
        discard_staged(tmp)
        raise
    return tmp


def new_stage_name(fname):
    """A fresh temporary name beside ``fname`` (or the file its link points to) for a writer
    that creates the file itself."""
    fname = os.fspath(fname)
    target = resolved(fname)
    folder = _folder_of(target)
    prefix = '.%s.tmp-%d@%s.' % (os.path.basename(target), os.getpid(), _HOST)
    try:
        handle, tmp = tempfile.mkstemp(prefix=prefix, dir=folder)
    except OSError as err:
        raise _refused(fname, err) from None
    os.close(handle)
    return tmp


def commit_staged(tmp, fname):
    """Rename a staged temporary over ``fname`` (over the file a symbolic link ``fname`` points
    to, whose folder is then synced too; atomic on POSIX and Windows); a device or a named pipe
    gets the temporary's contents written into it instead."""
    fname = os.fspath(fname)
    if is_special(fname):
        with open(tmp, 'rb') as staged:
            write_special(fname, staged.read())
        discard_staged(tmp)
        return
    target = resolved(fname)
    try:
        os.replace(tmp, target)
    except OSError as err:
        raise _refused(fname, err) from None
    if target is not fname:
        fsync_dir(os.path.dirname(os.path.abspath(target)))


def discard_staged(tmp):
    """Remove a staged temporary if it is still there."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def is_special(fname):
    """True when ``fname`` exists and is neither a regular file nor a directory (a device such as
    /dev/null, a named pipe, a socket): such a target is written into, never replaced."""
    try:
        mode = os.stat(fname).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_special(fname, data):
    """Write ``data`` straight into the special file ``fname`` (see :func:`is_special`)."""
    try:
        with open(fname, 'wb') as out:
            out.write(_as_bytes(data))
    except OSError as err:
        raise _refused(fname, err) from None


def write_file_atomic(fname, data):
    """Write ``data`` (bytes or str) to ``fname`` through a synced temporary in the same folder
    that replaces it only once complete, so a failed or killed write never destroys an earlier
    file; the folder is synced after the rename. A symbolic link is written through (the file
    it points to is replaced, the link kept). A device or a named pipe (``/dev/null``, a FIFO a
    reader waits on) is written into instead: renaming over it would replace it.

    Parameters
    ----------
    fname : str
    data : bytes or str
    """
    fname = os.fspath(fname)
    if is_special(fname):
        write_special(fname, data)
        return
    tmp = stage_file(fname, data)
    try:
        commit_staged(tmp, fname)
    except BaseException:
        discard_staged(tmp)
        raise
    fsync_dir(os.path.dirname(os.path.abspath(fname)))
