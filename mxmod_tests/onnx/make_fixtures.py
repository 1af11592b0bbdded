"""Write the zoo symbol fixtures with MXNet 1.9.1 (the oracle) running MXNet's own
example/image-classification/symbols scripts:

    /tmp/mxnet-ref/bin/python mxmod_tests/onnx/make_fixtures.py [MXNET_SOURCE]

Skips (exit 0 with a message) when mxnet or the MXNet source tree is not there."""
import gzip
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zoo import ZOO  # noqa: E402  pylint: disable=wrong-import-position


def load_script(src, script):
    path = os.path.join(src, 'example', 'image-classification', 'symbols', script + '.py')
    spec = importlib.util.spec_from_file_location('zoo_' + script.replace('-', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else '/work/mxnet-src'
    try:
        import mxnet  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        print('mxnet is not importable: run this with the oracle python')
        return
    if not os.path.isdir(src):
        print('MXNet source tree %s not found' % src)
        return
    out_dir = os.path.join(HERE, 'fixtures', 'zoo')
    os.makedirs(out_dir, exist_ok=True)
    for name, (script, kwargs, shape, _) in sorted(ZOO.items()):
        sym = load_script(src, script).get_symbol(**kwargs)
        sym.infer_shape(data=shape)   # the input size suits the network
        with gzip.open(os.path.join(out_dir, name + '-symbol.json.gz'), 'wt') as f:
            f.write(sym.tojson())
        print('wrote', name)


if __name__ == '__main__':
    main()
