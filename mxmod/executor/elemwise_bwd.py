"""The backward source of a compiled elementwise group (elemwise_jit.CompiledGroup): one
compiled pass that recomputes the arithmetic values, runs the members' gradients in reverse order
and writes the gradients of the group's inputs, and the Python function around it."""
import re

from .elemwise_jit import _KOPTS, _scalar, _subst, _tuple, _unpack

_NAME = re.compile(r'^[A-Za-z_]\w*$')


def backward_source(group, need, missing):
    """(lines of the kernel ``bk``, lines of ``backward(out_grads, inputs, saved, K)``) for the
    needed inputs ``need`` (one flag per input) and the absent output gradients ``missing``."""
    block = group.block
    sweep = _Sweep(group, block.wanted_slots(need))
    for j, s in enumerate(block.output_slots):
        if not missing[j]:
            sweep.present[s] = 'gq%d' % j
    for k in range(len(block.members) - 1, -1, -1):
        sweep.member(k)
    leaves = group._leaves()
    for k in group.vectors:
        leaves[block.members[k][3]] = ('w%d_2d' % k, 'full')
    members = group._closure([s for s in sweep.read if s not in leaves], leaves)
    full_out = [(s, sweep.present[s]) for s in block.input_slots
                if s in sweep.present and group.access[s] == 'full']
    sums = list(dict.fromkeys(v for s, v in sweep.broadcast if _column_sum(group, s)))
    rows = list(dict.fromkeys([v for _, v in full_out] + [v for _, v in sweep.broadcast]))
    used_q = ['q%d' % j for j, s in enumerate(block.output_slots) if not missing[j]]
    args = sorted({leaves[s][0] for k in members for s in block.members[k][2] if s in leaves} |
                  {leaves[s][0] for s in sweep.read if s in leaves})
    inner = group._loads(members, sweep.read, leaves)
    inner += ['gq%s = %s[r, c]' % (q[1:], q) for q in used_q]
    inner += group._computations(members) + sweep.lines
    inner += ['O[%d, r, c] = %s' % (i, v) for i, v in enumerate(rows)]
    call = ['R', 'C'] + args + used_q + ['O', 'U']
    kernel = ['@njit(%s)' % _KOPTS, 'def bk(%s):' % ', '.join(call), '    for r in range(R):',
              '        for c in range(C):'] + ['            ' + line for line in inner]
    if sums:
        # numpy sums a C-ordered (R, C) array over axis 0 row after row (the first row stored,
        # the others added), and so does this second loop, apart from the first (a sum read and
        # written in the first loop kept LLVM from vectorising it)
        kernel += ['    for r in range(R):', '        if r == 0:', '            for c in range(C):']
        kernel += ['                U[%d, c] = O[%d, r, c]' % (i, rows.index(v))
                   for i, v in enumerate(sums)]
        kernel += ['        else:', '            for c in range(C):']
        kernel += ['                U[%d, c] += O[%d, r, c]' % (i, rows.index(v))
                   for i, v in enumerate(sums)]
    kernel.append('')
    return kernel, _wrapper(group, need, used_q, call, full_out, sweep, (rows, sums))


def _column_sum(group, slot):
    """Whether the kernel sums the gradient of input ``slot`` over the rows itself: a 'row'
    input of a 2-D group (unbroadcast's sum over axis 0)."""
    return group.access[slot] == 'row' and len(group.shape) == 2


def _wrapper(group, need, used_q, call, full_out, sweep, layout):
    """The Python function around the kernel: views, the output arrays, the broadcast sums."""
    rows, sums = layout
    block = group.block
    flat = '' if len(group.shape) == 2 else '.reshape(R, C)'
    shaped = '' if len(group.shape) == 2 else '.reshape(SHAPE)'
    body = ['def backward(out_grads, inputs, saved, K):']
    body += _unpack('inputs', 'x', block.input_slots, group._flat_input)
    if group.vectors:
        body.append('    %s = saved' % _tuple(['w%d_2d' % k for k in group.vectors]))
    for q in used_q:
        body.append('    %s = out_grads[%s]%s' % (q, q[1:], flat))
    body += ['    O = np.empty((%d, R, C), DT)' % len(rows),
             '    U = np.empty((%d, C), DT)' % len(sums), '    bk(%s)' % ', '.join(call)]
    result = {s: 'O[%d]%s' % (rows.index(v), shaped) for s, v in full_out}
    summed = {}
    for s, v in sweep.broadcast:
        i = group.inputs[s]
        if v not in summed:
            summed[v] = 'u%d' % len(summed)
            if v in sums:
                body.append('    %s = U[%d].reshape(%r)' % (summed[v], sums.index(v),
                                                           tuple(block.shapes[s])))
            else:
                body.append('    %s = UB(O[%d]%s, %r)' % (summed[v], rows.index(v), shaped,
                                                       tuple(block.shapes[s])))
        body.append('    g%d = %s' % (i, summed[v] if s not in result
                                      else 'g%d + %s' % (i, summed[v])))
        result[s] = 'g%d' % i
    body.append('    return [%s]' % ', '.join(
        result.get(s, 'None') if need[i] else 'None' for i, s in enumerate(block.input_slots)))
    return body


class _Sweep(object):
    """The reverse pass over the members, per element: gradient variables (a gradient that is
    another one, as an addition's, is that variable), the lines computing them, the slots they
    read and the broadcast contributions (input slot, variable), in the executor's order."""

    def __init__(self, group, wanted):
        self.group, self.wanted = group, wanted
        self.present = {}       # slot -> variable holding its gradient so far
        self.lines, self.read, self.broadcast = [], [], []
        self._count = 0

    def member(self, k):
        group = self.group
        _, _, ins, out = group.block.members[k]
        g = self.present.get(out)
        if g is None:
            return
        operands = [_scalar(s, group) for s in ins]
        for i, expr in group.rules[k].grads:
            s = ins[i]
            if s not in self.wanted:
                continue
            self.read.extend(ins)
            self.read.append(out)
            value = _subst(expr, operands, _scalar(out, group), g)
            if not _NAME.match(value):
                h = self._new()
                self.lines.append('%s = %s' % (h, value))
                value = h
            if s in group.inputs and group.access[s] != 'full':
                self.broadcast.append((s, value))
            elif s in self.present:
                total = self._new()
                self.lines.append('%s = %s + %s' % (total, self.present[s], value))
                self.present[s] = total
            else:
                self.present[s] = value

    def _new(self):
        self._count += 1
        return 'h%d' % self._count

