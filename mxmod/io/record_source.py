"""Where the records of a RecordIO file are and which of them a reader's part holds.

``RecordSource`` lists the byte offset and span of every record in the part ``part_index`` of
``num_parts`` and reads one record's payload by its position, from any thread (``os.pread``).
Parts are cut as dmlc-core cuts them: by bytes (each part starts at the first record at or after
its 4-byte aligned share of the file) without an index file, by record count with one."""
import os
import struct

import numpy as np

from ..base import MXNetError
from ..recordio import RECORD_MAGIC, _MAGIC_BYTES

__all__ = ['RecordSource']


def _scan(uri, handle, begin, end, size):
    """Offsets and byte spans of the records starting in [begin, end) (begin at a record)."""
    offsets, spans = [], []
    pos = begin
    start = None
    while pos < end or start is not None:
        head = os.pread(handle, 8, pos)
        if len(head) < 8:
            if start is not None or head:
                raise MXNetError('Invalid RecordIO file %s: truncated record at byte %d'
                                 % (uri, pos if start is None else start))
            break
        magic, lrec = struct.unpack('<II', head)
        if magic != RECORD_MAGIC:
            raise MXNetError('Invalid RecordIO file %s: no record magic at byte %d (found '
                             '0x%08x)' % (uri, pos, magic))
        cflag = lrec >> 29
        if start is None:
            start = pos
        pos += 8 + (((lrec & ((1 << 29) - 1)) + 3) & ~3)
        if pos > size:
            raise MXNetError('Invalid RecordIO file %s: the record at byte %d is truncated (it '
                             'needs %d bytes, the file ends at %d)' % (uri, start, pos, size))
        if cflag in (0, 3):
            offsets.append(start)
            spans.append(pos - start)
            start = None
    return offsets, spans


def _record_begin(handle, pos, size):
    """First position >= pos (4-byte aligned) where a record (flag 0 or 1) starts."""
    pos += -pos % 4
    while pos + 8 <= size:
        word = os.pread(handle, 8, pos)
        if word[:4] == _MAGIC_BYTES and struct.unpack('<I', word[4:])[0] >> 29 in (0, 1):
            return pos
        pos += 4
    return size


def _read_index(path, uri):
    """Sorted record offsets listed in an index file."""
    try:
        with open(path) as fidx:
            offsets = [int(line.split('\t')[1]) for line in fidx if line.strip()]
    except OSError as err:
        raise MXNetError('ImageRecordIter: cannot open index file %s: %s'
                         % (path, err.strerror)) from None
    except (IndexError, ValueError):
        raise MXNetError('ImageRecordIter: index file %s is not "key<TAB>offset" lines (for %s)'
                         % (path, uri)) from None
    return sorted(set(offsets))


class RecordSource(object):
    """The records of one part of a RecordIO file.

    Parameters
    ----------
    uri : str
        The .rec file.
    part_index, num_parts : int
        Which part of how many this reader holds.
    idx_path : str, optional
        An index file (``key<TAB>offset`` lines); parts are then cut by record count.
    """

    def __init__(self, uri, part_index=0, num_parts=1, idx_path=None):
        if not 0 <= part_index < num_parts:
            raise MXNetError('part_index %d must be in [0, num_parts=%d)'
                             % (part_index, num_parts))
        self.uri = uri
        try:
            self.handle = os.open(uri, os.O_RDONLY)
        except OSError as err:
            raise MXNetError('cannot open record file %s: %s' % (uri, err.strerror)) from None
        self.size = os.fstat(self.handle).st_size
        try:
            if idx_path:
                self.offsets, self.spans = self._indexed_part(idx_path, part_index, num_parts)
            else:
                self.offsets, self.spans = self._byte_part(part_index, num_parts)
        except BaseException:
            self.close()
            raise

    def _byte_part(self, part_index, num_parts):
        step = (self.size + num_parts - 1) // num_parts
        step = (step + 3) // 4 * 4
        begin, end = min(step * part_index, self.size), min(step * (part_index + 1), self.size)
        if begin == end:
            return [], []
        if begin:
            begin = _record_begin(self.handle, begin, self.size)
        if end < self.size:
            end = _record_begin(self.handle, end, self.size)
        return _scan(self.uri, self.handle, begin, end, self.size)

    def _indexed_part(self, idx_path, part_index, num_parts):
        offsets = _read_index(idx_path, self.uri)
        bad = [off for off in offsets if off >= self.size]
        if bad:
            raise MXNetError('index file %s points at byte %d, past the end of %s (%d bytes)'
                             % (idx_path, bad[0], self.uri, self.size))
        step = (len(offsets) + num_parts - 1) // num_parts
        chosen = offsets[step * part_index:step * (part_index + 1)]
        ends = offsets[1:] + [self.size]
        spans = [end - off for off, end in zip(offsets, ends)][step * part_index:
                                                                 step * (part_index + 1)]
        return chosen, spans

    def __len__(self):
        return len(self.offsets)

    def read(self, position):
        """Payload (bytes) of the ``position``-th record of the part."""
        offset, span = self.offsets[position], self.spans[position]
        buf = os.pread(self.handle, span, offset)
        chunks = []
        pos = 0
        while True:
            if len(buf) < pos + 8:
                raise MXNetError('Invalid RecordIO file %s: record %d at byte %d is truncated'
                                 % (self.uri, position, offset))
            magic, lrec = struct.unpack_from('<II', buf, pos)
            length = lrec & ((1 << 29) - 1)
            if magic != RECORD_MAGIC or len(buf) < pos + 8 + length:
                raise MXNetError('Invalid RecordIO file %s: record %d at byte %d is corrupt or '
                                 'truncated' % (self.uri, position, offset))
            chunks.append(buf[pos + 8:pos + 8 + length])
            pos += 8 + ((length + 3) & ~3)
            if lrec >> 29 in (0, 3):
                return b''.join(chunks) if len(chunks) > 1 else chunks[0]
            chunks.append(_MAGIC_BYTES)

    def close(self):
        """Close the file."""
        if getattr(self, 'handle', None) is not None:
            os.close(self.handle)
            self.handle = None

    def __del__(self):
        self.close()

    def positions(self):
        """numpy array of the part's record positions 0..len-1."""
        return np.arange(len(self.offsets))
