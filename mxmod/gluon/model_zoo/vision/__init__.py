"""``mx.gluon.model_zoo.vision``: the part mxmod implements is the ResNet family (V1 and V2,
18 to 152 layers) and ``get_model`` for it. The other architectures (AlexNet, VGG, DenseNet,
SqueezeNet, Inception, MobileNet) raise an MXNetError that says so."""
from .resnet import *  # noqa: F401,F403
from .resnet import __all__ as _RESNETS
from . import resnet as _resnet
from ....out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = list(_RESNETS) + ['get_model']

COVERED = 'the ResNet family (%s) and get_model for it' % ', '.join(
    n for n in _RESNETS if n.startswith('resnet'))


def get_model(name, **kwargs):
    """The model ``name`` (e.g. 'resnet18_v1'); keywords as for its constructor."""
    name = name.lower()
    builder = getattr(_resnet, name, None) if name.startswith('resnet') else None
    if builder is None or name not in _RESNETS:
        raise _out_of_scope_error('mxmod.gluon.model_zoo.vision', name, COVERED)
    return builder(**kwargs)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon.model_zoo.vision', name, COVERED)
