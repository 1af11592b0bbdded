"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping and augmentation on NDArrays,
ImageIter over RecordIO files or image lists, and the detection augmenters and ImageDetIter
(``mx.image.det`` / ``mx.image.detection``)."""
from . import image  # noqa: F401
from .image import (imread, imdecode, imresize, scale_down, copyMakeBorder,  # noqa: F401
                    resize_short, fixed_crop, random_crop, center_crop, color_normalize,
                    random_size_crop, imrotate, random_rotate, _get_interp_method)
from .augmenters import (Augmenter, SequentialAug, ResizeAug, ForceResizeAug,  # noqa: F401
                         RandomCropAug, RandomSizedCropAug, CenterCropAug, RandomOrderAug,
                         BrightnessJitterAug, ContrastJitterAug, SaturationJitterAug,
                         HueJitterAug, ColorJitterAug, LightingAug, ColorNormalizeAug,
                         RandomGrayAug, HorizontalFlipAug, CastAug, CreateAugmenter)
from .image_iter import ImageIter  # noqa: F401
from . import detection  # noqa: F401
from . import detection as det  # noqa: F401
from .detection import (DetAugmenter, DetBorrowAug, DetRandomSelectAug,  # noqa: F401
                        DetHorizontalFlipAug, DetRandomCropAug, DetRandomPadAug,
                        CreateMultiRandCropAugmenter, CreateDetAugmenter, ImageDetIter)

for _name in ('Augmenter', 'SequentialAug', 'ResizeAug', 'ForceResizeAug', 'RandomCropAug',
              'RandomSizedCropAug', 'CenterCropAug', 'RandomOrderAug', 'BrightnessJitterAug',
              'ContrastJitterAug', 'SaturationJitterAug', 'HueJitterAug', 'ColorJitterAug',
              'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug', 'HorizontalFlipAug', 'CastAug',
              'CreateAugmenter', 'ImageIter'):
    setattr(image, _name, globals()[_name])
