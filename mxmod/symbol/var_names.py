"""One variable per name in a graph.

MXNet accepts graphs in which two different variables share a name, lists the argument twice,
and binding then gives each copy its own array under one name, so parameters are silently not
shared or not set. mxmod refuses them:

* composing two different variables of the same name that the user created (for example
  ``mx.sym.var('a') + mx.sym.var('a')``) raises at that composition;
* the weights that two operators given the same name create for themselves (two
  ``FullyConnected(name='fc')`` make two ``fc_weight``) only warn when composed (MXNet's own
  tests build and plot such graphs), and raise when the graph is bound or given to a Module.

Each node's ``name -> variable`` table is cached (weakly), shared with its input's table when the
node adds no variable, so a check costs a merge of the inputs' tables, not a walk of the graph."""
import warnings
import weakref

from ..base import MXNetError

__all__ = ['check_unique_variables', 'check_bindable', 'DuplicateVariableError']

_TABLES = weakref.WeakKeyDictionary()
_IMPLICIT = weakref.WeakSet()     # variables an operator made for its own inputs (fc_weight)


class DuplicateVariableError(MXNetError, ValueError):
    """Two different variables of one graph have the same name."""


def _message(where, name):
    return ('%s: two different variables are named %r; a name must denote one variable (create '
            'it once with mx.sym.var(%r) and reuse that symbol, or give operators distinct '
            'names)' % (where, name, name))


def _merge(tables, where, strict, warn=False):
    """Union of ``tables`` (name -> variable node) with the duplicate-name rule (``warn``: say
    so when two operators' own weights collide; composition does, regrouping does not)."""
    tables = sorted({id(t): t for t in tables}.values(), key=len, reverse=True)
    if not tables:
        return {}
    merged, copied = tables[0], False
    for table in tables[1:]:
        for name, var in table.items():
            known = merged.get(name)
            if known is var:
                continue
            if known is not None:
                if strict or known not in _IMPLICIT or var not in _IMPLICIT:
                    raise DuplicateVariableError(_message(where, name))
                if warn:
                    warnings.warn(_message(where, name) + '; this graph cannot be bound',
                                  stacklevel=5)
                continue
            if not copied:
                merged, copied = dict(merged), True
            merged[name] = var
    return merged


def _mark_implicit(node):
    """Input variables named ``<node>_<argument>`` were made by the operator itself."""
    names = node.op.list_arguments() + node.op.list_auxiliary_states()
    for (src, _), arg in zip(node.inputs, names):
        if src.op is None and src.name == '%s_%s' % (node.name, arg):
            _IMPLICIT.add(src)


def _post_order(node, done):
    """Nodes reachable from ``node`` not in ``done``, inputs first (iterative)."""
    order, seen, stack = [], set(), [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            order.append(current)
            continue
        if current in done or id(current) in seen:
            continue
        seen.add(id(current))
        stack.append((current, True))
        stack.extend((src, False) for src, _ in current.inputs
                     if src not in done and id(src) not in seen)
    return order


def _table(node):
    """The variables reachable from ``node``, computed for its uncached part."""
    cached = _TABLES.get(node)
    if cached is not None:
        return cached
    if node.op is not None:     # a node just made of known inputs: no walk needed
        tables = [_TABLES.get(src) for src, _ in node.inputs]
        if None not in tables:
            _mark_implicit(node)
            table = _merge(tables, 'operator %s %r' % (node.op.op_name, node.name),
                           strict=False, warn=True)
            _TABLES[node] = table
            return table
    for current in _post_order(node, _TABLES):
        if current.op is None:
            _TABLES[current] = {current.name: current}
        else:
            _mark_implicit(current)
            _TABLES[current] = _merge([_TABLES[src] for src, _ in current.inputs],
                                      'operator %s %r' % (current.op.op_name, current.name),
                                      strict=False, warn=True)
    return _TABLES[node]


def check_unique_variables(outputs):
    """Apply the composition rule to the graph of ``outputs`` ([(node, index)])."""
    heads = {id(node): node for node, _ in outputs}
    if len(heads) == 1:
        _table(next(iter(heads.values())))
        return
    _merge([_table(node) for node in heads.values()], 'mx.sym.Group', strict=False)


def check_bindable(symbol, what):
    """Raise DuplicateVariableError when ``symbol``'s graph has two variables with one name
    (``what`` names the call: 'simple_bind', 'Module'...)."""
    if not hasattr(symbol, '_outputs'):
        from ..argcheck import ArgumentTypeError  # pylint: disable=import-outside-toplevel
        raise ArgumentTypeError('%s: symbol must be a Symbol, got %r (%s)'
                                % (what, symbol, type(symbol).__name__))
    if hasattr(symbol, '_arg_nodes'):
        args, auxs = symbol._arg_nodes()
        if len({n.name for n in args + auxs}) == len(args) + len(auxs):
            return      # each name once (else the walk below finds the one it reports)
    names = {}
    for node in _post_order_all(symbol):
        if node.op is None and names.setdefault(node.name, node) is not node:
            raise DuplicateVariableError(_message(what, node.name))


def _post_order_all(symbol):
    done = {}
    order = []
    for node, _ in symbol._outputs:  # pylint: disable=protected-access
        part = _post_order(node, done)
        done.update((n, True) for n in part)
        order.extend(part)
    return order
