"""Pooling and padding layers of ``mx.gluon.nn``: Max/Avg pooling in 1, 2 and 3 dimensions,
their global forms, and ReflectionPad2D."""
from ...base import numeric_types
from ..hybrid_block import HybridBlock

__all__ = ['MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D', 'GlobalAvgPool1D',
           'GlobalAvgPool2D', 'GlobalAvgPool3D', 'ReflectionPad2D']

_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


class _Pooling(HybridBlock):
    """The Pooling operator with Gluon's arguments (``ceil_mode`` is the 'full' convention)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        if isinstance(strides, numeric_types):
            strides = (strides,) * len(pool_size)
        if isinstance(padding, numeric_types):
            padding = (padding,) * len(pool_size)
        self._kwargs = {'kernel': pool_size, 'stride': strides, 'pad': padding,
                        'global_pool': global_pool, 'pool_type': pool_type, 'layout': layout,
                        'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return ('%s(size=%s, stride=%s, padding=%s, ceil_mode=%s, global_pool=%s, '
                'pool_type=%s, layout=%s)' % (type(self).__name__, kw['kernel'], kw['stride'],
                                              kw['pad'], kw['pooling_convention'] == 'full',
                                              kw['global_pool'], kw['pool_type'], kw['layout']))


def _pool_size(pool_size, count, layout):
    if layout not in _LAYOUTS[count]:
        raise AssertionError('Only %s and %s layouts are valid for %dD Pooling'
                             % (_LAYOUTS[count] + (count,)))
    if isinstance(pool_size, numeric_types):
        pool_size = (pool_size,) * count
    if len(pool_size) != count:
        raise AssertionError('pool_size must be a number or a list of %d ints' % count)
    return tuple(pool_size)


class MaxPool1D(_Pooling):
    """Max pooling over (batch, channels, width); ``strides`` default to ``pool_size``."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 **kwargs):
        super().__init__(_pool_size(pool_size, 1, layout), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class MaxPool2D(_Pooling):
    """2-D max pooling."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        super().__init__(_pool_size(pool_size, 2, layout), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class MaxPool3D(_Pooling):
    """3-D max pooling."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', **kwargs):
        super().__init__(_pool_size(pool_size, 3, layout), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class AvgPool1D(_Pooling):
    """1-D average pooling (``count_include_pad``: padded zeros count in the mean)."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, 1, layout), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """2-D average pooling."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, 2, layout), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """3-D average pooling."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, 3, layout), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


def _global(count, pool_type, layout, kwargs):
    if layout not in _LAYOUTS[count]:
        raise AssertionError('Only %s and %s layouts are valid for %dD Pooling'
                             % (_LAYOUTS[count] + (count,)))
    return dict(pool_size=(1,) * count, strides=None, padding=0, ceil_mode=True,
                global_pool=True, pool_type=pool_type, layout=layout, **kwargs)


class GlobalMaxPool1D(_Pooling):
    """Max over the whole width: (N, C, W) -> (N, C, 1)."""

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(**_global(1, 'max', layout, kwargs))


class GlobalMaxPool2D(_Pooling):
    """Max over the whole plane: (N, C, H, W) -> (N, C, 1, 1)."""

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(**_global(2, 'max', layout, kwargs))


class GlobalMaxPool3D(_Pooling):
    """Max over the whole volume."""

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(**_global(3, 'max', layout, kwargs))


class GlobalAvgPool1D(_Pooling):
    """Mean over the whole width."""

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(**_global(1, 'avg', layout, kwargs))


class GlobalAvgPool2D(_Pooling):
    """Mean over the whole plane."""

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(**_global(2, 'avg', layout, kwargs))


class GlobalAvgPool3D(_Pooling):
    """Mean over the whole volume."""

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(**_global(3, 'avg', layout, kwargs))


class ReflectionPad2D(HybridBlock):
    """Pad the last two axes of (N, C, H, W) by reflection.

    Parameters
    ----------
    padding : int or tuple of 8 int
        An int pads H and W by that much on both sides; a tuple is the Pad operator's
        ``pad_width``.
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise AssertionError('ReflectionPad2D: padding must be an int or 8 ints, got %s'
                                 % (padding,))
        self._padding = padding

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.pad(x, mode='reflect', pad_width=self._padding)
