"""``check_consistency``: one symbol (or a list of equivalent ones) run under several contexts
and dtypes, outputs and gradients compared with the most precise run."""
import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import array as nd_array
from .compare import assert_almost_equal
from .tolerance import get_tols

__all__ = ['check_consistency']


def _less_precise(dt1, dt2):
    """The dtype of smaller item size (``dt1`` when ``dt2`` is None)."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _bind_all(syms, ctx_list, grad_req):
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    executors = []
    for sym, spec in zip(syms, ctx_list):
        if sym.list_arguments() != arg_names or sym.list_outputs() != output_names:
            raise MXNetError('check_consistency: the symbols differ in arguments or outputs: %s %s '
                             'vs %s %s' % (sym.list_arguments(), sym.list_outputs(), arg_names,
                                           output_names))
        executors.append(sym.simple_bind(grad_req=grad_req, **spec))
    return executors, output_names, arg_names


def _fill_inputs(executors, arg_params, aux_params, scale, use_uniform, rand_type, grad_req):
    for name, arr in sorted(executors[0].arg_dict.items()):
        if name not in arg_params:
            if use_uniform:
                arg_params[name] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                     size=arr.shape).astype(rand_type)
            else:
                arg_params[name] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for name in executors[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in executors:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == 'add':
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0


def _compare(index, gt_index, name, arr, want, tols, equal_nan, raise_on_err, phase):
    try:
        assert_almost_equal(arr, want, rtol=tols[0], atol=tols[1], equal_nan=equal_nan)
    except AssertionError as err:
        if raise_on_err:
            raise AssertionError('%s error: ctx %d vs ctx %d at %s\n%s'
                                 % (phase, index, gt_index, name, err)) from None
        import warnings  # pylint: disable=import-outside-toplevel
        warnings.warn('%s error: ctx %d vs ctx %d at %s\n%s' % (phase, index, gt_index, name, err))


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Check that ``sym`` gives the same outputs and gradients under every entry of ``ctx_list``.

    Parameters
    ----------
    sym : Symbol or list of Symbol
        One symbol for all runs, or one per run (same arguments and outputs).
    ctx_list : list of dict
        ``simple_bind`` arguments per run: ``ctx``, input shapes by name, ``type_dict``.
    scale : float
        Standard deviation (normal) or range (uniform) of the random inputs.
    grad_req : str
    arg_params, aux_params : dict of str to numpy.ndarray, optional
        Inputs to use instead of random ones (aux states default to 0).
    rtol, atol : float or dict of dtype to float, optional
    raise_on_err : bool
        Raise on a mismatch (else warn).
    ground_truth : dict, optional
        Expected outputs and gradients by name; default: the run whose first output has the
        most precise dtype.
    equal_nan, use_uniform : bool
    rand_type : numpy dtype
        dtype the random inputs are drawn in.

    Returns
    -------
    dict
        The ground truth outputs (and gradients) by name.
    """
    if len(ctx_list) < 2:
        raise ValueError('check_consistency needs at least two runs, got %d' % len(ctx_list))
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(syms) != len(ctx_list):
        raise ValueError('check_consistency: %d symbols for %d runs' % (len(syms), len(ctx_list)))
    executors, output_names, arg_names = _bind_all(syms, ctx_list, grad_req)
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    _fill_inputs(executors, arg_params, aux_params, scale, use_uniform, rand_type, grad_req)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in executors]
    gt_index = int(np.argmax(dtypes))
    gt = ground_truth
    if gt is None:
        gt = dict(executors[gt_index].output_dict)
        if grad_req != 'null':
            gt.update(executors[gt_index].grad_dict)
    for exe in executors:
        exe.forward(is_train=False)
    for i, exe in enumerate(executors):
        if i != gt_index:
            for name, arr in zip(output_names, exe.outputs):
                _compare(i, gt_index, name, arr, gt[name], (rtol, atol), equal_nan, raise_on_err,
                         'Predict')
    if grad_req != 'null':
        _train_and_compare(executors, gt, gt_index, dtypes, output_names + arg_names,
                           (rtol, atol), equal_nan, raise_on_err)
    return gt


def _train_and_compare(executors, gt, gt_index, dtypes, names, tols, equal_nan, raise_on_err):
    for exe in executors:
        exe.forward(is_train=True)
    # every run gets the first run's outputs, rounded to the least precise dtype, as head grads
    least = [out.dtype for out in executors[0].outputs]
    for exe in executors:
        least = [_less_precise(out.dtype, dt) for out, dt in zip(exe.outputs, least)]
    heads = [out.astype(dt).asnumpy() for out, dt in zip(executors[0].outputs, least)]
    for exe in executors:
        exe.backward([nd_array(h, ctx=exe._ctx, dtype=out.dtype)  # pylint: disable=protected-access
                      for h, out in zip(heads, exe.outputs)])
    for i, exe in enumerate(executors):
        if i == gt_index:
            continue
        for name, arr in zip(names, list(exe.outputs) + list(exe.grad_arrays)):
            want = gt.get(name)
            if want is None:
                if arr is not None:
                    raise AssertionError('check_consistency: ctx %d has a gradient for %s, the '
                                         'ground truth has none' % (i, name))
                continue
            rt, at = tols
            arr_dt = _less_precise(arr.dtype, dtypes[i])
            want_dt = _less_precise(want.dtype, dtypes[gt_index])
            if arr_dt != arr.dtype or want_dt != want.dtype:
                rt, at = get_tols(arr.astype(arr_dt), want.astype(want_dt), rt, at)
            _compare(i, gt_index, name, arr, want, (rt, at), equal_nan, raise_on_err, 'Train')
