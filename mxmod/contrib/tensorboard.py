"""``mx.contrib.tensorboard``: metrics written as TensorBoard event files during ``fit``, as
MXNet 1.9.1's ``LogMetricsCallback`` wrote them (through tensorboardX, a maintained writer:
``pip install mxmod[tensorboard]``)."""

__all__ = ['LogMetricsCallback']


class LogMetricsCallback(object):
    """Batch-end or eval-end callback writing each metric value as a TensorBoard scalar at step
    ``param.epoch``.

    Parameters
    ----------
    logging_dir : str
        Directory of the event files (``tensorboard --logdir=...`` shows them).
    prefix : str, optional
        Written before each metric name as ``'<prefix>-<name>'``; giving training and validation
        the same names in two directories draws them in one chart.

    Examples
    --------
    >>> batch_end_callbacks = [mx.contrib.tensorboard.LogMetricsCallback('logs/train')]
    >>> eval_end_callbacks = [mx.contrib.tensorboard.LogMetricsCallback('logs/eval')]
    >>> mod.fit(train, eval_data=val, batch_end_callback=batch_end_callbacks,
    ...         eval_end_callback=eval_end_callbacks, num_epoch=10)
    """

    def __init__(self, logging_dir, prefix=None):
        try:
            from tensorboardX import SummaryWriter  # pylint: disable=import-outside-toplevel
        except ImportError as err:
            raise ImportError('LogMetricsCallback writes TensorBoard files with tensorboardX: '
                              'pip install mxmod[tensorboard] (%s)' % err) from err
        self.prefix = prefix
        self.summary_writer = SummaryWriter(logging_dir)

    def __call__(self, param):
        """Write the values of ``param.eval_metric`` (nothing when it is None)."""
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = '%s-%s' % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)

    def flush(self):
        """Write what is buffered to the event file now."""
        self.summary_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.summary_writer.close()
