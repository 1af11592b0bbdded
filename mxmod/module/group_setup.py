"""What a DataParallelExecutorGroup works out once, at bind time: the input descriptions, each
argument's grad_req, dtype codes of variables' ``__dtype__`` attributes, and the memory an
executor reports."""
import re

import numpy as np

from ..io import DataDesc

# MXNet's dtype codes, as found in a variable's ``__dtype__`` attribute
_DTYPE_MX_TO_NP = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
                   5: np.int8, 6: np.int64, 7: np.bool_, 12: np.dtype('V2')}


def _as_desc(shape):
    return shape if isinstance(shape, DataDesc) else DataDesc(*shape)


def _resolve_grad_req(grad_req, arg_names, param_names, data_names, fixed_param_names,
                      inputs_need_grad):
    """Per-argument grad_req dict from a str, a list (argument order) or a dict of overrides."""
    def default(name, req):
        if name in param_names:
            return 'null' if name in fixed_param_names else req
        if name in data_names:
            return req if inputs_need_grad else 'null'
        return 'null'
    if isinstance(grad_req, str):
        return {name: default(name, grad_req) for name in arg_names}
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise ValueError('grad_req list has %d entries; the symbol has %d arguments %s'
                             % (len(grad_req), len(arg_names), arg_names))
        return dict(zip(arg_names, grad_req))
    if isinstance(grad_req, dict):
        result = {name: default(name, 'write') for name in arg_names}
        result.update(grad_req)
        return result
    raise ValueError('grad_req must be one of str, list, tuple, or dict; got %s'
                     % type(grad_req).__name__)


def _exec_bytes(executor):
    """Bytes reported by ``executor.debug_str()`` ("Total N MB allocated"), 0 if unknown (the
    figure is read from the memory plan, without writing out the graph)."""
    memory_plan = getattr(executor, 'memory_plan', None)
    if memory_plan is not None:
        return memory_plan()['internal'] >> 20
    debug_str = getattr(executor, 'debug_str', None)
    if debug_str is None:
        return 0
    match = re.search(r'Total (\d+) MB allocated', debug_str())
    return int(match.group(1)) if match else 0
