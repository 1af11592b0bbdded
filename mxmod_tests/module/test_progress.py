"""fit/score/predict's progress bar: when it is drawn (terminal, switch, rank), what it shows
(batches of the known total, samples/s, metrics) and that log lines do not run into it."""
import logging
import re
import sys

import pytest

import mxmod as mx
from mxmod.module.progress import batches_per_epoch, progress_enabled

from .common import mlp_sym, toy_data


class _Terminal(object):
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty

    def write(self, text):
        return len(text)

    def flush(self):
        pass


@pytest.mark.parametrize('tty,setting,rank,expected', [
    (True, None, None, True), (False, None, None, False), (False, '1', None, True),
    (True, '0', None, False), (True, 'auto', None, True), (True, None, '1', False),
    (False, '1', '1', False)])
def test_when_the_bar_is_drawn(monkeypatch, tty, setting, rank, expected):
    monkeypatch.setattr(sys, 'stderr', _Terminal(tty))
    for var, value in (('MXMOD_PROGRESS_BAR', setting), ('MXMOD_RANK', rank)):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    for name in ('PMI_RANK', 'OMPI_COMM_WORLD_RANK'):
        monkeypatch.delenv(name, raising=False)
    assert progress_enabled(None) is expected
    assert progress_enabled(True) is (rank is None)    # forced on, but rank 0 only
    assert progress_enabled(False) is False


def test_batches_per_epoch():
    data, label = toy_data(n=25)
    assert batches_per_epoch(mx.io.NDArrayIter(data, label, 10)) == 3
    assert batches_per_epoch(mx.io.NDArrayIter(data, label, 10, last_batch_handle='discard')) == 2
    assert batches_per_epoch(mx.io.NDArrayIter(data, label, 10,
                                               last_batch_handle='roll_over')) is None
    assert batches_per_epoch(mx.io.ResizeIter(mx.io.NDArrayIter(data, label, 10), 7)) == 7
    assert batches_per_epoch(mx.io.PrefetchingIter(mx.io.NDArrayIter(data, label, 5))) == 5


def test_fit_bar_and_log_lines(capsys):
    data, label = toy_data(n=40)
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        mod = mx.mod.Module(mlp_sym(), context=mx.cpu())
        mod.fit(mx.io.NDArrayIter(data[:30], label[:30], 5),
                eval_data=mx.io.NDArrayIter(data[30:], label[30:], 5), num_epoch=2,
                batch_end_callback=mx.callback.Speedometer(5, 2), progress_bar=True)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    err = capsys.readouterr().err
    segments = [s.strip() for s in re.split(r'[\r\n]', err) if s.strip()]
    bars = [s for s in segments if s.startswith('Epoch[1]:')]
    assert bars and '6/6' in bars[-1] and 'samples/s=' in bars[-1] and 'accuracy=' in bars[-1]
    assert any(s.startswith('score[1]:') and '2/2' in s for s in segments)
    speed = [s for s in segments if 'Speed:' in s]
    # each log line on a line of its own, not after the bar's text
    assert len(speed) == 4
    assert all(re.match(r'Epoch\[\d\] Batch \[\d+-\d+\]\s+Speed', s) for s in speed), speed


def test_bar_learns_the_total_and_counts_samples():
    import io  # pylint: disable=import-outside-toplevel
    out = io.StringIO()
    bar = mx.callback.TqdmProgressBar(file=out, mininterval=0, batch_size=8)
    for epoch in range(2):
        for nbatch in range(4):
            bar(mx.model.BatchEndParam(epoch, nbatch, None, None))
    bar.close()
    text = out.getvalue()
    assert 'Epoch[0]: ' in text and '/4' not in text.split('Epoch[1]')[0]
    assert '4/4' in text.split('Epoch[1]', 1)[1]      # the first epoch's count
    assert 'samples/s=' in text
