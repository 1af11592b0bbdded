"""Run MXNet 1.9.1's own exporter (mx.onnx.export_model) on the networks of mxmod's ONNX tests
and record, per network, whether it exports, passes onnx.checker and gives MXNet's outputs in
onnxruntime:

    /tmp/mxnet-ref/bin/python mxmod_tests/onnx/oracle_exporter.py

(the oracle venv needs onnx and onnxruntime versions that MXNet 1.9.1's exporter works with, e.g.
onnx 1.14 and onnxruntime 1.16). Writes fixtures/oracle_exporter.json, which test_oracle.py
reads: mxmod must handle every network MXNet's exporter handles (it handles all of them)."""
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _setup():
    import mxnet  # pylint: disable=import-outside-toplevel
    sys.modules['mxmod'] = mxnet   # the case builders are written against mxmod's (= MXNet's) API
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    return mxnet


def cases(mx):
    """The networks, from oracle_cases (imported once mxmod stands for mxnet)."""
    from mxmod_tests.onnx.oracle_cases import oracle_cases  # pylint: disable=import-outside-toplevel
    return oracle_cases(mx)


def _params(mx, sym, inputs, seed=0):
    rng = np.random.RandomState(seed)
    shapes = {k: v.shape for k, v in inputs.items()}
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in inputs or name.endswith('label'):
            continue
        scale = 0.4 if len(shape) < 2 else np.sqrt(2.0 / max(1, int(np.prod(shape[1:]))))
        args[name] = mx.nd.array(rng.normal(0, scale, shape))
    auxs = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in
            zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, auxs


def _forward(mx, sym, args, auxs, inputs):
    exe = sym.simple_bind(mx.cpu(), grad_req='null', **{k: v.shape for k, v in inputs.items()})
    for name, value in list(args.items()) + list(inputs.items()):
        exe.arg_dict[name][:] = value
    for name, value in auxs.items():
        exe.aux_dict[name][:] = value
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def check(mx, sym, inputs, workdir):
    """'ok', or why MXNet's exporter fails on this network."""
    import onnx  # pylint: disable=import-outside-toplevel
    import onnxruntime as ort  # pylint: disable=import-outside-toplevel
    args, auxs = _params(mx, sym, inputs)
    path = os.path.join(workdir, 'm.onnx')
    try:
        mx.onnx.export_model(sym, dict(args, **auxs), [v.shape for v in inputs.values()],
                             [v.dtype for v in inputs.values()], path)
        onnx.checker.check_model(onnx.load(path))
    except Exception as err:  # pylint: disable=broad-except
        return 'export failed: %s: %s' % (type(err).__name__, str(err).splitlines()[0][:200])
    try:
        session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
        got = session.run(None, {k: v for k, v in inputs.items()})
    except Exception as err:  # pylint: disable=broad-except
        return 'onnxruntime failed: %s' % str(err).splitlines()[0][:200]
    expected = _forward(mx, sym, args, auxs, inputs)
    if len(got) != len(expected):
        return 'wrong number of outputs: %d for %d' % (len(got), len(expected))
    for e, o in zip(expected, got):
        if e.shape != o.shape:
            return 'wrong output shape %s for %s' % (o.shape, e.shape)
        scale = max(1.0, float(np.abs(e).max()))
        if not np.allclose(o, e, rtol=1e-3, atol=2e-5 * scale):
            return 'outputs differ (max abs diff %.3g)' % float(np.abs(o - e).max())
    return 'ok'


def main():
    try:
        mx = _setup()
        import onnx  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
        import onnxruntime  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as err:
        print('skipped: %s' % err)
        return
    record = {'mxnet': mx.__version__, 'onnx': sys.modules['onnx'].__version__,
              'onnxruntime': sys.modules['onnxruntime'].__version__, 'results': {}}
    with tempfile.TemporaryDirectory() as workdir:
        for name, build in sorted(cases(mx).items()):
            try:
                sym, inputs = build()
                sym.infer_shape(**{k: v.shape for k, v in inputs.items()})
            except Exception as err:  # pylint: disable=broad-except
                record['results'][name] = 'MXNet itself rejects the network: %s' % (
                    str(err).splitlines()[0][:200])
                continue
            record['results'][name] = check(mx, sym, inputs, workdir)
            print(name, record['results'][name])
    with open(os.path.join(HERE, 'fixtures', 'oracle_exporter.json'), 'w') as f:
        json.dump(record, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
