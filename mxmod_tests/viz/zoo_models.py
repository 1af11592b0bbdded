"""The model-zoo networks of MXNet's example/image-classification/symbols compared by
test_viz.py: fixture name -> (symbol file, get_symbol keyword arguments, data shape)."""
import os

MXNET_SOURCE = os.environ.get('MXNET_SOURCE', '/work/mxnet-src')
SYMBOLS_DIR = os.path.join(MXNET_SOURCE, 'example', 'image-classification', 'symbols')

IMAGENET = '3,224,224'
MODELS = {
    'alexnet': ('alexnet', {'num_classes': 1000}, (1, 3, 224, 224)),
    'googlenet': ('googlenet', {'num_classes': 1000}, (1, 3, 224, 224)),
    'inception-bn': ('inception-bn', {'num_classes': 1000, 'image_shape': IMAGENET},
                     (1, 3, 224, 224)),
    'inception-resnet-v2': ('inception-resnet-v2', {'num_classes': 1000}, (1, 3, 299, 299)),
    'inception-v3': ('inception-v3', {'num_classes': 1000}, (1, 3, 299, 299)),
    'inception-v4': ('inception-v4', {'num_classes': 1000}, (1, 3, 299, 299)),
    'lenet': ('lenet', {'num_classes': 10}, (1, 1, 28, 28)),
    'mlp': ('mlp', {'num_classes': 10}, (1, 1, 28, 28)),
    'mobilenet': ('mobilenet', {'num_classes': 1000}, (1, 3, 224, 224)),
    'mobilenetv2': ('mobilenetv2', {'num_classes': 1000}, (1, 3, 224, 224)),
    'resnet-18': ('resnet', {'num_classes': 1000, 'num_layers': 18, 'image_shape': IMAGENET},
                  (1, 3, 224, 224)),
    'resnet-50': ('resnet', {'num_classes': 1000, 'num_layers': 50, 'image_shape': IMAGENET},
                  (1, 3, 224, 224)),
    'resnet-v1-50': ('resnet-v1', {'num_classes': 1000, 'num_layers': 50,
                                   'image_shape': IMAGENET}, (1, 3, 224, 224)),
    'resnet-110-cifar': ('resnet', {'num_classes': 10, 'num_layers': 110,
                                    'image_shape': '3,28,28'}, (1, 3, 28, 28)),
    'resnext-50': ('resnext', {'num_classes': 1000, 'num_layers': 50, 'image_shape': IMAGENET},
                   (1, 3, 224, 224)),
    'vgg-16': ('vgg', {'num_classes': 1000, 'num_layers': 16}, (1, 3, 224, 224)),
    'vgg-11-bn': ('vgg', {'num_classes': 1000, 'num_layers': 11, 'batch_norm': True},
                  (1, 3, 224, 224)),
}


def load_symbol_module(mx_module, file_stem):
    """Import ``<file_stem>.py`` of the symbols folder with ``mxnet`` meaning ``mx_module``."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel
    saved = sys.modules.get('mxnet')
    sys.modules['mxnet'] = mx_module
    try:
        spec = importlib.util.spec_from_file_location(
            'zoo_' + file_stem.replace('-', '_'), os.path.join(SYMBOLS_DIR, file_stem + '.py'))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop('mxnet', None)
        else:
            sys.modules['mxnet'] = saved
    return module


def build(mx_module, name):
    """The network ``name`` built by ``mx_module``'s symbol API, with fresh automatic names
    (``convolution0``, ...)."""
    stem, kwargs, _ = MODELS[name]
    module = load_symbol_module(mx_module, stem)
    with mx_module.name.NameManager():
        return module.get_symbol(**kwargs)


def summaries(mx_module, symbol, data_shape):
    """{label: text printed by print_summary} for the layouts the test compares."""
    import contextlib  # pylint: disable=import-outside-toplevel
    import io  # pylint: disable=import-outside-toplevel
    out = {}
    for label, args in (('plain', {}), ('shape', {'shape': {'data': data_shape}}),
                        ('narrow', {'shape': {'data': data_shape}, 'line_length': 90,
                                    'positions': [.5, .7, .8, 1.]})):
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            mx_module.viz.print_summary(symbol, **args)
        out[label] = text.getvalue()
    return out
