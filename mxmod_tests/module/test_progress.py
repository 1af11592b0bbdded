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


def _fit_log(monkeypatch, setting, batches=120, bar=None, **fit_args):
    """The log lines of a one-epoch fit of ``batches`` batches of 2 with stderr not a terminal
    and ``MXMOD_PROGRESS_LOG=setting`` (None: unset), numbers blanked."""
    monkeypatch.setattr(sys, 'stderr', _Terminal(False))
    for var, value in (('MXMOD_PROGRESS_LOG', setting), ('MXMOD_PROGRESS_BAR', None),
                       ('MXMOD_RANK', None), ('PMI_RANK', None), ('OMPI_COMM_WORLD_RANK', None)):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    records = []

    class _Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    root, handler = logging.getLogger(), _Keep()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        data, label = toy_data(n=2 * batches)
        mod = mx.mod.Module(mlp_sym(), context=mx.cpu())
        mod.fit(mx.io.NDArrayIter(data, label, 2), num_epoch=1, progress_bar=bar, **fit_args)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return [re.sub(r'\d+\.\d+', '#', line) for line in records if 'Batch' in line]


def test_fit_without_bar_logs_like_a_speedometer(monkeypatch):
    """No batch_end_callback and no bar: the lines of mx.callback.Speedometer(batch_size, 50)."""
    reference = _fit_log(monkeypatch, '0', batch_end_callback=mx.callback.Speedometer(2, 50))
    assert [line.split('\t')[0] for line in reference] == ['Epoch[0] Batch [0-50]',
                                                            'Epoch[0] Batch [50-100]']
    assert all(re.match(r'Epoch\[0\] Batch \[\d+-\d+\]\tSpeed: # samples/sec\taccuracy=#$', line)
               for line in reference), reference
    assert _fit_log(monkeypatch, None) == reference
    assert _fit_log(monkeypatch, 'on') == reference
    assert _fit_log(monkeypatch, None, bar=False) == reference    # the bar off: lines still


@pytest.mark.parametrize('setting,fit_args,bar,expected', [
    ('0', {}, None, []), ('off', {}, None, []),
    ('40', {}, None, ['Epoch[0] Batch [0-40]', 'Epoch[0] Batch [40-80]']),
    (None, {'batch_end_callback': []}, None, []),
    (None, {'batch_end_callback': lambda param: None}, None, []),
    (None, {}, True, [])])
def test_progress_log_switches(monkeypatch, setting, fit_args, bar, expected):
    lines = _fit_log(monkeypatch, setting, bar=bar, **fit_args)
    assert [line.split('\t')[0] for line in lines] == expected


def test_progress_log_setting_is_checked(monkeypatch):
    with pytest.raises(ValueError, match='MXMOD_PROGRESS_LOG must be a number of batches'):
        _fit_log(monkeypatch, 'often', batches=3)


def test_progress_log_batch_size_from_any_iterator(monkeypatch):
    """The default Speedometer takes its batch size from batch_size, DataDesc or plain
    (name, shape) pairs; an iterator-like object that describes none (MXNet's
    test_reference_single_batch_during_fit gives provide_data=None) gets no log line rather than
    an error."""
    from mxmod.module.progress import progress_log
    monkeypatch.delenv('MXMOD_PROGRESS_LOG', raising=False)

    class Described(object):
        def __init__(self, provide_data):
            self.provide_data = provide_data

    assert progress_log(None, None, Described(None)) is None
    assert progress_log(None, None, Described([])) is None
    assert progress_log(None, None, Described([('data', (8, 3))])).batch_size == 8
    assert progress_log(None, None, Described(
        [mx.io.DataDesc('data', (3, 5), layout='TN')])).batch_size == 5
