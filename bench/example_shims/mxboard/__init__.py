"""Stand-in for mxboard (TensorBoard logging for MXNet; imported by example/capsnet, which writes
scalars with SummaryWriter.add_scalar): every call does nothing."""


class SummaryWriter(object):
    """Takes a log directory and any scalars, and writes nothing."""

    def __init__(self, logdir=None, **kwargs):
        self.logdir = logdir

    def add_scalar(self, *args, **kwargs):
        """Nothing is written."""

    def flush(self):
        """Nothing to flush."""

    def close(self):
        """Nothing to close."""
