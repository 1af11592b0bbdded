"""LibSVMIter: batches of CSR data read from LibSVM text files, with MXNet 1.9.1's semantics.

Each line is ``label index:value index:value ...`` with zero-based feature indices; empty lines
are skipped. Labels come from the data file (one float per example, a dense label array) or,
with ``label_libsvm``, from a second LibSVM file whose lines give each example's label vector
(a CSR label array). ``num_parts`` / ``part_index`` split the bytes of the file(s) as MXNet's
reader does: part ``r`` starts after the first line break at or after ``r * ceil(size /
num_parts)``, so the parts are whole lines but not necessarily of equal length. Batches are
always full: the last one is completed with examples from the start of the part (``pad`` says
how many), and the epoch after ``reset()`` goes on after them, as MXNet's ``round_batch``.

The whole part is parsed when the iterator is built (a malformed line raises there, naming the
file and line), and each batch is cut from it in proportion to its non-zeros."""
import os

import numpy as np

from ..base import MXNetError
from .base import DataBatch, DataDesc
from .current_batch import CurrentBatchIter

__all__ = ['LibSVMIter']


def _files(path, what):
    """The files behind ``path`` (a file, or every file of a directory in name order)."""
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        found = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
        if not found:
            raise MXNetError('LibSVMIter: %s %r is a directory without files' % (what, path))
        return found
    if not os.path.exists(path):
        raise MXNetError('LibSVMIter: cannot open %s %r: no such file or directory'
                         % (what, path))
    return [path]


def _part_bytes(blob, num_parts, part_index):
    """The bytes of part ``part_index`` of ``num_parts`` (whole lines)."""
    step = -(-len(blob) // num_parts)

    def start(rank):
        if rank == 0:
            return 0
        pos = rank * step
        if pos >= len(blob):
            return len(blob)
        brk = min((i for i in (blob.find(b'\n', pos), blob.find(b'\r', pos)) if i >= 0),
                  default=len(blob))
        while brk < len(blob) and blob[brk:brk + 1] in (b'\n', b'\r'):
            brk += 1
        return brk
    return blob[start(part_index):start(part_index + 1)]


def _read_part(path, what, num_parts, part_index):
    """(bytes of this part, a function naming the file and line of a part's line number)."""
    files = _files(path, what)
    chunks = []
    for fname in files:
        with open(fname, 'rb') as handle:
            data = handle.read()
        if data and not data.endswith((b'\n', b'\r')):
            data += b'\n'
        chunks.append(data)
    return _part_bytes(b''.join(chunks), num_parts, part_index), files


def _parse(blob, width, what, files):
    """Labels (float32) and a CSR matrix (data float32, indices and indptr int64) of the
    non-empty lines of ``blob``; feature indices must be below ``width``."""
    from scipy import sparse  # pylint: disable=import-outside-toplevel
    labels, indptr, pairs = [], [0], []
    for lineno, raw in enumerate(blob.decode('utf-8', 'replace').splitlines(), 1):
        tokens = raw.split()
        if not tokens:
            continue
        try:
            labels.append(float(tokens[0].split(':')[0]))
            row = [tok.split(':', 1) for tok in tokens[1:]]
            idx = [int(i) for i, _ in row]
            val = [float(v) for _, v in row]
        except ValueError:
            raise MXNetError('LibSVMIter: %s (%s) line %d of this part: expected "label index:value '
                             '...", got %r' % (what, ', '.join(files), lineno, raw[:80])) from None
        if idx and (min(idx) < 0 or max(idx) >= width):
            raise MXNetError('LibSVMIter: %s (%s) line %d of this part has feature index %d, '
                             'outside the %d columns of its shape (indices are zero-based)'
                             % (what, ', '.join(files), lineno,
                                max(idx) if max(idx) >= width else min(idx), width))
        pairs.append((idx, val))
        indptr.append(indptr[-1] + len(idx))
    indices = np.fromiter((i for idx, _ in pairs for i in idx), np.int64, indptr[-1])
    values = np.fromiter((v for _, val in pairs for v in val), np.float64, indptr[-1])
    matrix = sparse.csr_matrix((values.astype(np.float32), indices, np.asarray(indptr, np.int64)),
                               shape=(len(pairs), width))
    return np.asarray(labels, np.float32), matrix


def _one_dim(shape, name):
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if len(shape) != 1 or shape[0] <= 0:
        raise MXNetError('LibSVMIter: %s must be one positive dimension such as (100,), got %r'
                         % (name, shape))
    return shape


class LibSVMIter(CurrentBatchIter):
    """Iterate over a LibSVM file (or a directory of them) in batches of CSR data.

    Parameters
    ----------
    data_libsvm : str
        The LibSVM data file (zero-based feature indices) or a directory of such files.
    data_shape : tuple of int
        ``(num_features,)``: the columns of the CSR data.
    label_libsvm : str, optional
        A LibSVM file whose lines hold each example's label vector; ``'NULL'`` (default) takes
        the labels from ``data_libsvm``.
    label_shape : tuple of int, optional
        ``(1,)`` (default) without ``label_libsvm``, the label vector's length with it.
    batch_size : int
    num_parts, part_index : int, optional
        Read only part ``part_index`` of ``num_parts`` (whole lines, split by bytes).
    data_name, label_name : str, optional
        Names in ``provide_data`` / ``provide_label`` (``'data'``, ``'softmax_label'``).
    round_batch : bool, optional
        Must be True (MXNet's sparse loader supports nothing else).
    """

    def __init__(self, data_libsvm=None, data_shape=None, label_libsvm='NULL', label_shape=(1,),
                 batch_size=None, num_parts=1, part_index=0, round_batch=True,
                 data_name='data', label_name='softmax_label', **kwargs):
        if data_libsvm is None or data_shape is None or batch_size is None:
            raise MXNetError('LibSVMIter needs data_libsvm, data_shape and batch_size')
        batch_size = int(batch_size)
        if batch_size <= 0:
            raise MXNetError('LibSVMIter: batch_size must be positive, got %d' % batch_size)
        if int(num_parts) <= 0 or not 0 <= int(part_index) < int(num_parts):
            raise MXNetError('LibSVMIter: need num_parts > 0 and 0 <= part_index < num_parts, '
                             'got num_parts=%r, part_index=%r' % (num_parts, part_index))
        if not round_batch:
            raise MXNetError('LibSVMIter: round_batch=False is not supported for sparse data '
                             '(as in MXNet)')
        super(LibSVMIter, self).__init__(batch_size)
        self._width = _one_dim(data_shape, 'data_shape')[0]
        self._label_shape = _one_dim(label_shape, 'label_shape')
        has_label_file = label_libsvm not in (None, 'NULL')
        if has_label_file == (self._label_shape[0] == 1):
            raise MXNetError('LibSVMIter: label_shape must be (1,) without label_libsvm and '
                             'longer than 1 with it, got %r with label_libsvm=%r'
                             % (self._label_shape, label_libsvm))
        blob, files = _read_part(data_libsvm, 'data_libsvm', int(num_parts), int(part_index))
        self._labels, self._data = _parse(blob, self._width, 'data_libsvm', files)
        self._label_csr = None
        if has_label_file:
            blob, files = _read_part(label_libsvm, 'label_libsvm', int(num_parts),
                                     int(part_index))
            _, self._label_csr = _parse(blob, self._label_shape[0], 'label_libsvm', files)
            if self._label_csr.shape[0] < self._data.shape[0]:
                raise MXNetError('LibSVMIter: label_libsvm has %d rows in this part, fewer than '
                                 'the %d of data_libsvm' % (self._label_csr.shape[0],
                                                             self._data.shape[0]))
        self._data_name, self._label_name = data_name, label_name
        self._pos, self._overflow = 0, 0
        self._current = None

    @property
    def provide_data(self):
        return [DataDesc(self._data_name, (self.batch_size, self._width), np.float32)]

    @property
    def provide_label(self):
        shape = (self.batch_size,) if self._label_csr is None else \
            (self.batch_size,) + self._label_shape
        return [DataDesc(self._label_name, shape, np.float32)]

    def reset(self):
        # after a wrapped batch the next epoch goes on from where the wrap stopped
        if self._overflow == 0:
            self._pos = 0
        else:
            self._overflow = 0

    def _rows(self):
        """Row ids of the next batch and its pad count, or None at the end."""
        total = self._data.shape[0]
        if self._overflow or self._pos >= total:
            return None
        rows = list(range(self._pos, min(total, self._pos + self.batch_size)))
        self._pos += len(rows)
        if len(rows) < self.batch_size:
            missing = self.batch_size - len(rows)
            if missing > total:
                raise MXNetError('LibSVMIter: number of input must be bigger than batch size '
                                 '(%d rows in this part, batch_size %d)'
                                 % (total, self.batch_size))
            rows += list(range(missing))
            self._pos, self._overflow = missing, missing
        return np.asarray(rows, np.int64), self._overflow

    def iter_next(self):
        got = self._rows()
        if got is None:
            return False
        rows, pad = got
        from ..ndarray import sparse as nd_sparse  # pylint: disable=import-outside-toplevel
        from ..ndarray.ndarray import array  # pylint: disable=import-outside-toplevel

        def csr(matrix):
            part = matrix[rows]
            return nd_sparse.csr_matrix((part.data, part.indices.astype(np.int64),
                                         part.indptr.astype(np.int64)), shape=part.shape,
                                        dtype=np.float32)
        label = array(self._labels[rows]) if self._label_csr is None else csr(self._label_csr)
        self._current = DataBatch([csr(self._data)], [label], pad=pad,
                                  index=rows.astype(np.uint64),
                                  provide_data=self.provide_data,
                                  provide_label=self.provide_label)
        return True
