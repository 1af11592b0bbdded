"""MXNet's Reshape shape codes (0 copy, -1 infer, -2 copy rest, -3 merge two, -4 split one).

Shapes may be partial: a dimension of 0 is unknown, as in MXNet's legacy shape inference."""
from ..base import MXNetError


def _split_dims(d, a, b, codes):
    """The two dims a -4 code splits ``d`` into (-1 is inferred; 0 stays unknown)."""
    if a == -1 and b == -1:
        raise MXNetError('Reshape: the two dims after -4 cannot both be -1 in shape %s'
                         % (tuple(codes),))
    if d:
        if a == -1:
            a = d // b
        if b == -1:
            b = d // a
        if a * b != d:
            raise MXNetError('Reshape: -4 split dims %d, %d do not divide the source dim %d '
                             '(shape %s)' % (a, b, d, tuple(codes)))
    return [max(a, 0), max(b, 0)]


def _forward_codes(src, codes):
    """Apply codes left to right; returns (dims with -1 at the inferred slot, its index)."""
    out, i, infer_at, k = [], 0, None, 0

    def take(count):
        if i + count > len(src):
            raise MXNetError('Reshape: shape %s consumes more dimensions than the input %s has'
                             % (tuple(codes), tuple(src)))
        return src[i:i + count]
    while k < len(codes):
        c = codes[k]
        if c == 0:
            out.append(take(1)[0])
            i += 1
        elif c == -1:
            if infer_at is not None:
                raise MXNetError('Reshape: more than one -1 in shape %s' % (tuple(codes),))
            infer_at = len(out)
            out.append(-1)
            i += 1
        elif c == -2:
            out.extend(src[i:])
            i = len(src)
        elif c == -3:
            a, b = take(2)
            out.append(a * b)
            i += 2
        elif c == -4:
            if k + 2 >= len(codes):
                raise MXNetError('Reshape: -4 must be followed by two dims in shape %s'
                                 % (tuple(codes),))
            out.extend(_split_dims(take(1)[0], codes[k + 1], codes[k + 2], codes))
            i += 1
            k += 2
        elif c > 0:
            out.append(c)
            i += 1
        else:
            raise MXNetError('Reshape: invalid shape code %d in %s' % (c, tuple(codes)))
        k += 1
    return out, infer_at


def _prod(dims):
    total = 1
    for d in dims:
        total *= d
    return total


def reshape_partial(src, codes, reverse=False, check_size=True):
    """Output shape of Reshape for a possibly partial input shape (0 = unknown dim).

    Dimensions that cannot be determined are 0. A fully known input whose size does not match
    the target raises MXNetError (with ``check_size=False``, a -1 takes the floor of the
    quotient and the sizes are not compared, as NDArray.reshape leaves that check to Python).
    """
    src = tuple(src)
    codes = tuple(int(c) for c in codes)
    if reverse:
        out, infer_at = _forward_codes(src[::-1], _reverse_codes(codes))
        out = out[::-1]
        infer_at = None if infer_at is None else len(out) - 1 - infer_at
    else:
        out, infer_at = _forward_codes(src, codes)
    known = all(src)
    if infer_at is not None:
        rest = _prod(d for j, d in enumerate(out) if j != infer_at)
        if not known or rest == 0:
            out[infer_at] = 0
        elif _prod(src) % rest and check_size:
            raise MXNetError('Reshape: cannot reshape array of shape %s into shape %s'
                             % (src, codes))
        else:
            out[infer_at] = _prod(src) // rest
    if check_size and known and all(out) and _prod(out) != _prod(src):
        raise MXNetError('Reshape: cannot reshape array of shape %s into shape %s (target %s)'
                         % (src, codes, tuple(out)))
    return tuple(out)


def fill_from_size(shape, size):
    """Infer the single unknown (0) dim of ``shape`` so that it holds ``size`` elements.

    Returns ``shape`` unchanged when it has no unknown dim or more than one."""
    shape = tuple(shape)
    holes = [j for j, d in enumerate(shape) if d == 0]
    if len(holes) != 1:
        return shape
    rest = _prod(d for d in shape if d)
    if rest == 0 or size % rest:
        raise MXNetError('Reshape: input shape %s cannot hold %d elements' % (shape, size))
    out = list(shape)
    out[holes[0]] = size // rest
    return tuple(out)


def reshape_shape(src, codes, reverse=False):
    """Apply MXNet's reshape codes to ``src`` and return the new shape (a tuple).

    Parameters
    ----------
    src : tuple of int
    codes : tuple of int
    reverse : bool
        Apply the special codes right to left, as Reshape(reverse=True) does.
    """
    return reshape_partial(src, codes, reverse)


def _reverse_codes(codes):
    """The code list read from the right, as MXNet's reverse=True does: a -4 written after its
    two dims (``(16, 4, -4)``) splits the input's last dimension into them."""
    return tuple(reversed(codes))
