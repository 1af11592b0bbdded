"""Freeze MXNet 1.9.1's behaviour for the mx.gluon.rnn tests (run with the oracle's Python):

    /tmp/mxnet-ref/bin/python mxmod_tests/gluon/gen_fixtures.py

Writes fixtures/symbols.json (per symbol_cases case: tojson, listings, inferred shapes, the
cell's collected Parameters, state names, repr) and fixtures/forward.npz (inference outputs of
the numeric cases on the deterministic inputs of ``symbol_cases.arrays``)."""
import json
import os
import sys

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import symbol_cases  # noqa: E402  pylint: disable=wrong-import-position

OUT = os.path.join(HERE, 'fixtures')


def describe(built):
    """Everything the tests compare for one built case."""
    sym = built['sym']
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**built['shapes'])
    params = built['cell'].collect_params()
    return {'json': sym.tojson(), 'list_arguments': sym.list_arguments(),
            'list_outputs': sym.list_outputs(),
            'list_auxiliary_states': sym.list_auxiliary_states(),
            'arg_shapes': [list(s) for s in arg_shapes],
            'out_shapes': [list(s) for s in out_shapes],
            'aux_shapes': [list(s) for s in aux_shapes],
            'params': [[name, list(p.shape) if p.shape is not None else None, p.grad_req,
                        p.lr_mult, p.wd_mult] for name, p in params.items()],
            'params_prefix': params.prefix, 'params_repr': repr(params),
            'prefix': built['cell'].prefix,
            'states': [s.name for s in built['states']],
            'repr': repr(built['cell'])}


def forward(built):
    sym = built['sym']
    args = symbol_cases.arrays(sym, built['shapes'], built['fixed'])
    outs = sym.eval(mx.cpu(), **{k: mx.nd.array(v) for k, v in args.items()})
    return [o.asnumpy() for o in outs]


def main():
    os.makedirs(OUT, exist_ok=True)
    symbols, numbers = {}, {}
    for case in symbol_cases.CASES:
        built = symbol_cases.build(mx, case)
        symbols[case.__name__] = describe(built)
        if case.__name__ in symbol_cases.NUMERIC:
            for i, out in enumerate(forward(built)):
                numbers['%s/%d' % (case.__name__, i)] = out
    with open(os.path.join(OUT, 'symbols.json'), 'w') as f:
        json.dump(symbols, f, indent=1, sort_keys=True)
    np.savez_compressed(os.path.join(OUT, 'forward.npz'), **numbers)
    print('wrote %d cases, %d output arrays' % (len(symbols), len(numbers)))


if __name__ == '__main__':
    main()
