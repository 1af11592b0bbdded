"""Gradient compression for pushed gradients: MXNet's 2-bit quantization with error feedback.

Each sender keeps a residual per (key, device). At every push the gradient is added to the
residual; elements whose residual reached ``+threshold`` send ``+threshold`` (and the residual
drops by it), those at or below ``-threshold`` send ``-threshold``, all others send 0."""
from ..base import MXNetError
from ..context import device_scope
from ..ndarray.ndarray import from_xp

__all__ = ['TwoBitCompression', 'create_compression']


class TwoBitCompression(object):
    """2-bit quantization with a residual kept per (key, device index).

    Parameters
    ----------
    threshold : float
        Quantization level; must be greater than 0.
    """

    def __init__(self, threshold=0.5):
        threshold = float(threshold)
        if not threshold > 0:
            raise MXNetError('gradient compression threshold must be greater than 0, got %r'
                             % threshold)
        self.threshold = threshold
        self._residuals = {}

    @property
    def type(self):
        """The compression type name."""
        return '2bit'

    def quantize(self, key, index, grad):
        """Return the quantized version of ``grad`` (an NDArray on its own context).

        Parameters
        ----------
        key : int or str
            Store key the gradient is pushed to.
        index : int
            Position of the sender in the pushed list (its device).
        grad : NDArray
        """
        with device_scope(grad.context):    # the residual lives on the sender's device
            return self._quantize(key, index, grad)

    def _quantize(self, key, index, grad):
        xp = grad.context.xp
        data = grad._data
        ctx, residual = self._residuals.get((key, index), (None, None))
        if residual is None or residual.shape != data.shape or ctx != grad.context:
            residual = xp.zeros(data.shape, dtype=data.dtype)
            self._residuals[(key, index)] = (grad.context, residual)
        residual += data
        out = xp.zeros_like(residual)
        thr = residual.dtype.type(self.threshold)
        pos = residual >= thr
        neg = residual <= -thr
        out[pos] = thr
        out[neg] = -thr
        residual -= out
        return from_xp(out, grad.context)

    def __repr__(self):
        return 'TwoBitCompression(threshold=%g)' % self.threshold


def create_compression(compression_params):
    """Build a compressor from MXNet's parameter dict ``{'type': '2bit', 'threshold': 0.5}``."""
    if not isinstance(compression_params, dict):
        raise TypeError('compression_params must be a dict like {"type": "2bit", "threshold": 0.5},'
                        ' got %s' % type(compression_params).__name__)
    params = dict(compression_params)
    kind = str(params.pop('type', 'none'))
    threshold = params.pop('threshold', 0.5)
    if kind != '2bit':
        if not float(threshold) > 0:
            raise MXNetError('gradient compression threshold must be greater than 0, got %r'
                             % threshold)
        raise MXNetError('Unknown type for gradient compression %s (supported: 2bit)' % kind)
    return TwoBitCompression(threshold)
