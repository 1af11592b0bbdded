"""``mx.gluon.utils``: splitting a batch across devices, clipping gradients by their global
norm, file checks and downloads, and the small helpers the rest of Gluon shares."""
import hashlib
import os
import uuid
import warnings
import weakref

import numpy as np

from .. import ndarray
from ..ndarray import NDArray
from ..util import is_np_shape

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download',
           'replace_file']


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Cut ``data`` into ``num_slice`` pieces along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
    num_slice : int
    batch_axis : int, default 0
    even_split : bool, default True
        Refuse a batch whose size is not a multiple of ``num_slice``; otherwise the first
        ``size % num_slice`` pieces get one more element.

    Returns
    -------
    list of NDArray
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError('data with shape %s cannot be evenly split into %d slices along axis %d. '
                         'Use a batch size that is a multiple of %d or set even_split=False to '
                         'allow uneven partitioning of data.'
                         % (data.shape, num_slice, batch_axis, num_slice))
    base, extra = divmod(size, num_slice)
    bounds = [0]
    for i in range(num_slice):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and put piece ``i`` on ``ctx_list[i]``.

    Parameters
    ----------
    data : NDArray or array-like
    ctx_list : list of Context
    batch_axis : int, default 0
    even_split : bool, default True

    Returns
    -------
    list of NDArray
    """
    if not isinstance(data, NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    pieces = split_data(data, len(ctx_list), batch_axis, even_split)
    return [piece.as_in_context(ctx) for piece, ctx in zip(pieces, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``.

    Parameters
    ----------
    arrays : list of NDArray
    max_norm : float
    check_isfinite : bool, default True
        Warn when the norm is not finite, and return it as a Python float (otherwise as an
        NDArray, without waiting for it).

    Returns
    -------
    float or NDArray
        The norm before clipping.
    """
    if not arrays:
        raise AssertionError('clip_global_norm: arrays must not be empty')
    ctx = arrays[0].context
    squares = []
    for arr in arrays:
        if arr.stype == 'default':
            flat = arr.reshape((-1,))
            squares.append(ndarray.dot(flat, flat).as_in_context(ctx))
        else:
            squares.append(ndarray.square(ndarray.norm(arr)).as_in_context(ctx))
    total = ndarray.sqrt(ndarray.add_n(*squares))
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'),
                      stacklevel=2)
    scale = max_norm / (total + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    return total.asscalar() if check_isfinite else total


def check_sha1(filename, sha1_hash):
    """True when the SHA-1 digest of the file ``filename`` is ``sha1_hash`` (hex)."""
    digest = hashlib.sha1()
    with open(filename, 'rb') as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` over ``dst`` atomically (``src`` is removed if that fails)."""
    try:
        os.replace(src, dst)
    except OSError as err:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError('Moving downloaded temp file - %s, to %s failed. Please retry the '
                      'download.' % (src, dst)) from err


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` (with ``requests``) to ``path``: a file name, or a folder to put the
    URL's last component in (default: the current folder). Nothing is fetched when the file is
    there (with the right SHA-1, if given) unless ``overwrite``. The data goes to a temporary
    file first, so that processes downloading the same file at once leave one complete copy.

    Returns
    -------
    str
        The file name.
    """
    import requests  # pylint: disable=import-outside-toplevel
    if path is None:
        fname = url.split('/')[-1]
        if not fname:
            raise AssertionError("Can't construct file-name from this URL. Please set the "
                                 "`path` option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split('/')[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise AssertionError("Number of retries should be at least 0, currently it's %d"
                             % retries)
    if not verify_ssl:
        warnings.warn('Unverified HTTPS request is being made (verify_ssl=False). Adding '
                      'certificate verification is strongly advised.')
    if not overwrite and os.path.exists(fname) and not (sha1_hash and
                                                        not check_sha1(fname, sha1_hash)):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    while retries + 1 > 0:
        try:
            print('Downloading %s from %s...' % (fname, url))
            response = requests.get(url, stream=True, verify=verify_ssl)
            if response.status_code != 200:
                raise RuntimeError('Failed downloading url %s' % url)
            partial = '%s.%s' % (fname, uuid.uuid4())
            with open(partial, 'wb') as handle:
                for chunk in response.iter_content(chunk_size=1024):
                    if chunk:
                        handle.write(chunk)
            if not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash)):
                replace_file(partial, fname)
            else:
                try:
                    os.remove(partial)
                except OSError:
                    pass
                warnings.warn('File %s exists in file system so the downloaded file is deleted'
                              % fname)
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise UserWarning('File %s is downloaded but the content hash does not match. '
                                  'The repo may be outdated or download may be incomplete.'
                                  % fname)
            return fname
        except Exception as err:  # pylint: disable=broad-except
            retries -= 1
            if retries <= 0:
                raise err
            print('download failed due to %r, retrying, %d attempt%s left'
                  % (err, retries, 's' if retries > 1 else ''))
    return fname


def _indent(text, spaces):
    """``text`` with every line after the first indented by ``spaces`` blanks."""
    lines = text.split('\n')
    if len(lines) == 1:
        return text
    return '\n'.join(lines[:1] + [' ' * spaces + line for line in lines[1:]])


def _brief_print_list(items, limit=7):
    """The items quoted and comma-separated, the middle elided past ``limit``."""
    items = list(items)
    if len(items) > limit:
        half = limit // 2
        return '%s, ..., %s' % (_brief_print_list(items[:half], limit),
                                _brief_print_list(items[-half:], limit))
    return ', '.join("'%s'" % str(i) for i in items)


def shape_is_known(shape):
    """True when ``shape`` is given and has no unknown (0, or -1 under numpy shapes) dims."""
    if shape is None:
        return False
    unknown = -1 if is_np_shape() else 0
    if len(shape) == 0:
        return unknown == -1
    for dim in shape:
        if dim == unknown:
            return False
        if dim < unknown:
            raise AssertionError('Invalid shape %s: dimensions must be >= %d'
                                 % (shape, unknown))
    return True


class HookHandle(object):
    """Removes a forward (pre-)hook again: ``handle.detach()`` or leaving its ``with``."""
    _next_id = [0]

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        """Put ``hook`` into ``hooks_dict`` (an OrderedDict) under a fresh id."""
        if self._hooks_dict_ref is not None:
            raise AssertionError('The same handle cannot be attached twice.')
        self._id = HookHandle._next_id[0]
        HookHandle._next_id[0] += 1
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        """Remove the hook (nothing happens when it is gone already)."""
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()

