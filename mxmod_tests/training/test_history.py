"""Metric history (``fit(history=...)``, ``mx.callback.MetricHistory``) and TensorBoard event
files (``mx.contrib.tensorboard.LogMetricsCallback``): what a fit records, against the values
fit logs and a plain recomputation."""
import csv
import glob
import json
import logging
import os
import struct

import numpy as np
import pytest

import mxmod as mx

from ..module.common import mlp_sym, toy_data


def _fit(prefix, num_epoch=3, begin_epoch=0, history=True, arg_params=None, **kwargs):
    data, label = toy_data(n=60)
    train = mx.io.NDArrayIter(data[:40], label[:40], 10)
    val = mx.io.NDArrayIter(data[40:], label[40:], 10)
    mod = mx.mod.Module(mlp_sym(), context=mx.cpu())
    sched = mx.lr_scheduler.FactorScheduler(step=4, factor=0.5, base_lr=0.2)
    mod.fit(train, eval_data=val, eval_metric=['acc', 'ce'], num_epoch=num_epoch,
            begin_epoch=begin_epoch, arg_params=arg_params,
            optimizer_params={'learning_rate': 0.2, 'lr_scheduler': sched},
            epoch_end_callback=mx.callback.do_checkpoint(prefix), history=history, **kwargs)
    return mod


@pytest.fixture
def no_plots(monkeypatch):
    """MetricHistory draws no PNG (drawing is tested once, in test_plot_is_a_png)."""
    monkeypatch.setattr(mx.metric_history, '_matplotlib_available', lambda: False)


def _logged(caplog, kind, epoch, name):
    for record in caplog.records:
        text = record.getMessage()
        if text.startswith('Epoch[%d] %s-%s=' % (epoch, kind, name)):
            return float(text.split('=')[1])
    raise AssertionError('no log line for %s %s %s' % (epoch, kind, name))


def test_fit_history_files_match_the_logged_values(tmp_path, caplog, no_plots):
    (tmp_path / 'ckpt').mkdir()
    prefix = str(tmp_path / 'ckpt' / 'mlp')
    with caplog.at_level(logging.INFO):
        _fit(prefix)
    with open(prefix + '-history.json') as src:
        records = json.load(src)
    assert [r['epoch'] for r in records] == [0, 1, 2]
    for record in records:
        epoch = record['epoch']
        for name in ('accuracy', 'cross-entropy'):
            assert record['train'][name] == pytest.approx(_logged(caplog, 'Train', epoch, name),
                                                          abs=1e-6)
            assert record['validation'][name] == pytest.approx(
                _logged(caplog, 'Validation', epoch, name), abs=1e-6)
        assert record['time'] > 0
    # 4 updates per epoch, halved every 4 updates: the rate in force at each epoch's end
    assert [r['learning_rate'] for r in records] == [0.2, 0.1, 0.05]
    with open(prefix + '-history.csv') as src:
        rows = list(csv.DictReader(src))
    assert list(rows[0]) == ['epoch', 'time', 'learning_rate', 'train-accuracy',
                             'train-cross-entropy', 'validation-accuracy',
                             'validation-cross-entropy']
    assert [float(r['validation-accuracy']) for r in rows] == pytest.approx(
        [r['validation']['accuracy'] for r in records])
    assert os.path.exists(prefix + '-0003.params')       # next to the checkpoints
    assert not os.path.exists(prefix + '-history.png')


def test_resumed_fit_keeps_earlier_epochs(tmp_path, no_plots):
    prefix = str(tmp_path / 'mlp')
    _fit(prefix, num_epoch=2)
    _, args, auxs = mx.model.load_checkpoint(prefix, 2)
    _fit(prefix, num_epoch=4, begin_epoch=2, arg_params=args,
         history=mx.callback.MetricHistory(prefix, plot=False))
    with open(prefix + '-history.json') as src:
        assert [r['epoch'] for r in json.load(src)] == [0, 1, 2, 3]
    del auxs


def test_plot_is_a_png(tmp_path):
    pytest.importorskip('matplotlib')
    prefix = str(tmp_path / 'mlp')
    _fit(prefix, num_epoch=1, history=prefix)
    with open(prefix + '-history.png', 'rb') as src:
        assert src.read(8) == b'\x89PNG\r\n\x1a\n'


def test_history_argument_errors(tmp_path):
    data, label = toy_data(n=20)
    with pytest.raises(ValueError, match='do_checkpoint'):
        mx.mod.Module(mlp_sym(), context=mx.cpu()).fit(mx.io.NDArrayIter(data, label, 10),
                                                       num_epoch=1, history=True)
    with pytest.raises(TypeError, match='history'):
        mx.mod.Module(mlp_sym(), context=mx.cpu()).fit(mx.io.NDArrayIter(data, label, 10),
                                                       num_epoch=1, history=3)
    del tmp_path


def _events(folder):
    """(tag, step, value) of every scalar in the TensorBoard event files of ``folder``."""
    from tensorboardX.proto import event_pb2  # pylint: disable=import-outside-toplevel
    found = []
    for path in sorted(glob.glob(os.path.join(folder, 'events.out.tfevents.*'))):
        with open(path, 'rb') as src:
            blob = src.read()
        offset = 0
        while offset < len(blob):       # TFRecord: length, crc, data, crc
            (length,) = struct.unpack('<Q', blob[offset:offset + 8])
            event = event_pb2.Event.FromString(blob[offset + 12:offset + 12 + length])
            offset += 16 + length
            for value in event.summary.value:
                found.append((value.tag, event.step, value.simple_value))
    return found


def test_tensorboard_log_metrics_callback(tmp_path):
    pytest.importorskip('tensorboardX')
    train_cb = mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path / 'train'))
    eval_cb = mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path / 'eval'), prefix='val')
    data, label = toy_data(n=60)
    mod = mx.mod.Module(mlp_sym(), context=mx.cpu())
    mod.fit(mx.io.NDArrayIter(data[:40], label[:40], 20),
            eval_data=mx.io.NDArrayIter(data[40:], label[40:], 20), num_epoch=2,
            batch_end_callback=train_cb, eval_end_callback=eval_cb)
    train_cb.close()
    eval_cb.close()
    train = _events(str(tmp_path / 'train'))
    assert [(tag, step) for tag, step, _ in train] == [('accuracy', 0), ('accuracy', 0),
                                                       ('accuracy', 1), ('accuracy', 1)]
    evals = _events(str(tmp_path / 'eval'))
    assert [(tag, step) for tag, step, _ in evals] == [('val-accuracy', 0), ('val-accuracy', 1)]
    score = dict(mod.score(mx.io.NDArrayIter(data[40:], label[40:], 20), 'acc'))['accuracy']
    assert evals[-1][2] == pytest.approx(score, abs=1e-6)
    assert np.all([0 <= v <= 1 for _, _, v in train + evals])


def test_plot_redrawn_after_plot_every_and_at_the_end(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(mx.metric_history, '_matplotlib_available', lambda: True)
    monkeypatch.setattr(mx.metric_history, 'plot_history',
                        lambda records, path, title='': drawn.append(len(records)))
    prefix = str(tmp_path / 'mlp')
    _fit(prefix, num_epoch=4, history=mx.callback.MetricHistory(prefix, plot_every=3600))
    assert drawn == [1, 4]           # the first epoch (before validation is known), the last
    drawn.clear()
    _fit(prefix, num_epoch=3, history=mx.callback.MetricHistory(prefix, plot_every=0))
    assert drawn == [1, 1, 2, 3]     # every epoch once it validates
