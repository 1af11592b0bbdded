"""The networks on which MXNet 1.9.1's exporter and mxmod's are compared (oracle_exporter.py runs
MXNet's; test_oracle.py runs mxmod's on the same builders): every layer case, the zoo as MXNet's
scripts write it and with its SoftmaxOutput replaced by softmax (the usual workaround for MXNet's
exporter), and the fused RNN with and without state outputs. ``mx`` is mxmod or mxnet."""
import gzip
import os

import numpy as np

from .layer_cases import CASES
from .tensor_cases import MATH_CASES, SEQUENCE_CASES, SHAPE_CASES
from .zoo import ZOO

HERE = os.path.dirname(os.path.abspath(__file__))


def _zoo(mx, name, shape, softmax):
    def build():
        with gzip.open(os.path.join(HERE, 'fixtures', 'zoo', name + '-symbol.json.gz'), 'rt') as f:
            sym = mx.sym.load_json(f.read())
        if softmax:
            sym = mx.sym.softmax(sym.get_children()[0], name='prob')
        return sym, {'data': np.random.RandomState(0).uniform(-1, 1, shape).astype(np.float32)}
    return build


def _fused(mx, mode, state_outputs):
    def build():
        extra = [mx.sym.var('cell')] if mode == 'lstm' else []
        sym = mx.sym.RNN(mx.sym.var('data'), mx.sym.var('params'), mx.sym.var('state'), *extra,
                         state_size=5, num_layers=2, mode=mode, state_outputs=state_outputs,
                         name='rnn')
        rng = np.random.RandomState(1)
        feed = {'data': rng.normal(0, 1, (4, 3, 6)).astype(np.float32),
                'state': rng.normal(0, 0.5, (2, 3, 5)).astype(np.float32)}
        if mode == 'lstm':
            feed['cell'] = rng.normal(0, 0.5, (2, 3, 5)).astype(np.float32)
        return sym, feed
    return build


def oracle_cases(mx):
    """name -> builder() returning (symbol, inputs); slow ones named 'zoo*/<full-size net>'."""
    out = {'layer/' + k: v for k, v in
           dict(CASES, **SHAPE_CASES, **MATH_CASES, **SEQUENCE_CASES).items()}
    for name, (_, _, shape, _) in ZOO.items():
        out['zoo/' + name] = _zoo(mx, name, shape, False)
        out['zoo_softmax/' + name] = _zoo(mx, name, shape, True)
    for mode in ('lstm', 'gru', 'rnn_tanh'):
        for states in (True, False):
            out['rnn/fused_%s%s' % (mode, '_states' if states else '')] = _fused(mx, mode, states)
    return out


def is_slow(name):
    """True for the full-size zoo networks."""
    family, _, net = name.partition('/')
    return family.startswith('zoo') and ZOO[net][3]
