"""``mx.callback.MetricHistory``: every epoch's training and validation metrics, learning rate
and time, kept in files next to the checkpoints and drawn as curves.

After each epoch (and again after its validation) it writes ``<prefix>-history.csv`` and
``<prefix>-history.json`` and, when matplotlib is installed (``pip install mxmod[plot]``),
``<prefix>-history.png``. ``Module.fit(..., history=...)`` wires it in; as plain callbacks it is
``batch_end_callback=hist``, ``epoch_end_callback=hist.epoch_end`` and
``eval_end_callback=hist.eval_end``, then ``hist.finish()``. A run resumed with ``begin_epoch=N`` keeps the recorded
epochs before N. In a distributed job only rank 0 writes."""
import csv
import json
import os
import time

from .profiler.trace import process_rank

__all__ = ['MetricHistory', 'plot_history']

_PLOT_EXTRA = 'pip install mxmod[plot] (matplotlib)'


def _matplotlib_available():
    try:
        import matplotlib  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        return False
    return True


class MetricHistory(object):
    """Record the metrics of each epoch of ``fit`` and keep them in files.

    Parameters
    ----------
    prefix : str
        Files are ``<prefix>-history.csv``, ``-history.json`` and ``-history.png`` (the prefix of
        ``do_checkpoint`` puts them next to the checkpoints).
    plot : bool, optional
        Draw the PNG (default: when matplotlib is installed; True without it raises ImportError).
    plot_every : float, default 10
        Seconds between redrawings of the PNG (0: after every epoch); the last epoch of ``fit``
        and :meth:`finish` always draw.
    """

    def __init__(self, prefix, plot=None, plot_every=10.0):
        if plot and not _matplotlib_available():
            raise ImportError('MetricHistory(plot=True) needs matplotlib: ' + _PLOT_EXTRA)
        self.prefix = str(prefix)
        self.plot = _matplotlib_available() if plot is None else bool(plot)
        self.records = []
        self._loaded = False
        self._clock = time.time()
        self._metric = None
        self._module = None
        self._validates = False      # eval_end seen: the epoch's plot waits for validation
        self.plot_every = float(plot_every)
        self._drawn = None           # when the PNG was last drawn
        self._final = None           # the last epoch fit will train

    # ---- files --------------------------------------------------------------------
    @property
    def csv_path(self):
        """Path of the CSV file."""
        return self.prefix + '-history.csv'

    @property
    def json_path(self):
        """Path of the JSON file."""
        return self.prefix + '-history.json'

    @property
    def png_path(self):
        """Path of the plot."""
        return self.prefix + '-history.png'

    # ---- recording -----------------------------------------------------------------
    def _record(self, epoch):
        if not self._loaded:
            self._loaded = True
            if os.path.exists(self.json_path):       # a resumed run keeps the earlier epochs
                with open(self.json_path) as src:
                    self.records = [r for r in json.load(src) if r['epoch'] < epoch]
        for record in self.records:
            if record['epoch'] == epoch:
                return record
        record = {'epoch': int(epoch), 'time': None, 'learning_rate': None, 'train': {},
                  'validation': {}}
        self.records.append(record)
        return record

    def epoch_begin(self, epoch, last=False):
        """Start the clock of an epoch (fit calls it; otherwise an epoch's time runs from the
        end of the previous one); ``last`` says that fit ends after it (its plot is drawn)."""
        self._clock = time.time()
        if last:
            self._final = epoch

    def __call__(self, param):
        """Batch-end callback: remember the training metric and the module of the epoch."""
        self._metric = param.eval_metric
        local_vars = getattr(param, 'locals', None) or {}
        self._module = local_vars.get('self', self._module)

    def epoch_end(self, epoch, symbol=None, arg_params=None, aux_params=None):  # pylint: disable=unused-argument
        """Epoch-end callback: record the epoch's training metric, learning rate and time."""
        record = self._record(epoch)
        record['time'] = time.time() - self._clock
        if self._metric is not None:
            record['train'] = dict(self._metric.get_global_name_value())
        record['learning_rate'] = _learning_rate(self._module)
        self._clock = time.time()
        self.save(draw=not self._validates and self._draw_due(epoch))

    def eval_end(self, param):
        """Eval-end callback: record the epoch's validation metric."""
        if param.eval_metric is None:
            return
        self._record(param.epoch)['validation'] = dict(param.eval_metric.get_name_value())
        self._validates = True
        self.save(draw=self._draw_due(param.epoch))

    def _draw_due(self, epoch):
        return (epoch == self._final or self._drawn is None
                or time.time() - self._drawn >= self.plot_every)

    def finish(self):
        """Write every file, the plot included (after training with the callbacks alone)."""
        if self.records:
            self.save(draw=True)

    # ---- output ----------------------------------------------------------------------
    def columns(self):
        """The CSV columns: epoch, time, learning_rate, train-<metric>..., validation-<metric>..."""
        names = {'train': [], 'validation': []}
        for record in self.records:
            for part, found in names.items():
                found += [n for n in record[part] if n not in found]
        return (['epoch', 'time', 'learning_rate'] + ['train-' + n for n in names['train']]
                + ['validation-' + n for n in names['validation']])

    def save(self, draw=True):
        """Write the CSV, JSON and (when plotting and ``draw``) PNG files (rank 0 only)."""
        if process_rank()[0] != 0:
            return
        folder = os.path.dirname(self.prefix)
        if folder:
            os.makedirs(folder, exist_ok=True)
        self.records.sort(key=lambda r: r['epoch'])
        with open(self.json_path, 'w') as out:
            json.dump(self.records, out, indent=1)
        columns = self.columns()
        with open(self.csv_path, 'w', newline='') as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            for record in self.records:
                flat = {'epoch': record['epoch'], 'time': record['time'],
                        'learning_rate': record['learning_rate']}
                for part in ('train', 'validation'):
                    flat.update(('%s-%s' % (part, k), v) for k, v in record[part].items())
                writer.writerow(['' if flat.get(c) is None else flat[c] for c in columns])
        if self.plot and draw:
            plot_history(self.records, self.png_path, title=os.path.basename(self.prefix))
            self._drawn = time.time()


def _learning_rate(module):
    """The learning rate the module's optimizer uses now, or None."""
    for owner in (module, getattr(module, '_curr_module', None)):
        optimizer = getattr(owner, '_optimizer', None)
        if optimizer is not None:
            return float(optimizer.learning_rate)
    return None


def plot_history(records, path, title=''):
    """Draw the curves of ``records`` (MetricHistory's) into the PNG file ``path``: one panel per
    metric (training and validation), one for the learning rate.

    Parameters
    ----------
    records : list of dict
    path : str
    title : str, optional
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # pylint: disable=import-outside-toplevel
        from matplotlib.figure import Figure  # pylint: disable=import-outside-toplevel
        from matplotlib.ticker import MaxNLocator  # pylint: disable=import-outside-toplevel
    except ImportError as err:
        raise ImportError('plotting the metric history needs matplotlib: %s (%s)'
                          % (_PLOT_EXTRA, err)) from err
    metrics = []
    for record in records:
        for part in ('train', 'validation'):
            metrics += [n for n in record[part] if n not in metrics]
    panels = metrics + ['learning rate']
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    figure = Figure(figsize=(4.5 * cols, 3.4 * rows), layout='constrained')
    FigureCanvasAgg(figure)
    for index, name in enumerate(panels):
        _panel(figure.add_subplot(rows, cols, index + 1), records, name, MaxNLocator)
    if title:
        figure.suptitle(title)
    figure.savefig(path, dpi=100)


def _panel(axes, records, name, locator):
    """One panel: a metric's training and validation curves, or the learning rate."""
    if name == 'learning rate':
        _draw(axes, records, lambda r: r['learning_rate'], 'learning rate', 'C2')
    else:
        _draw(axes, records, lambda r: r['train'].get(name), 'train', 'C0')
        _draw(axes, records, lambda r: r['validation'].get(name), 'validation', 'C1')
        axes.legend(loc='best')
    axes.set_ylabel(name)
    axes.set_xlabel('epoch')
    axes.xaxis.set_major_locator(locator(integer=True))
    axes.set_title(name)
    axes.grid(True, alpha=0.3)


def _draw(axes, records, value, label, color):
    points = [(r['epoch'], value(r)) for r in records if value(r) is not None]
    if points:
        epochs, values = zip(*points)
        axes.plot(epochs, values, marker='o', label=label, color=color)
        positive = [v for v in values if v > 0]
        if label == 'learning rate' and positive and max(positive) > 10 * min(positive):
            axes.set_yscale('log')
        elif label == 'learning rate' and min(values) == max(values) > 0:
            axes.set_ylim(0, 2 * values[0])      # a constant rate: a flat line mid-height
