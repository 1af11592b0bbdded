"""The operator library: every operator class, registered in ``base.OPS``."""
import importlib
import os
import warnings

from .base import OPS, Operator, OpContext, Param, register, get_op  # noqa: F401

_MODULES = ['elemwise', 'elemwise_scalar', 'nn', 'softmax', 'conv', 'pooling', 'upsampling', 'norm',
            'sync_batchnorm', 'loss', 'shape', 'shape_join', 'shape_broadcast', 'indexing',
            'indexing_values', 'indexing_nd', 'reduce', 'ordering', 'matrix', 'sequence', 'rnn',
            'random', 'random_index', 'custom', 'optimizer_ops', 'misc',
            'math_special', 'stats', 'array_extra', 'amp', 'im2col', 'linalg', 'linalg_copy',
            'linalg_decomp', 'spatial', 'roi', 'correlation', 'norm_extra', 'image_ops',
            'contrib_misc', 'resize_ops', 'boxes', 'box_coder', 'multibox', 'ctc', 'image_color',
            'attention', 'quantize', 'psroi', 'proposal', 'roi_rotated',
            # storage rules of the operators above and the sparse-only operators
            'sparse_elemwise', 'sparse_ops', 'sparse_matrix', 'sparse_rules']
_MODULES += ['linspace', 'random_pdf', 'deformable_conv', 'hawkes', 'embedding', 'control_flow']
# developers editing one op file can set MXMOD_SKIP_BROKEN_OPS=1 to keep working on the others
_TOLERANT = os.environ.get('MXMOD_SKIP_BROKEN_OPS') == '1'
for _m in _MODULES:
    try:
        importlib.import_module('.' + _m, __name__)
    except ModuleNotFoundError as _err:
        if _err.name != __name__ + '.' + _m and not _TOLERANT:
            raise
    except Exception as _err:  # pylint: disable=broad-except
        if not _TOLERANT:
            raise
        warnings.warn('operator module %s failed to import: %s' % (_m, _err))
