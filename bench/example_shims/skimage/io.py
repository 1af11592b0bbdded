"""imread / imsave through PIL."""
import numpy as np
from PIL import Image


def imread(path):
    """The image as a uint8 array (H, W[, C])."""
    return np.asarray(Image.open(path).convert('RGB'))


def imsave(path, image):
    """Write a uint8 (or [0, 1] float) image."""
    image = np.asarray(image)
    if image.dtype != np.uint8:
        image = np.clip(image * (255 if image.max() <= 1.0 else 1), 0, 255).astype(np.uint8)
    Image.fromarray(image).save(path)
