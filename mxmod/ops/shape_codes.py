"""MXNet's Reshape shape codes (0 copy, -1 infer, -2 copy rest, -3 merge two, -4 split one)."""
from ..base import MXNetError


def _forward_codes(src, codes):
    out, i, infer_at = [], 0, None
    k = 0
    codes = list(codes)
    while k < len(codes):
        c = codes[k]
        if c == 0:
            out.append(src[i])
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
            out.append(src[i] * src[i + 1])
            i += 2
        elif c == -4:
            a, b = codes[k + 1], codes[k + 2]
            d = src[i]
            if a == -1:
                a = d // b
            if b == -1:
                b = d // a
            if a * b != d:
                raise MXNetError('Reshape: -4 split %d into %d x %d does not match' % (d, a, b))
            out.extend([a, b])
            i += 1
            k += 2
        elif c > 0:
            out.append(c)
            i += 1
        else:
            raise MXNetError('Reshape: invalid shape code %d' % c)
        k += 1
    return out, infer_at


def reshape_shape(src, codes, reverse=False):
    """Apply MXNet's reshape codes to ``src`` and return the new shape (a tuple).

    Parameters
    ----------
    src : tuple of int
    codes : tuple of int
    reverse : bool
        Apply the special codes right to left, as Reshape(reverse=True) does.
    """
    src = tuple(src)
    codes = tuple(int(c) for c in codes)
    if reverse:
        out, infer_at = _forward_codes(src[::-1], _reverse_codes(codes))
        out = out[::-1]
        infer_at = None if infer_at is None else len(out) - 1 - infer_at
    else:
        out, infer_at = _forward_codes(src, codes)
    total = 1
    for d in src:
        total *= d
    if infer_at is not None:
        known = 1
        for j, d in enumerate(out):
            if j != infer_at:
                known *= d
        if known == 0 or total % known:
            raise MXNetError('Reshape: cannot reshape %s into %s' % (src, codes))
        out[infer_at] = total // known
    size = 1
    for d in out:
        size *= d
    if size != total:
        raise MXNetError('Reshape: cannot reshape array of shape %s into shape %s (target %s)'
                         % (src, codes, tuple(out)))
    return tuple(out)


def _reverse_codes(codes):
    """Reverse a code list, keeping each -4 group's operands after the -4."""
    groups, k = [], 0
    while k < len(codes):
        if codes[k] == -4:
            groups.append((-4, codes[k + 2], codes[k + 1]))
            k += 3
        else:
            groups.append((codes[k],))
            k += 1
    out = []
    for g in reversed(groups):
        out.extend(g)
    return tuple(out)
