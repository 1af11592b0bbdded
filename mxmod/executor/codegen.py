"""The executor's forward and backward loops written out as straight-line Python, one function per
program, made once the program has run a few times.

``fastpath.run_forward`` and ``fastpath.run_backward`` walk their programs (tuples resolved at
bind time) step by step; for a small network most of their time goes to the walking itself: a
tuple unpacked per step, a list comprehension (a function call since Python 3.11) per list of
arguments, a loop over the outputs, the freed slots and the finished gradients. The functions
made here do what those loops do, in the same order and with the same objects, but with every
slot number, constant and branch known when the function is written: each step is a direct call
with its argument lists spelled out. They are made again when the program, or the list of slots
to free, is replaced (a new bind, reshape or sparse dispatch); both are only ever replaced whole.
The loops stay the reference: tests run programs both ways and compare the results bit for bit."""

__all__ = ['forward_function', 'backward_function', 'WARM_PASSES', 'MAX_STEPS']

# a program is written out once it ran this many times (an executor used for a few passes, as a
# one-off predict, never pays for the writing: about 0.1 ms per forward and 0.3 ms per backward
# step)...
WARM_PASSES = 8
# ...and only when it has at most this many steps: what the walking costs (about 1 us per step
# and pass) matters only next to small operators; a longer program keeps the loops
MAX_STEPS = 1000


def _cached(exe, attr, program, frees):
    """The function made for these very objects, or None: None as well while the program has
    not run ``WARM_PASSES`` times (counted here) or is longer than ``MAX_STEPS``; at the pass
    that makes it warm, the function is made and cached in ``exe.<attr>``."""
    hit = exe.__dict__.get(attr)
    if hit is not None and hit[0] is program and hit[1] is frees:
        if hit[2] is not None:
            return hit[2]
        passes = hit[3] + 1
    else:
        passes = 1
    if passes < WARM_PASSES or len(program) > MAX_STEPS:
        exe.__dict__[attr] = (program, frees, None, passes)
        return None
    return _MAKE


_MAKE = object()        # _cached: "make it now"


def _make(lines, consts, name):
    """Compile ``lines`` (the body of ``def <name>(...)``, its first line the signature) inside a
    factory whose parameters are the constants, and return the function the factory makes."""
    names = sorted(consts)
    src = 'def _factory(%s):\n' % ', '.join(names) + \
        '\n'.join('    ' + line for line in lines) + '\n    return %s\n' % name
    scope = {'__name__': __name__}     # warnings from this code are mxmod's
    exec(compile(src, '<mxmod.executor.codegen %s>' % name, 'exec'), scope)  # pylint: disable=exec-used
    return scope['_factory'](**{n: consts[n] for n in names})


def _vals_list(slots):
    return '[%s]' % ', '.join('vals[%d]' % s for s in slots)


def forward_function(exe, frees):
    """``run(vals)``: every step of ``exe._fwd_program`` with the slots of ``frees`` (one list
    per step) emptied after it, as ``fastpath.run_forward``'s loop runs them; None while the
    loop should run (see ``_cached``)."""
    program = exe._fwd_program
    attr = '_codegen_fwd_train' if frees is exe._free_train else '_codegen_fwd_other'
    fn = _cached(exe, attr, program, frees)
    if fn is not _MAKE:
        return fn
    consts, lines = {}, ['def run(vals):']
    for k, ((forward_, octx, ins, auxs, outs), free) in enumerate(zip(program, frees)):
        consts['F%d' % k], consts['C%d' % k] = forward_, octx
        lines.append('    r = F%d(C%d, %s, %s)' % (k, k, _vals_list(ins), _vals_list(auxs)))
        if len(outs) == 1:
            lines += ['    for o in r:', '        vals[%d] = o' % outs[0], '        break']
        elif outs:
            consts['S%d' % k] = tuple(outs)
            lines += ['    for s, o in zip(S%d, r):' % k, '        vals[s] = o']
        lines += ['    vals[%d] = None' % s for s in free]
    if len(lines) == 1:
        lines.append('    pass')
    fn = _make(lines, consts, 'run')
    exe.__dict__[attr] = (program, frees, fn, WARM_PASSES)
    return fn


def backward_function(exe):
    """``run(exe, vals, grads)``: every step of ``exe._bwd_program``, as
    ``fastpath.run_backward``'s loop runs it (see there); None while the loop should run."""
    program = exe._bwd_program
    fn = _cached(exe, '_codegen_bwd', program, None)
    if fn is not _MAKE:
        return fn
    consts, lines = {}, ['def run(exe, vals, grads):', '    pop = grads.pop',
                         '    get = grads.get']
    for k, (backward, octx, ins, outs, auxs, read_in, read_out, wanted, is_loss, free,
            finished, step) in enumerate(program):
        consts['B%d' % k], consts['C%d' % k] = backward, octx
        body = []
        if len(outs) == 1:
            lines.append('    ogs = [pop(%d, None)]' % outs[0])
            test = None if is_loss else 'ogs[0] is not None'
        else:
            lines.append('    ogs = [%s]' % ', '.join('pop(%d, None)' % s for s in outs))
            test = None if is_loss else ' or '.join('ogs[%d] is not None' % i
                                                   for i in range(len(outs))) or 'False'
            if not is_loss and outs:
                consts['S%d' % k] = tuple(outs)
                body += ['if %s:' % ' or '.join('ogs[%d] is None' % i for i in range(len(outs))),
                         '    ogs = [g if g is not None else exe._zeros(s) '
                         'for g, s in zip(ogs, S%d)]' % k]
        if read_in:
            in_expr = _vals_list(ins)
        else:
            consts['NI%d' % k] = step.no_inputs
            in_expr = 'NI%d' % k
        if read_out:
            out_expr = _vals_list(outs)
        else:
            consts['NO%d' % k] = step.no_outputs
            out_expr = 'NO%d' % k
        body.append('r = B%d(C%d, ogs, %s, %s, %s)' % (k, k, in_expr, out_expr,
                                                     _vals_list(auxs) if auxs else '[]'))
        if wanted:
            body.append('n = len(r)')
        for i, s in wanted:
            body += ['if n > %d:' % i,
                     '    g = r[%d]' % i,
                     '    if g is not None:',
                     '        old = get(%d)' % s,
                     '        grads[%d] = g if old is None else old + g' % s]
        if test is None:
            lines += ['    ' + line for line in body]
        else:
            lines.append('    if %s:' % test)
            lines += ['        ' + line for line in body]
        lines += ['    vals[%d] = None' % s for s in free]
        if finished:
            consts['FIN%d' % k] = finished
            lines += ['    if exe._grad_hook is not None:',
                      '        exe._write_grads(grads, FIN%d)' % k,
                      '    else:']
            for j, target in enumerate(finished):
                consts['T%d_%d' % (k, j)] = target
                lines += ['        g = get(%d)' % target[0],
                          '        if g is not None and g is T%d_%d[2]._data:' % (k, j),
                          '            del grads[%d]' % target[0],
                          '        else:',
                          '            exe._write_grads(grads, (T%d_%d,))' % (k, j)]
    fn = _make(lines, consts, 'run')
    exe.__dict__['_codegen_bwd'] = (program, None, fn, WARM_PASSES)
    return fn
