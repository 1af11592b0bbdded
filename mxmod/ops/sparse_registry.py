"""Storage types in the operator library: how each operator treats row_sparse and CSR inputs.

An operator with sparse support has a :class:`StorageRule` (MXNet's FInferStorageType together
with its FComputeEx kernels): given the storage types of the inputs it names the storage types of
the outputs and computes on the sparse storages directly; the backward side does the same for the
gradients. An operator without a rule, or whose rule does not handle a combination, runs in
*fallback* mode: sparse inputs are made dense, the dense operator runs and its outputs are dense,
as MXNet's storage fallback does (auxiliary states given sparse are written back).

``plan_forward`` / ``plan_backward`` decide the mode and the storage types; ``run_forward`` /
``run_backward`` execute one call (used by ``mx.nd`` calls and by the executor's sparse steps)."""
from ..base import MXNetError
from ..sparse_storage import SparseStorage, is_sparse, stype_of, to_dense, to_stype

__all__ = ['StorageRule', 'register_rule', 'rule_of', 'plan_forward', 'plan_backward',
           'run_forward', 'run_backward', 'SPARSE_NAMESPACE', 'DENSE', 'SPARSE', 'FALLBACK']

DENSE, SPARSE, FALLBACK = 'dense', 'sparse', 'fallback'
RULES = {}

# the functions of ``mx.nd.sparse`` / ``mx.sym.sparse``: public name -> operator name
SPARSE_NAMESPACE = {name: name for name in (
    'ElementWiseSum', 'Embedding', 'FullyConnected', 'LinearRegressionOutput',
    'LogisticRegressionOutput', 'MAERegressionOutput', 'abs', 'adam_update', 'add_n', 'arccos',
    'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'broadcast_add', 'broadcast_div',
    'broadcast_minus', 'broadcast_mul', 'broadcast_plus', 'broadcast_sub', 'cast_storage', 'cbrt',
    'ceil', 'clip', 'concat', 'cos', 'cosh', 'degrees', 'dot', 'elemwise_add', 'elemwise_div',
    'elemwise_mul', 'elemwise_sub', 'exp', 'expm1', 'fix', 'floor', 'ftrl_update', 'gamma',
    'gammaln', 'log', 'log10', 'log1p', 'log2', 'make_loss', 'mean', 'negative', 'norm', 'radians',
    'relu', 'rint', 'round', 'rsqrt', 'sgd_mom_update', 'sgd_update', 'sigmoid', 'sign', 'sin',
    'sinh', 'slice', 'sqrt', 'square', 'stop_gradient', 'sum', 'tan', 'tanh', 'trunc', 'where',
    'zeros_like')}
SPARSE_NAMESPACE.update({'retain': '_sparse_retain', 'adagrad_update': '_sparse_adagrad_update'})


class StorageRule(object):
    """The storage behaviour of one operator class (subclass and register with
    :func:`register_rule`, or mix into an operator class that computes on storages itself)."""

    def forward_stypes(self, op, in_stypes):
        """Output storage types for the input storage types (arguments then auxiliary states),
        or None when this combination runs in dense fallback."""
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        """Compute the outputs (storages or dense arrays) from inputs that may be storages."""
        raise NotImplementedError(op.op_name)

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        """Storage types of the argument gradients, or None for dense fallback."""
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        """The argument gradients (storages, dense arrays or None)."""
        raise NotImplementedError(op.op_name)


def register_rule(*op_names):
    """Class decorator: use an instance of the decorated StorageRule for these operators."""
    def decorate(rule_cls):
        from .base import OPS  # pylint: disable=import-outside-toplevel
        rule = rule_cls()
        for name in op_names:
            if name not in OPS:
                raise MXNetError('register_rule: unknown operator %r' % name)
            RULES[OPS[name]] = rule
        return rule_cls
    return decorate


def rule_of(op):
    """The StorageRule of an operator instance (None without sparse support)."""
    if isinstance(op, StorageRule):
        return op
    return RULES.get(type(op))


def _all_default(stypes):
    return all(s == 'default' for s in stypes)


def plan_forward(op, in_stypes):
    """``(out_stypes, mode)`` for ``op`` on inputs of ``in_stypes``."""
    n_out = len(op.list_outputs())
    rule = rule_of(op)
    if rule is not None:
        outs = rule.forward_stypes(op, list(in_stypes))
        if outs is not None:
            mode = DENSE if _all_default(in_stypes) and _all_default(outs) else SPARSE
            return list(outs), mode
    if _all_default(in_stypes):
        return ['default'] * n_out, DENSE
    return ['default'] * n_out, FALLBACK


def plan_backward(op, in_stypes, out_stypes, ograd_stypes):
    """``(grad_stypes, mode)`` of the argument gradients of ``op``."""
    n_args = len(op.list_arguments())
    rule = rule_of(op)
    if rule is not None:
        grads = rule.backward_stypes(op, list(in_stypes), list(out_stypes), list(ograd_stypes))
        if grads is not None:
            plain = _all_default(in_stypes) and _all_default(out_stypes) and \
                _all_default(ograd_stypes) and _all_default(grads)
            return list(grads), DENSE if plain else SPARSE
    every = list(in_stypes) + list(out_stypes) + list(ograd_stypes)
    return ['default'] * n_args, DENSE if _all_default(every) else FALLBACK


def _dense_all(values):
    return [to_dense(v) if isinstance(v, SparseStorage) else v for v in values]


def run_forward(op, octx, inputs, aux):
    """One forward call of ``op`` whose inputs may be storages; outputs follow the plan."""
    in_stypes = [stype_of(v) for v in list(inputs) + list(aux)]
    out_stypes, mode = plan_forward(op, in_stypes)
    if mode == DENSE:
        return op.forward(octx, inputs, aux)
    if mode == SPARSE:
        outs = rule_of(op).sparse_forward(op, octx, inputs, aux, out_stypes)
        return [to_stype(o, s) for o, s in zip(outs, out_stypes)] + list(outs[len(out_stypes):])
    dense_aux = _dense_all(aux)
    octx.out = None
    outs = op.forward(octx, _dense_all(inputs), dense_aux)
    for original, dense in zip(aux, dense_aux):
        if is_sparse(original):
            original.assign(to_stype(dense, original.stype))
    return outs


def run_backward(op, octx, out_grads, inputs, outputs, aux):
    """One backward call of ``op`` whose values may be storages."""
    in_stypes = [stype_of(v) for v in list(inputs) + list(aux)]
    out_stypes = [stype_of(v) for v in outputs]
    ograd_stypes = [stype_of(g) for g in out_grads]
    grad_stypes, mode = plan_backward(op, in_stypes, out_stypes, ograd_stypes)
    if mode == SPARSE:
        return rule_of(op).sparse_backward(op, octx, out_grads, inputs, outputs, aux,
                                           grad_stypes)
    if mode == FALLBACK:
        octx.grad_out = None
        out_grads, inputs = _dense_all(out_grads), _dense_all(inputs)
        outputs, aux = _dense_all(outputs), _dense_all(aux)
    return op.backward(octx, out_grads, inputs, outputs, aux)
