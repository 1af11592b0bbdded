"""``mx.gluon.model_zoo``: the part mxmod implements is ``vision``'s ResNet family; pretrained
weights are read from a model-store file already in ``root`` (nothing is downloaded)."""
from . import vision  # noqa: F401

__all__ = ['vision']
