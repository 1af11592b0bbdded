"""MNIST's IDX files (gzip) as numpy arrays, for the drivers of this folder."""
import gzip
import struct

import numpy as np


def read_idx(name):
    """The array stored in the gzip'd IDX file ``name`` (uint8, the file's shape)."""
    with gzip.open(name) as src:
        raw = src.read()
    dims = raw[3]
    shape = struct.unpack('>%dI' % dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)
