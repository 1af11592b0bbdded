"""Convolution layers of ``mx.gluon.nn``: Conv1D/2D/3D and their transposes (the pooling and
padding layers, which MXNet defines here too, live in pooling_layers.py and are re-exported)."""
from ... import symbol
from ...base import numeric_types
from ..hybrid_block import HybridBlock
from .activations import Activation
from .pooling_layers import (MaxPool1D, MaxPool2D, MaxPool3D, AvgPool1D, AvgPool2D,  # noqa: F401
                             AvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D,
                             GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D, ReflectionPad2D)

__all__ = ['Conv1D', 'Conv2D', 'Conv3D', 'Conv1DTranspose', 'Conv2DTranspose',
           'Conv3DTranspose', 'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D',
           'AvgPool3D', 'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D', 'ReflectionPad2D']


def _weight_shapes(op_name, data_shape, kwargs):
    """Shapes of (data, weight, bias) of the operator, as far as ``data_shape`` (0 unknown)
    determines them."""
    data = symbol.var('data', shape=data_shape)
    return getattr(symbol, op_name)(data, **kwargs).infer_shape_partial()[0]


def _tuple(value, count):
    return (value,) * count if isinstance(value, numeric_types) else tuple(value)


class _Conv(HybridBlock):
    """N-D (de)convolution with weight of shape given by the operator's shape inference."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', op_name='Convolution', adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            count = len(kernel_size)
            strides, padding, dilation = (_tuple(v, count) for v in (strides, padding, dilation))
            self._op_name = op_name
            self._kwargs = {'kernel': kernel_size, 'stride': strides, 'dilate': dilation,
                            'pad': padding, 'num_filter': channels, 'num_group': groups,
                            'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            dshape = [0] * (count + 2)
            dshape[layout.find('N')] = 1
            dshape[layout.find('C')] = in_channels
            shapes = _weight_shapes(op_name, dshape, self._kwargs)
            self.weight = self.params.get('weight', shape=shapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=shapes[2], init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):  # pylint: disable=arguments-differ,invalid-name
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _alias(self):
        return 'conv'

    def __repr__(self):
        kw = self._kwargs
        count = len(kw['kernel'])
        text = '%s(%s -> %s, kernel_size=%s, stride=%s' % (
            type(self).__name__, self.weight.shape[1] if self.weight.shape[1] else None,
            self.weight.shape[0], kw['kernel'], kw['stride'])
        if kw['pad'] != (0,) * count:
            text += ', padding=%s' % (kw['pad'],)
        if kw['dilate'] != (1,) * count:
            text += ', dilation=%s' % (kw['dilate'],)
        if getattr(self, 'out_pad', (0,) * count) != (0,) * count:
            text += ', output_padding=%s' % (self.out_pad,)
        if kw['num_group'] != 1:
            text += ', groups=%s' % kw['num_group']
        if self.bias is None:
            text += ', bias=False'
        if self.act:
            text += ', %s' % self.act
        return text + ')'


def _check(layout, allowed, kernel_size, count, output_padding=None):
    if layout not in allowed:
        raise AssertionError("Only supports %s layout for now"
                             % ' and '.join("'%s'" % a for a in allowed))
    kernel_size = _tuple(kernel_size, count)
    if len(kernel_size) != count:
        raise AssertionError('kernel_size must be a number or a list of %d ints' % count)
    if output_padding is None:
        return kernel_size, None
    output_padding = _tuple(output_padding, count)
    if len(output_padding) != count:
        raise AssertionError('output_padding must be a number or a list of %d ints' % count)
    return kernel_size, output_padding


class Conv1D(_Conv):
    """1-D convolution over (batch, channels, width) inputs (layout 'NCW').

    Parameters
    ----------
    channels : int
    kernel_size : int or tuple
    strides, padding, dilation : int or tuple, default 1, 0, 1
    groups : int, default 1
    layout : str, default 'NCW'
    activation : str, optional
    use_bias : bool, default True
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        (0: inferred at the first call)
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout='NCW', activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        kernel_size, _ = _check(layout, ('NCW',), kernel_size, 1)
        op_name = kwargs.pop('op_name', 'Convolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class Conv2D(_Conv):
    """2-D convolution (layout 'NCHW' or 'NHWC'); arguments as Conv1D, in pairs."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        kernel_size, _ = _check(layout, ('NCHW', 'NHWC'), kernel_size, 2)
        op_name = kwargs.pop('op_name', 'Convolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class Conv3D(_Conv):
    """3-D convolution (layout 'NCDHW' or 'NDHWC'); arguments as Conv1D, in triples."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        kernel_size, _ = _check(layout, ('NCDHW', 'NDHWC'), kernel_size, 3)
        op_name = kwargs.pop('op_name', 'Convolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class _ConvTranspose(_Conv):
    """A transposed convolution ('Deconvolution') with ``output_padding`` (the operator's
    ``adj``)."""

    def __init__(self, count, layouts, channels, kernel_size, strides, padding, output_padding,
                 dilation, groups, layout, activation, use_bias, weight_initializer,
                 bias_initializer, in_channels, **kwargs):
        kernel_size, output_padding = _check(layout, layouts, kernel_size, count,
                                             output_padding)
        op_name = kwargs.pop('op_name', 'Deconvolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution (layout 'NCW')."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(1, ('NCW',), channels, kernel_size, strides, padding, output_padding,
                         dilation, groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution (layout 'NCHW' or 'NHWC')."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(2, ('NCHW', 'NHWC'), channels, kernel_size, strides, padding,
                         output_padding, dilation, groups, layout, activation, use_bias,
                         weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution (layout 'NCDHW' or 'NDHWC')."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(3, ('NCDHW', 'NDHWC'), channels, kernel_size, strides, padding,
                         output_padding, dilation, groups, layout, activation, use_bias,
                         weight_initializer, bias_initializer, in_channels, **kwargs)
