"""Helpers of the ONNX tests: random parameters, mxmod's forward as the reference, and the same
inputs run through onnxruntime."""
import numpy as np
import pytest

import mxmod as mx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')


def random_params(sym, input_shapes, seed=0, scale=None):
    """(arg_params, aux_params) of random values with sensible magnitudes: He-scaled weights,
    BatchNorm statistics around (0, 1)."""
    rng = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(**input_shapes)
    arg_types, _, aux_types = sym.infer_type(**{k: np.float32 for k in input_shapes})
    args, auxs = {}, {}
    skip = set(input_shapes) | {n for n in sym.list_arguments() if n.endswith('label')}
    for name, shape, dtype in zip(sym.list_arguments(), arg_shapes, arg_types):
        if name in skip:
            continue
        args[name] = mx.nd.array(_value(rng, name, shape, scale), dtype=dtype or np.float32)
    for name, shape, dtype in zip(sym.list_auxiliary_states(), aux_shapes, aux_types):
        args_like = rng.uniform(0.5, 1.5, shape) if name.endswith('var') else \
            rng.normal(0, 0.1, shape)
        auxs[name] = mx.nd.array(args_like, dtype=dtype or np.float32)
    return args, auxs


def _value(rng, name, shape, scale):
    if name.endswith('gamma'):
        return rng.uniform(0.8, 1.2, shape)
    if name.endswith(('beta', 'bias')) or len(shape) < 2:
        return rng.normal(0, 0.1, shape)
    fan_in = int(np.prod(shape[1:])) or 1
    return rng.normal(0, scale if scale is not None else np.sqrt(2.0 / fan_in), shape)


def mx_forward(sym, args, auxs, inputs):
    """mxmod's inference outputs (numpy) for ``inputs`` (dict name -> numpy)."""
    shapes = {k: v.shape for k, v in inputs.items()}
    types = {k: v.dtype for k, v in inputs.items()}
    exe = sym.simple_bind(mx.cpu(), grad_req='null', type_dict=types, **shapes)
    for name, value in list(args.items()) + list(auxs.items()):
        target = exe.arg_dict.get(name)
        if target is None:
            target = exe.aux_dict.get(name)
        if target is not None:
            target[:] = value
    for name, value in inputs.items():
        exe.arg_dict[name][:] = value
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def ort_run(path, inputs):
    """onnxruntime's outputs for ``inputs``."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=['CPUExecutionProvider'])
    return session.run(None, inputs)


def export_and_compare(sym, inputs, tmp_path, args=None, auxs=None, rtol=1e-4, atol=1e-5,
                       seed=0, **export_kwargs):
    """Export ``sym`` (random parameters unless given), check the model, and compare
    onnxruntime's outputs with mxmod's. Returns (path, mxmod outputs, args, auxs)."""
    shapes = {k: v.shape for k, v in inputs.items()}
    if args is None:
        args, auxs = random_params(sym, shapes, seed)
    path = str(tmp_path / ('%s.onnx' % (sym.name or 'group')))
    mx.onnx.export_model(sym, [args, auxs], [v.shape for v in inputs.values()],
                         [v.dtype for v in inputs.values()], path, **export_kwargs)
    onnx.checker.check_model(onnx.load(path))
    expected = mx_forward(sym, args, auxs, inputs)
    got = ort_run(path, inputs)
    assert len(got) == len(expected)
    for e, o in zip(expected, got):
        assert e.shape == o.shape, (e.shape, o.shape)
        np.testing.assert_allclose(o, e, rtol=rtol, atol=atol)
    return path, expected, args, auxs


def import_and_compare(path, inputs, expected, rtol=1e-5, atol=1e-6):
    """Import the ONNX file back; mxmod must give ``expected`` from it."""
    sym, args, auxs = mx.onnx.import_model(path)
    # an input only used for its (static) shape is folded away
    used = {k: v for k, v in inputs.items() if k in sym.list_arguments()}
    got = mx_forward(sym, args, auxs, used)
    assert len(got) == len(expected)
    for e, o in zip(expected, got):
        np.testing.assert_allclose(o.reshape(e.shape), e, rtol=rtol, atol=atol)
    return sym, args, auxs
