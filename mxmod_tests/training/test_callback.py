"""mx.callback: log lines compared with MXNet 1.9.1's (fixtures/oracle.json, same scenarios
and the same fake clock), checkpoint callbacks, and the tqdm progress bar."""
import io
import json
import os
import time
from collections import namedtuple

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.training import shared_defs

ORACLE = json.load(open(os.path.join(os.path.dirname(__file__), 'fixtures', 'oracle.json')))
BatchEndParam = namedtuple('BatchEndParam', ['epoch', 'nbatch', 'eval_metric', 'locals'])


@pytest.mark.parametrize('key', sorted(shared_defs.CALLBACKS))
def test_log_lines_match_oracle(key, caplog, monkeypatch):
    monkeypatch.setattr(time, 'time', shared_defs.FakeClock())
    with caplog.at_level('INFO'):
        shared_defs.drive_callback(mx, shared_defs.CALLBACKS[key](mx), BatchEndParam, key)
    assert caplog.messages == ORACLE['callbacks'][key]


def test_speedometer_resets_local_but_not_global(monkeypatch):
    monkeypatch.setattr(time, 'time', shared_defs.FakeClock())
    metric = mx.metric.create('acc')
    speed = mx.callback.Speedometer(2, frequent=2)
    label, pred = mx.nd.array([0, 1]), mx.nd.array([[1, 0], [1, 0]])
    for nbatch in range(6):
        metric.update([label], [pred])
        speed(BatchEndParam(0, nbatch, metric, None))
    assert metric.num_inst == 2 and metric.global_num_inst == 12


def test_module_checkpoint_calls_save_every_period():
    calls = []

    class FakeModule(object):
        def save_checkpoint(self, *args):
            calls.append(args)

    callback = mx.callback.module_checkpoint(FakeModule(), 'pre', period=2,
                                             save_optimizer_states=True)
    for epoch in range(5):
        callback(epoch)
    assert calls == [('pre', 2, True), ('pre', 4, True)]
    calls[:] = []
    zero_period = mx.callback.module_checkpoint(FakeModule(), 'p', period=0)
    zero_period(0, None, None, None)
    assert calls == [('p', 1, False)]


def test_do_checkpoint_saves_epoch_plus_one(monkeypatch):
    calls = []
    monkeypatch.setattr(mx.model, 'save_checkpoint', lambda *args: calls.append(args))
    callback = mx.callback.do_checkpoint('pre', period=3)
    for epoch in range(7):
        callback(epoch, 'sym', {'a': 1}, {'b': 2})
    assert calls == [('pre', 3, 'sym', {'a': 1}, {'b': 2}), ('pre', 6, 'sym', {'a': 1}, {'b': 2})]


def test_do_checkpoint_writes_files(tmp_path):
    if not hasattr(mx, 'sym'):
        pytest.skip('symbol layer not available')
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    args = {'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros((2,))}
    prefix = str(tmp_path / 'net')
    mx.callback.do_checkpoint(prefix)(0, net, args, {})
    assert os.path.exists(prefix + '-symbol.json') and os.path.exists(prefix + '-0001.params')
    loaded = mx.nd.load(prefix + '-0001.params')
    np.testing.assert_array_equal(loaded['arg:fc_weight'].asnumpy(), np.ones((2, 3)))


def _drive_tqdm(bar, epochs=2, batches=4, metric=True):
    acc = mx.metric.create('acc') if metric else None
    for epoch in range(epochs):
        if acc is not None:
            acc.reset()
        for nbatch in range(batches):
            if acc is not None:
                acc.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [0.2 * nbatch, 0.5]])])
            bar(mx.model.BatchEndParam(epoch, nbatch, acc, None))


def test_tqdm_progress_bar_shows_epochs_batches_and_metric():
    out = io.StringIO()
    bar = mx.callback.TqdmProgressBar(total=4, file=out, mininterval=0)
    _drive_tqdm(bar)
    text = out.getvalue()
    assert 'Epoch[0]' in text and 'Epoch[1]' in text
    assert '4/4' in text
    assert 'accuracy=1.0000' in text and 'accuracy=0.8750' in text
    assert bar.bar is None  # closed once full


def test_tqdm_progress_bar_without_total_or_metric():
    out = io.StringIO()
    bar = mx.callback.TqdmProgressBar(desc='Predict', file=out, mininterval=0)
    _drive_tqdm(bar, epochs=1, batches=3, metric=False)
    bar.close()
    text = out.getvalue()
    assert 'Predict[0]' in text and '3batch' in text.replace(' ', '')
