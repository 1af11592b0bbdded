"""Shape/type inference results shared by the binds of one BucketingModule.

Buckets whose symbols have the same structure (the same operators with the same attributes,
wired the same way, the same variables) and are bound for the same input shapes and dtypes get
the inferred shape and dtype of every slot from the first of them instead of inferring again;
other input shapes infer again (and are kept too). Structure is compared only between graphs of
the same size and variables, so buckets of different lengths (an unrolled RNN) cost nothing
beyond one dictionary look-up. Graphs holding subgraphs or Custom operators (whose inference may
run user code) are never shared. A symbol's attributes set after it was bound make its entry
stale (it is dropped)."""
import contextlib
import threading

from ..symbol.symbol import graph_edits
from ..util import is_np_shape

_ACTIVE = threading.local()


@contextlib.contextmanager
def active(cache):
    """Make ``cache`` the one simple_bind consults in this thread for the duration."""
    previous = getattr(_ACTIVE, 'cache', None)
    _ACTIVE.cache = cache
    try:
        yield cache
    finally:
        _ACTIVE.cache = previous


def current():
    """The cache simple_bind should consult, or None."""
    return getattr(_ACTIVE, 'cache', None)


def _signature(order):
    """The structure of a graph in topological order (None when it must not be shared)."""
    position, out = {}, []
    for k, node in enumerate(order):
        position[id(node)] = k
        op = node.op
        if op is not None and (op.op_name == 'Custom' or getattr(op, 'accepts_subgraphs', False)):
            return None
        out.append((node.name if op is None else type(op), tuple(sorted(node.attrs.items())),
                    tuple((position[id(src)], idx) for src, idx in node.inputs)))
    return tuple(out)


class _Entry(object):
    """One graph structure: its signature (made when first compared) and its results."""
    __slots__ = ('order', 'edits', 'signature', 'results')

    def __init__(self, order, signature):
        self.order, self.edits, self.signature, self.results = order, graph_edits(), signature, {}

    def sig(self):
        if self.signature is None:
            self.signature = _signature(self.order)
        return self.signature


class InferenceCache(object):
    """Inference results by graph structure and input shapes/dtypes (see the module doc)."""

    def __init__(self):
        self._entries = {}      # (graph size, argument names, auxiliary names) -> [_Entry]

    def lookup(self, sym, shapes, types, cse, slots):
        """``(results, token)``: ``results`` is (slot shapes, slot dtypes) inferred before for a
        graph like ``sym`` with these input shapes and dtypes (copies) or None; ``token`` is
        for :meth:`store` (None: do not store)."""
        try:
            inputs = (tuple(sorted((k, None if v is None else tuple(v))
                                   for k, v in shapes.items())),
                      tuple(sorted((k, str(v)) for k, v in (types or {}).items())),
                      cse, is_np_shape())
            hash(inputs)
        except TypeError:       # shapes that are not tuples of numbers: never shared
            return None, None
        order = sym._topo()
        args, auxs = sym._arg_nodes()
        group = (len(order), tuple(n.name for n in args), tuple(n.name for n in auxs))
        entries = self._entries.setdefault(group, [])
        entries[:] = [e for e in entries if e.edits == graph_edits()]     # attributes changed
        mine = None
        if entries:
            mine = _signature(order)
            if mine is None:
                return None, None
            for entry in entries:
                if entry.sig() == mine:
                    found = entry.results.get(inputs)
                    if found is not None and len(found[0]) == slots:
                        return (list(found[0]), list(found[1])), None
                    return None, (entry, inputs)
        return None, (group, order, mine, inputs)

    def store(self, token, slot_shapes, slot_types):
        """Keep the results of the bind ``token`` (from :meth:`lookup`) was given for."""
        if token is None:
            return
        if len(token) == 2:
            entry, inputs = token
        else:
            group, order, signature, inputs = token
            entry = _Entry(order, signature)
            self._entries.setdefault(group, []).append(entry)
        if entry.edits == graph_edits():
            entry.results[inputs] = (list(slot_shapes), list(slot_types))
