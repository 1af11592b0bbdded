"""load_svmlight_file (CSR matrix of float features, labels) and the removed fetch_mldata."""
import numpy as np
import scipy.sparse


def load_svmlight_file(path, n_features=None, dtype=np.float64):
    """Read 'label index:value ...' lines (1-based indices) into (csr_matrix, labels)."""
    labels, rows, cols, values = [], [], [], []
    with open(path) as source:
        for row, line in enumerate(source):
            fields = line.split()
            labels.append(float(fields[0]))
            for pair in fields[1:]:
                index, value = pair.split(':')
                rows.append(row)
                cols.append(int(index) - 1)
                values.append(float(value))
    width = n_features or (max(cols) + 1 if cols else 0)
    matrix = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(len(labels), width),
                                     dtype=dtype)
    return matrix, np.asarray(labels)


def fetch_mldata(*args, **kwargs):
    """Removed from scikit-learn in 0.22 (mldata.org is gone)."""
    raise ImportError('fetch_mldata was removed from scikit-learn')
