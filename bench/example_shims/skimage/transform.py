"""resize: as scikit-image, uint8 input becomes float in [0, 1]; bilinear per channel."""
import numpy as np
from PIL import Image


def resize(image, output_shape, **kwargs):
    """``image`` (H, W[, C]) resized to ``output_shape`` (H', W'), float64."""
    image = np.asarray(image)
    scale = 255.0 if image.dtype == np.uint8 else 1.0
    height, width = int(output_shape[0]), int(output_shape[1])
    planes = image[..., None] if image.ndim == 2 else image
    out = np.stack([np.asarray(Image.fromarray(planes[..., c].astype(np.float32) / scale)
                               .resize((width, height), Image.BILINEAR))
                    for c in range(planes.shape[-1])], axis=-1).astype(np.float64)
    return out[..., 0] if image.ndim == 2 else out
