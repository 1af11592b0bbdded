"""Image records of ``mx.recordio``: the ``IRHeader`` (``'IfQQ'``: flag, label, id, id2; a flag
above 0 means ``flag`` float32 labels follow it) that ``pack``/``unpack`` put before a payload, and
``pack_img``/``unpack_img``, which encode and decode the image with OpenCV."""
import numbers
import struct
from collections import namedtuple

import numpy as np

from .base import MXNetError

__all__ = ['IRHeader', 'pack', 'unpack', 'pack_img', 'unpack_img']


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
IRHeader.__doc__ = """Header of an image record: ``flag`` (0, or the number of float32 labels
that follow the header), ``label`` (a number, or an array when flag > 0), ``id`` and ``id2``
(uint64 record ids)."""

_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Prepend an ``IRHeader`` (and a label array, if any) to the payload ``s``.

    Parameters
    ----------
    header : IRHeader or tuple
        ``label`` may be a number or a 1-D array (stored after the header, ``flag`` = its size).
    s : bytes
        The payload (e.g. an encoded image).

    Returns
    -------
    bytes
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """Split a record payload into its ``IRHeader`` and the rest.

    Parameters
    ----------
    s : bytes
        A payload from ``MXRecordIO.read``.

    Returns
    -------
    header : IRHeader
        ``label`` is a float32 array when the header's flag is above 0.
    s : bytes
        The payload after the header and labels.
    """
    if len(s) < _IR_SIZE:
        raise MXNetError('recordio.unpack: a record of %d bytes is shorter than the %d-byte '
                         'image record header' % (len(s), _IR_SIZE))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _cv2():
    # pylint: disable-next=import-outside-toplevel
    from .image.codec import require_cv2
    return require_cv2()


def unpack_img(s, iscolor=-1):
    """Split a record payload into its header and the decoded image (numpy, BGR as OpenCV).

    Parameters
    ----------
    s : bytes
        A payload from ``MXRecordIO.read``.
    iscolor : int
        OpenCV imread flag: -1 as stored, 0 grayscale, 1 colour.

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray
    """
    header, s = unpack(s)
    img = _cv2().imdecode(np.frombuffer(s, dtype=np.uint8), iscolor)
    if img is None:
        raise MXNetError('recordio.unpack_img: record id %d does not hold a decodable image'
                         % header.id)
    return header, img


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """Encode ``img`` (numpy, BGR) and pack it with ``header``.

    Parameters
    ----------
    header : IRHeader
    img : numpy.ndarray
        The image, as OpenCV holds it (BGR or grayscale).
    quality : int
        JPEG quality 1-100, or PNG compression level 0-9.
    img_fmt : str
        ``'.jpg'`` or ``'.png'`` (or any extension OpenCV encodes).

    Returns
    -------
    bytes
    """
    cv2 = _cv2()
    params = None
    if img_fmt.upper() in ('.JPG', '.JPEG'):
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif img_fmt.upper() == '.PNG':
        params = [cv2.IMWRITE_PNG_COMPRESSION, quality]
    ok, buf = cv2.imencode(img_fmt, img, params)
    if not ok:
        raise MXNetError('recordio.pack_img: OpenCV could not encode the image as %s' % img_fmt)
    return pack(header, buf.tobytes())
