"""Image codec access: OpenCV (``opencv-python-headless``, installed with mxmod, as MXNet's wheel
bundles it) decodes, encodes and resizes images for mx.image, mx.recordio and ImageRecordIter.
Its functions release the GIL, so decoding threads run in parallel."""
import numpy as np

from ..base import MXNetError

_CV2 = []


def require_cv2():
    """Return the ``cv2`` module, or raise ImportError saying how to install it."""
    if not _CV2:
        try:
            import cv2  # pylint: disable=import-outside-toplevel
        except ImportError:
            raise ImportError("mxmod's image functions need OpenCV, which installs with mxmod; "
                              "it is missing or broken here: pip install "
                              "opencv-python-headless") from None
        _CV2.append(cv2)
    return _CV2[0]
