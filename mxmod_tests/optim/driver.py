"""Runs the cases of cases.py against an ``mx`` module: MXNet (gen_oracle.py) or mxmod (tests).

Everything takes the module as an argument so that the same code produces the frozen oracle
values and the values compared with them."""
import numpy as np

from .cases import CASES, NAMES, OPS, SCHEDULES, SCHEDULE_QUERIES, SHAPES, STEPS

_POSITIVE = ('n', 'v', 'var', 'd')


def make_inputs(seed=0):
    """Deterministic float32 inputs of every case and operator, keyed for the npz fixture."""
    rng = np.random.RandomState(seed)
    data = {}
    for case in sorted(CASES):
        for i, shape in enumerate(SHAPES):
            data['%s:init%d' % (case, i)] = rng.uniform(-1, 1, shape).astype(np.float32)
            for k in range(STEPS):
                data['%s:grad%d_%d' % (case, i, k)] = rng.normal(0, 1, shape).astype(np.float32)
    for op in sorted(OPS):
        for arg in OPS[op][0]:
            value = rng.uniform(-1, 1, SHAPES[0]).astype(np.float32)
            data['op:%s:%s' % (op, arg)] = np.abs(value) if arg in _POSITIVE else value
    return data


def build_optimizer(mx, case):
    """The case's optimizer with its scheduler and multipliers."""
    opt_name, kwargs, _, sched, lr_mult, wd_mult = CASES[case]
    kwargs = dict(kwargs)
    if sched:
        kwargs['lr_scheduler'] = getattr(mx.lr_scheduler, sched[0])(**sched[1])
    opt = mx.optimizer.create(opt_name, param_idx2name=dict(NAMES), **kwargs)
    if lr_mult:
        opt.set_lr_mult(lr_mult)
    if wd_mult:
        opt.set_wd_mult(wd_mult)
    return opt


def _flatten(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _flatten(s)]
    return [state]


def run_case(mx, case, inputs):
    """Weights after every step, the final states and learning rate of one case."""
    dtype = CASES[case][2]
    opt = build_optimizer(mx, case)
    updater = mx.optimizer.get_updater(opt)
    count = len(SHAPES)
    weights = [mx.nd.array(inputs['%s:init%d' % (case, i)], dtype=dtype) for i in range(count)]
    out = {}
    for k in range(STEPS):
        grads = [mx.nd.array(inputs['%s:grad%d_%d' % (case, i, k)], dtype=dtype)
                 for i in range(count)]
        if k % 2 == 0:
            updater(list(range(count)), grads, weights)
        else:
            for i in range(count):
                updater(i, grads[i], weights[i])
        for i in range(count):
            out['%s:w%d_%d' % (case, i, k)] = weights[i].asnumpy()
    for i in range(count):
        for j, arr in enumerate(_flatten(updater.states[i])):
            out['%s:state%d_%d' % (case, i, j)] = arr.asnumpy()
    out['%s:lr' % case] = np.array(opt.learning_rate, dtype=np.float64)
    out['%s:num_update' % case] = np.array(opt.num_update)
    return out


def run_op(mx, name, inputs):
    """Outputs of one update operator and its (mutated) inputs."""
    arg_names, kwargs = OPS[name]
    op_name = name.replace('_noclip', '')
    arrays = [mx.nd.array(inputs['op:%s:%s' % (name, a)]) for a in arg_names]
    kwargs = dict(kwargs)
    if op_name.startswith('multi_'):   # MXNet needs out= to size the outputs of multi ops
        kwargs['out'] = [mx.nd.zeros(SHAPES[0]) for _ in range(kwargs['num_weights'])]
    result = getattr(mx.nd, op_name)(*arrays, **kwargs)
    result = result if isinstance(result, (list, tuple)) else [result]
    out = {'op:%s:out%d' % (name, i): r.asnumpy() for i, r in enumerate(result)}
    for arg, arr in zip(arg_names, arrays):
        out['op:%s:after_%s' % (name, arg)] = arr.asnumpy()
    return out


def run_schedule(mx, name):
    """Learning rates a scheduler returns for SCHEDULE_QUERIES, in order (schedulers are stateful)."""
    cls, kwargs = SCHEDULES[name]
    sched = getattr(mx.lr_scheduler, cls)(**kwargs)
    return [float(sched(n)) for n in SCHEDULE_QUERIES]


def run_all(mx, inputs):
    """Every case, operator and schedule; returns (arrays dict, schedules dict)."""
    arrays = {}
    for case in sorted(CASES):
        arrays.update(run_case(mx, case, inputs))
    for op in sorted(OPS):
        arrays.update(run_op(mx, op, inputs))
    return arrays, {name: run_schedule(mx, name) for name in sorted(SCHEDULES)}
