"""Which tensor dimension each entry of a shape vector came from, during an import.

Exporters compute reshape targets from ``Shape(x)`` (``x.view(x.size(0), -1)``). Folding those
to constants would fix the batch size; instead each entry remembers its source ``(tensor, axis)``
through the usual shape arithmetic (Gather, Slice, Concat, (Un)Squeeze, Cast), so that Reshape
can copy the dimension (MXNet's code 0) and free dimensions need no value."""
import numpy as np

from ..base import MXNetError

#: ONNX operators through which entry sources are followed
FOLLOWED = ('Shape', 'Gather', 'Unsqueeze', 'Squeeze', 'Concat', 'Slice', 'Cast', 'Identity',
            'Reshape')


class DimSources(object):
    """Per tracked tensor: the list of entry sources (``(tensor, axis)`` or None) and which
    entries are unknown at import time."""

    def __init__(self):
        self.sources = {}
        self.unknown = {}

    def tracked(self, name):
        """True when ``name`` is a tracked shape vector."""
        return name in self.sources

    def has_unknown(self, name):
        """True when some entry of ``name`` is only known at run time."""
        return name in self.unknown and bool(self.unknown[name].any())

    def shape_of(self, imp, node):
        """Shape(x): the static dims (1 where free), each entry sourced from x."""
        x = node.inputs[0]
        shape = imp.shape(x)
        if shape is None:
            raise MXNetError('mx.onnx.import_model: the rank of %r (input of Shape %r) is '
                             'unknown' % (x, node.name))
        start, end = node.attr('start', 0), node.attr('end')
        axes = list(range(len(shape)))[start:end]
        value = np.array([1 if shape[a] is None else shape[a] for a in axes], dtype=np.int64)
        self._store(node.outputs[0], [(x, a) for a in axes],
                    np.array([shape[a] is None for a in axes], dtype=bool))
        return value

    def follow(self, imp, node, value):
        """Record the sources of a followed node's output computed as ``value``."""
        lists = [self._entries(imp, n) for n in node.inputs if n]
        srcs, unknown = lists[0]
        if node.op_type == 'Gather':
            index = imp.const(node.inputs[1]).reshape(-1).astype(np.int64)
            srcs = [srcs[i] for i in index]
            unknown = unknown[index]
        elif node.op_type == 'Concat':
            srcs = [s for entries, _ in lists for s in entries]
            unknown = np.concatenate([u for _, u in lists])
        elif node.op_type == 'Slice':
            pick = np.arange(len(srcs))[tuple([_slice(imp, node)])]
            srcs = [srcs[i] for i in pick]
            unknown = unknown[pick]
        self._store(node.outputs[0], srcs, unknown)
        del value

    def _entries(self, imp, name):
        if name in self.sources:
            return self.sources[name], self.unknown[name]
        size = int(np.size(imp.values[name])) if imp.is_const(name) else 0
        return [None] * size, np.zeros(size, dtype=bool)

    def _store(self, name, srcs, unknown):
        self.sources[name] = list(srcs)
        self.unknown[name] = np.asarray(unknown, dtype=bool).reshape(-1)

    def entry_sources(self, name):
        """(sources, unknown mask) of a shape vector (None entries for untracked ones)."""
        if name in self.sources:
            return self.sources[name], self.unknown[name]
        return None, None


def _slice(imp, node):
    def const(k, default):
        if len(node.inputs) > k and node.inputs[k]:
            return int(imp.const(node.inputs[k]).reshape(-1)[0])
        return default
    start, end, step = const(1, 0), const(2, None), const(4, 1)
    big = np.iinfo(np.int64).max // 2
    end = None if end is not None and abs(end) >= big else end
    return slice(start, end, step)
