"""``mx.recordio``: RecordIO files (MXNet's / dmlc-core's record container) and image records.

A record on disk is ``magic (uint32 0xced7230a) | lrec (uint32: flag << 29 | length) | data``,
the data zero-padded to a multiple of 4 bytes, all little-endian. A payload that contains the
magic word at a 4-byte aligned position is stored in parts (flag 1 first, 2 middle, 3 last; 0 is
a record in one part) with the magic word cut out at each split, as dmlc-core writes it.
An image record's payload starts with an ``IRHeader`` (``'IfQQ'``: flag, label, id, id2); a flag
above 0 means ``flag`` float32 labels follow the header (recordio_image.py)."""
import os
import struct
from multiprocessing import current_process

from .base import MXNetError
from .recordio_image import IRHeader, pack, unpack, pack_img, unpack_img  # noqa: F401

__all__ = ['MXRecordIO', 'MXIndexedRecordIO', 'IRHeader', 'pack', 'unpack', 'pack_img',
           'unpack_img']

RECORD_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack('<I', RECORD_MAGIC)
_LENGTH_MASK = (1 << 29) - 1
_MAX_RECORD = 1 << 29


def _encode_lrec(cflag, length):
    return struct.pack('<II', RECORD_MAGIC, (cflag << 29) | length)


def encode_record(buf):
    """The bytes dmlc-core writes for one record with payload ``buf``."""
    buf = bytes(buf)
    size = len(buf)
    if size >= _MAX_RECORD:
        raise MXNetError('RecordIO only accepts records shorter than 2^29 bytes, got %d' % size)
    parts = []
    start = 0
    pos = buf.find(_MAGIC_BYTES)
    while pos != -1:
        if pos % 4 == 0:
            parts.append(_encode_lrec(1 if start == 0 else 2, pos - start))
            parts.append(buf[start:pos])
            start = pos + 4
            pos = buf.find(_MAGIC_BYTES, start)
        else:
            pos = buf.find(_MAGIC_BYTES, pos + 1)
    parts.append(_encode_lrec(3 if start else 0, size - start))
    parts.append(buf[start:])
    parts.append(b'\0' * (-size % 4))
    return b''.join(parts)


def read_record(handle, uri):
    """Read the record at ``handle``'s position; None at the end of the file.

    Raises MXNetError naming ``uri`` and the byte offset when the file is not valid RecordIO."""
    chunks = []
    while True:
        offset = handle.tell()
        head = handle.read(8)
        if not head and not chunks:
            return None
        if len(head) != 8:
            raise MXNetError('Invalid RecordIO file %s: truncated record header at byte %d'
                             % (uri, offset))
        magic, lrec = struct.unpack('<II', head)
        if magic != RECORD_MAGIC:
            raise MXNetError('Invalid RecordIO file %s: no record magic at byte %d (found 0x%08x)'
                             % (uri, offset, magic))
        cflag, length = lrec >> 29, lrec & _LENGTH_MASK
        padded = (length + 3) & ~3
        data = handle.read(padded)
        if len(data) != padded:
            raise MXNetError('Invalid RecordIO file %s: record at byte %d needs %d bytes, '
                             'the file has %d left' % (uri, offset, padded, len(data)))
        chunks.append(data[:length])
        if cflag in (0, 3):
            return b''.join(chunks)
        chunks.append(_MAGIC_BYTES)


def seek_record_begin(handle):
    """Move ``handle`` forward to the next record start (flag 0 or 1) at a 4-byte position.

    Returns the new position (the end of the file when there is none)."""
    pos = handle.tell()
    pos += -pos % 4
    handle.seek(pos)
    while True:
        word = handle.read(4)
        if len(word) < 4:
            return handle.seek(0, os.SEEK_END)
        if word == _MAGIC_BYTES:
            lrec = handle.read(4)
            if len(lrec) < 4:
                return handle.seek(0, os.SEEK_END)
            if struct.unpack('<I', lrec)[0] >> 29 in (0, 1):
                return handle.seek(pos)
            pos += 8
        else:
            pos += 4


class MXRecordIO(object):
    """Read or write a RecordIO file record by record.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write (truncates the file) or ``'r'`` to read.
    """

    def __init__(self, uri, flag):
        self.uri = uri
        self.flag = flag
        self.handle = None
        self.writable = None
        self.pid = None
        self.is_open = False
        self.open()

    def open(self):
        """Open the record file (for ``flag``)."""
        if self.flag == 'w':
            mode, self.writable = 'wb', True
        elif self.flag == 'r':
            mode, self.writable = 'rb', False
        else:
            raise ValueError('Invalid flag %s' % self.flag)
        try:
            self.handle = open(self.uri, mode)
        except OSError as err:
            raise MXNetError('MXRecordIO: cannot open %s for %s: %s'
                             % (self.uri, 'writing' if self.writable else 'reading',
                                err.strerror)) from None
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        is_open = self.is_open
        self.close()
        state = dict(self.__dict__)
        state['is_open'] = is_open
        state['handle'] = None
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        is_open = state['is_open']
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Reopen (``allow_reset``) or refuse when used from a process that did not open it."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError('Forbidden operation in multiple processes')

    def close(self):
        """Close the record file (a no-op when closed)."""
        if not getattr(self, 'is_open', False):
            return
        self.handle.close()
        self.is_open = False
        self.pid = None

    def reset(self):
        """Go back to the first record; a writer truncates the file to empty."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record.

        Parameters
        ----------
        buf : bytes
            The record's payload.
        """
        if not self.writable:
            raise MXNetError('MXRecordIO: %s is open for reading, not writing' % self.uri)
        self._check_pid(allow_reset=False)
        self.handle.write(encode_record(buf))

    def read(self):
        """Return the next record's payload (bytes), or None at the end of the file."""
        if self.writable:
            raise MXNetError('MXRecordIO: %s is open for writing, not reading' % self.uri)
        self._check_pid(allow_reset=False)
        return read_record(self.handle, self.uri)


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with an index file (``key<TAB>byte offset`` per line) for random access.

    Parameters
    ----------
    idx_path : str
        Path to the index file.
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write or ``'r'`` to read.
    key_type : type
        Type the keys of the index file are parsed into (default int).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super(MXIndexedRecordIO, self).__init__(uri, flag)

    def open(self):
        super(MXIndexedRecordIO, self).open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as err:
            raise MXNetError('MXIndexedRecordIO: cannot open index file %s: %s'
                             % (self.idx_path, err.strerror)) from None
        if not self.writable:
            for lineno, line in enumerate(self.fidx, 1):
                fields = line.strip().split('\t')
                if not fields[0]:
                    continue
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError):
                    raise MXNetError('MXIndexedRecordIO: %s line %d is not "key<TAB>offset": %r'
                                     % (self.idx_path, lineno, line)) from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        """Close the record and index files."""
        if not getattr(self, 'is_open', False):
            return
        super(MXIndexedRecordIO, self).close()
        self.fidx.close()

    def __getstate__(self):
        state = super(MXIndexedRecordIO, self).__getstate__()
        state['fidx'] = None
        return state

    def seek(self, idx):
        """Move the read position to the record with key ``idx``."""
        if self.writable:
            raise MXNetError('MXIndexedRecordIO: %s is open for writing, not reading' % self.uri)
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError('MXIndexedRecordIO: key %r is not in index %s' % (idx, self.idx_path))
        size = os.fstat(self.handle.fileno()).st_size
        if pos >= size or pos < 0:
            raise MXNetError('MXIndexedRecordIO: index %s points key %r at byte %d, past the end '
                             'of %s (%d bytes)' % (self.idx_path, idx, pos, self.uri, size))
        self.handle.seek(pos)

    def tell(self):
        """Return the writer's current byte position."""
        if not self.writable:
            raise MXNetError('MXIndexedRecordIO: tell() needs a writer; %s is open for reading'
                             % self.uri)
        return self.handle.tell()

    def read_idx(self, idx):
        """Return the payload of the record with key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append a record under key ``idx`` (recorded in the index file)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write('%s\t%d\n' % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)
