"""Shared pieces of the hardening tests: a small trained module, the MXNet-written fixtures, and
the outcome check every loader test uses (loaded, or refused with an MXNetError)."""
import os

import numpy as np

import mxmod as mx
from mxmod_tests.conftest import GOLDEN
from mxmod_tests.module.common import mlp_sym, toy_data, cpus  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, 'fixtures')
MXNET_CKPT = os.path.join(FIXTURES, 'mxnet_ckpt')


def mxnet_states():
    """{key: bytes} of the MXNet-written .states pickles (see make_fixtures.py)."""
    with np.load(os.path.join(FIXTURES, 'mxnet_states.npz')) as archive:
        return {k: archive[k].tobytes() for k in archive.files if not k.startswith('layout:')}


def real_files(suffix):
    """Bytes of every committed MXNet-written (golden and fixture) file ending in ``suffix``."""
    found = {}
    for folder in (GOLDEN, FIXTURES):
        for name in sorted(os.listdir(folder)):
            if name.endswith(suffix):
                with open(os.path.join(folder, name), 'rb') as handle:
                    found[name] = handle.read()
    return found


def trained_module(context=None, optimizer='sgd', optimizer_params=None, hidden=8, steps=2,
                   kvstore='local'):
    """A bound, initialized module after ``steps`` updates on the toy data."""
    x, y = toy_data(10)
    mod = mx.mod.Module(mlp_sym(hidden=hidden), context=context or mx.cpu())
    mod.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                       optimizer_params=optimizer_params or {'learning_rate': 0.1,
                                                             'momentum': 0.9})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    for _ in range(steps):
        mod.forward_backward(batch)
        mod.update()
    return mod


def outcome(call, *args, **kwargs):
    """Run a loader: 'ok' when it returns, 'refused' on MXNetError; anything else propagates
    (the test then fails, showing the leaked exception)."""
    try:
        call(*args, **kwargs)
    except mx.MXNetError as err:
        assert str(err), 'an MXNetError without a message'
        return 'refused'
    return 'ok'
