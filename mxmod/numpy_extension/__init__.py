"""``mx.npx``: the part of MXNet 1.9.1's NumPy extension namespace that mxmod implements: the
switches of NumPy semantics (set_np, reset_np, is_np_array, is_np_shape, use_np, use_np_array,
use_np_shape, np_array, np_shape), the contexts (cpu, gpu, cpu_pinned, current_context,
num_gpus) and waitall. Its operators (npx.relu, npx.batch_norm, ...) are outside mxmod's scope:
any other name raises an MXNetError that says so."""
from ..context import cpu, gpu, cpu_pinned, current_context, num_gpus  # noqa: F401
from ..ndarray import waitall  # noqa: F401
from ..out_of_scope import out_of_scope_error as _out_of_scope_error
from ..util import (set_np, reset_np, is_np_array, is_np_shape, use_np, use_np_array,  # noqa: F401
                    use_np_shape, np_array, np_shape)

__all__ = ['set_np', 'reset_np', 'is_np_array', 'is_np_shape', 'use_np', 'use_np_array',
           'use_np_shape', 'np_array', 'np_shape', 'cpu', 'gpu', 'cpu_pinned',
           'current_context', 'num_gpus', 'waitall']

COVERED = ('the NumPy-semantics switches (set_np, reset_np, is_np_array, is_np_shape, use_np, '
           'use_np_array, use_np_shape, np_array, np_shape), the contexts (cpu, gpu, cpu_pinned, '
           'current_context, num_gpus) and waitall')


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.npx', name, COVERED)
