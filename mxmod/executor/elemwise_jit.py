"""A fused elementwise group compiled with numba (used by elemwise_block.ElemwiseBlock when numba
is in use and every member has a per-element form in elemwise_rules).

Forward is a few compiled passes over the elements: each pass computes, element by element, the
arithmetic members a value needs and writes the values that the next numpy function (tanh,
sigmoid, ...: the members computed by the operator's own numpy code) or the group's outputs need.
Backward is one compiled pass: it recomputes the arithmetic values from the group's inputs and the
saved outputs of the numpy functions, then runs the members' gradients in reverse order, summing
each value's gradient in the order the executor sums them. Gradients of inputs the group
broadcasts (a bias added to every row) are written out per contribution and summed back by
numpy, as the operators do. The results are bit for bit those of the separate steps.

The generated modules are kept by kernel_modules.py (a cache directory, ``MXMOD_KERNEL_CACHE``),
so numba compiles each kernel once per machine and the groups of every time step share it."""
import re
import threading

import numpy as np

from ..ops.broadcasting import unbroadcast
from . import elemwise_rules as rules
from .kernel_modules import Registered, module_for

_LOCK = threading.Lock()
_KOPTS = 'cache=True, nogil=True, boundscheck=False, error_model="numpy"'
_TOKEN = re.compile(r'\b(a\d+|y|g)\b')


def build(block):
    """A CompiledGroup for ``block``, or None when a member or an input does not fit. Groups of
    one structure (``block.key``: the time steps of a layer) share their generated code."""
    with _LOCK:
        if block.key in _TEMPLATES:
            template = _TEMPLATES[block.key]
            return None if template is None else CompiledGroup.like(block, template)
    group = _build(block)
    with _LOCK:
        if len(_TEMPLATES) >= MAX_TEMPLATES:
            _TEMPLATES.clear()
        _TEMPLATES[block.key] = group
    return group


_TEMPLATES = {}
MAX_TEMPLATES = 512


def _build(block):
    out = block.members[0][3]
    shape, dtype = tuple(block.shapes[out]), block.dtypes[out]
    if not shape or dtype not in ('float32', 'float64'):
        return None
    consts = {}
    found = [rules.rule(op, k, dtype, len(shape), consts)
             for k, (_, op, _, _) in enumerate(block.members)]
    if any(r is None for r in found):
        return None
    access = {}
    for kind, op, ins, _ in block.members:
        for i, s in enumerate(ins):
            if s in block.input_slots:
                pattern = _access(tuple(block.shapes[s]), shape, op.op_name == 'where' and i == 0)
                if pattern is None or access.get(s, pattern) != pattern:
                    return None
                access[s] = pattern
    return CompiledGroup(block, shape, dtype, found, consts, access)


def _access(shape, full, condition):
    """How a kernel reads an input of ``shape`` in a group of shape ``full``: 'full', 'row' (one
    value per column), 'col' (one per row), 'scalar', or None."""
    if shape == full:
        return 'full'
    if condition:
        return 'col' if len(full) == 2 and shape == full[:1] else None
    padded = (1,) * (len(full) - len(shape)) + shape
    if len(padded) != len(full):
        return None
    if all(d == 1 for d in padded):
        return 'scalar'
    if all(d == 1 for d in padded[:-1]) and padded[-1] == full[-1]:
        return 'row'
    if padded[-1] == 1 and padded[:-1] == full[:-1]:
        return 'col'
    return None


_INDEX = {'full': '%s[r, c]', 'row': '%s[c]', 'col': '%s[r]', 'scalar': '%s[0]'}
_FLAT = {'full': '.reshape(R, C)', 'row': '.reshape(C)', 'col': '.reshape(R)',
         'scalar': '.reshape(1)'}


class CompiledGroup(object):
    """Forward and backward of one ElemwiseBlock as compiled passes (see the module docstring)."""

    def __init__(self, block, shape, dtype, found, consts, access):
        self.block, self.shape, self.dtype = block, shape, dtype
        self.rules, self.consts, self.access = found, consts, access
        self.rows = int(np.prod(shape[:-1], dtype=np.int64))
        self.cols = shape[-1]
        self.made = {m[3]: k for k, m in enumerate(block.members)}
        self.vectors = [k for k, r in enumerate(found) if r.vector]
        self.inputs = {s: i for i, s in enumerate(block.input_slots)}
        self._bound = tuple(self._vector_consts(block))
        self._forward = self._function('forward', *self._forward_source())
        self._backward = {}

    @classmethod
    def like(cls, block, template):
        """A group for ``block`` running the code of ``template`` (a group of one structure),
        with its own operators for the vector members."""
        group = cls.__new__(cls)
        group.__dict__.update(template.__dict__)
        group._bound = tuple(group._vector_consts(block))
        return group

    # ---- running ------------------------------------------------------------------------
    def forward(self, inputs):
        return self._forward(inputs, self._bound)

    def backward(self, out_grads, inputs, saved, need):
        key = (need, tuple(g is None for g in out_grads))
        fn = self._backward.get(key)
        if fn is None:
            fn = self._backward[key] = self._function('backward', *self._backward_source(*key))
        return fn(out_grads, inputs, saved, self._bound)

    # ---- sources ------------------------------------------------------------------------
    def _vector_consts(self, block):
        """The objects of ``block`` the vector members' numpy expressions name (``K``)."""
        consts = {}
        for k in self.vectors:
            kind, op, ins, out = block.members[k]
            consts['OP%d' % k], consts['CTX%d' % k] = op, block.contexts[k]
            kind.forward_expr(op, k, ['_'] * len(ins), self.dtype, consts)
        self._knames = sorted(consts)
        return [consts[n] for n in self._knames]

    def _header(self, lines):
        """Module-level constants and helpers, then the kernels ``lines`` (nothing in it
        depends on the group's shape: one module serves every shape)."""
        dt = 'np.' + self.dtype
        head = ['import numpy as np', 'from numba import njit', '',
                'ONE = %s(1.0)' % dt, 'ZERO = %s(0.0)' % dt, 'TWO = %s(2.0)' % dt]
        for name in sorted(self.consts):
            head.append('%s = %s(%r)' % (name, dt, float(self.consts[name])))
        return '\n'.join(head) + '\n' + rules.helpers() + '\n' + '\n'.join(lines) + '\n'

    def _function(self, name, kernels, wrapper):
        """The Python function ``name`` of ``wrapper`` (lines), run with the compiled
        ``kernels`` (lines of a generated module) and the group's shape."""
        module = module_for(self._header(kernels))
        scope = dict(module.__dict__)
        scope.update(R=self.rows, C=self.cols, SHAPE=self.shape, DT=np.dtype(self.dtype).type,
                     UB=unbroadcast)
        source = '\n'.join(wrapper) + '\n'
        code = compile(source, '<mxmod fused elementwise %s>' % self.block.name, 'exec')
        exec(code, scope)  # pylint: disable=exec-used
        return Registered(scope[name], module)

    def _closure(self, slots, leaves):
        """Member indices (in order) computing ``slots`` from the arrays ``leaves``."""
        need, stack = set(), [s for s in slots if s not in leaves]
        while stack:
            s = stack.pop()
            k = self.made[s]
            if k in need:
                continue
            if self.rules[k].vector:
                raise KeyError(s)       # a vector value not yet computed
            need.add(k)
            stack.extend(i for i in self.block.members[k][2] if i not in leaves)
        return sorted(need)

    def _loads(self, members, extra, leaves):
        """Lines loading the leaf values ``members`` (and the slots ``extra``) read."""
        used = [s for k in members for s in self.block.members[k][2] if s in leaves]
        used += [s for s in extra if s in leaves]
        lines, seen = [], set()
        for s in used:
            if s not in seen:
                seen.add(s)
                arg, pattern = leaves[s]
                lines.append('%s = %s' % (_scalar(s, self), _INDEX[pattern] % arg))
        return lines

    def _computations(self, members):
        lines = []
        for k in members:
            ins = self.block.members[k][2]
            lines.append('v%d = %s' % (k, _subst(self.rules[k].forward,
                                                 [_scalar(s, self) for s in ins], None, None)))
        return lines

    def _leaves(self):
        """Arrays every pass may read: the inputs (as ``a<i>``)."""
        return {s: ('a%d' % i, self.access[s]) for s, i in self.inputs.items()}

    def _forward_source(self):
        leaves = self._leaves()
        body = ['def forward(inputs, K):', '    %s = K' % _tuple(self._knames)]
        body += _unpack('inputs', 'x', self.block.input_slots, self._flat_input)
        kernels, done = [], {}
        pending = list(self.vectors)
        while pending:
            wave = [k for k in pending if self._ready(k, leaves)]
            targets = [self.block.members[k][2][0] for k in wave]
            targets = [s for s in dict.fromkeys(targets) if s not in leaves]
            if targets:
                body += self._pass('f%d' % len(kernels), targets, leaves, kernels, done)
            for k in wave:
                body.append('    w%d = %s' % (k, self._vector_call(k, leaves, done)))
                leaves[self.block.members[k][3]] = ('w%d_2d' % k, 'full')
                body.append('    w%d_2d = w%d%s' % (k, k, self._flat()))
                pending.remove(k)
        rest = [s for s in self.block.output_slots if s not in leaves and s not in done]
        if rest:
            body += self._pass('f%d' % len(kernels), rest, leaves, kernels, done)
        outs = []
        for s in self.block.output_slots:
            if s in done:
                outs.append('%s%s' % (done[s], self._shaped()))
            elif s in self.made and self.rules[self.made[s]].vector:
                outs.append('w%d' % self.made[s])
            else:
                outs.append('x%d' % self.inputs[s])
        body.append('    return [%s], (%s)' % (', '.join(outs),
                                               ''.join('w%d_2d, ' % k for k in self.vectors)))
        return kernels, body

    def _ready(self, k, leaves):
        try:
            self._closure([self.block.members[k][2][0]], leaves)
        except KeyError:
            return False
        return True

    def _pass(self, name, targets, leaves, kernels, done):
        """A compiled pass writing ``targets`` into the rows of one new (n, R, C) array (one
        written array: with one per target, LLVM's overlap checks stop the loop from being
        vectorised); its call lines."""
        members = self._closure(targets, leaves)
        args = sorted({leaves[s][0] for k in members for s in self.block.members[k][2]
                       if s in leaves} | {leaves[s][0] for s in targets if s in leaves})
        out = 'T%d' % len(done)
        lines = ['@njit(%s)' % _KOPTS, 'def %s(%s):' % (name, ', '.join(['R', 'C'] + args + [out])),
                 '    for r in range(R):', '        for c in range(C):']
        inner = self._loads(members, targets, leaves) + self._computations(members)
        inner += ['%s[%d, r, c] = %s' % (out, i, _scalar(s, self)) for i, s in enumerate(targets)]
        lines += ['            ' + line for line in inner]
        kernels += lines + ['']
        call = ['    %s = np.empty((%d, R, C), DT)' % (out, len(targets)),
                '    %s(%s)' % (name, ', '.join(['R', 'C'] + args + [out]))]
        for i, s in enumerate(targets):
            call.append('    t%d = %s[%d]' % (s, out, i))
            done[s] = 't%d' % s
            leaves[s] = ('t%d' % s, 'full')
        return call

    def _vector_call(self, k, leaves, done):
        kind, op, ins, _ = self.block.members[k]
        names = []
        for s in ins:
            if s in self.inputs:
                names.append('x%d' % self.inputs[s])
            elif s in done:
                names.append(done[s] + self._shaped())
            else:
                names.append('w%d' % self.made[s])
        return kind.forward_expr(op, k, names, self.dtype, {})

    def _flat(self):
        return '' if len(self.shape) == 2 else '.reshape(R, C)'

    def _shaped(self):
        return '' if len(self.shape) == 2 else '.reshape(SHAPE)'

    def _flat_input(self, s):
        pattern = self.access[s]
        if pattern == 'full' and len(self.shape) == 2:
            return ''
        if pattern in ('row', 'col') and len(self.block.shapes[s]) == 1:
            return ''
        return _FLAT[pattern]

    # ---- backward -----------------------------------------------------------------------
    def _backward_source(self, need, missing):
        from .elemwise_bwd import backward_source  # pylint: disable=import-outside-toplevel
        return backward_source(self, need, missing)



def _subst(expr, operands, y, g):
    """``expr`` with a<i>, y and g replaced by the given names."""
    def repl(match):
        tok = match.group(1)
        if tok == 'y':
            return y
        if tok == 'g':
            return g
        return operands[int(tok[1:])]
    return _TOKEN.sub(repl, expr)


def _scalar(slot, group):
    """The per-element variable of ``slot`` inside a pass."""
    k = group.made.get(slot)
    return 'v%d' % k if k is not None else 'e%d' % group.inputs[slot]


def _tuple(names):
    return ''.join(n + ', ' for n in names) if names else '_'


def _unpack(source, prefix, slots, flat):
    """Lines naming the entries of ``source`` ``<prefix><i>`` and their kernel views ``a<i>``."""
    if not slots:
        return []
    lines = ['    %s = %s' % (_tuple(['%s%d' % (prefix, i) for i in range(len(slots))]), source)]
    for i, s in enumerate(slots):
        lines.append('    a%d = %s%d%s' % (i, prefix, i, flat(s)))
    return lines
