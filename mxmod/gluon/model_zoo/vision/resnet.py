"""ResNet V1 and V2 (He et al. 2015/2016) as Gluon HybridBlocks, with MXNet 1.9.1's block
structure and Parameter names (so its model-store weights load): basic blocks for 18/34
layers, bottlenecks for 50/101/152."""
import glob
import os

from ....base import MXNetError
from ....context import cpu
from ... import nn
from ...hybrid_block import HybridBlock

__all__ = ['ResNetV1', 'ResNetV2', 'BasicBlockV1', 'BasicBlockV2', 'BottleneckV1',
           'BottleneckV2', 'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1',
           'resnet152_v1', 'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2',
           'resnet152_v2', 'get_resnet']


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut(channels, stride, in_channels, with_norm):
    """The 1x1 strided projection of the identity path (followed by BatchNorm in V1)."""
    conv = nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                     in_channels=in_channels)
    if not with_norm:
        return conv
    path = nn.HybridSequential(prefix='')
    path.add(conv, nn.BatchNorm())
    return path


class _ResidualV1(HybridBlock):
    """Post-activation residual unit: relu(body(x) + shortcut(x))."""

    def __init__(self, layers, channels, stride, downsample, in_channels, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(*layers)
        self.downsample = _shortcut(channels, stride, in_channels, True) if downsample else None

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type='relu')


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions (ResNet-18/34, V1)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        layers = [_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                  nn.Activation('relu'), _conv3x3(channels, 1, channels), nn.BatchNorm()]
        super().__init__(layers, channels, stride, downsample, in_channels, **kwargs)


class BottleneckV1(_ResidualV1):
    """1x1 reduce, 3x3, 1x1 expand (ResNet-50/101/152, V1)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        inner = channels // 4
        layers = [nn.Conv2D(inner, kernel_size=1, strides=stride), nn.BatchNorm(),
                  nn.Activation('relu'), _conv3x3(inner, 1, inner), nn.BatchNorm(),
                  nn.Activation('relu'), nn.Conv2D(channels, kernel_size=1, strides=1),
                  nn.BatchNorm()]
        super().__init__(layers, channels, stride, downsample, in_channels, **kwargs)


class BasicBlockV2(HybridBlock):
    """Pre-activation unit with two 3x3 convolutions (ResNet-18/34, V2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _shortcut(channels, stride, in_channels, False) \
            if downsample else None

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        x = F.Activation(self.bn1(x), act_type='relu')
        residual = self.downsample(x) if self.downsample else None
        out = self.conv2(F.Activation(self.bn2(self.conv1(x)), act_type='relu'))
        return out + (residual if residual is not None else x)


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck unit (ResNet-50/101/152, V2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        inner = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(inner, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(inner, stride, inner)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _shortcut(channels, stride, in_channels, False) \
            if downsample else None

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        x = F.Activation(self.bn1(x), act_type='relu')
        residual = self.downsample(x) if self.downsample else x
        out = F.Activation(self.bn2(self.conv1(x)), act_type='relu')
        out = F.Activation(self.bn3(self.conv2(out)), act_type='relu')
        return self.conv3(out) + residual


def _stem(features, channels, thumbnail):
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation('relu'), nn.MaxPool2D(3, 2, 1))


def _stage(block, count, channels, stride, index, in_channels):
    layer = nn.HybridSequential(prefix='stage%d_' % index)
    with layer.name_scope():
        layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=''))
        for _ in range(count - 1):
            layer.add(block(channels, 1, False, in_channels=channels, prefix=''))
    return layer


class _ResNet(HybridBlock):
    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return self.output(self.features(x))


def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise AssertionError('ResNet: %d stages need %d channel counts, got %d'
                             % (len(layers), len(layers) + 1, len(channels)))


class ResNetV1(_ResNet):
    """ResNet V1: ``block`` (BasicBlockV1 or BottleneckV1) repeated ``layers[i]`` times per
    stage with ``channels[i + 1]`` channels (``channels[0]``: the stem); ``thumbnail`` uses
    a 3x3 stem for small images."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            _stem(self.features, channels[0], thumbnail)
            for i, count in enumerate(layers):
                self.features.add(_stage(block, count, channels[i + 1], 1 if i == 0 else 2,
                                         i + 1, channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet V2 (pre-activation); arguments as ResNetV1."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, count in enumerate(layers):
                self.features.add(_stage(block, count, channels[i + 1], 1 if i == 0 else 2,
                                         i + 1, in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(),
                              nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def _default_root():
    return os.path.join(os.environ.get('MXNET_HOME', os.path.join('~', '.mxnet')), 'models')


def pretrained_file(name, root):
    """The weights file ``<root>/<name>-<hash>.params`` that MXNet's model store puts there."""
    found = sorted(glob.glob(os.path.join(os.path.expanduser(root), name + '-*.params')))
    if not found:
        raise MXNetError('pretrained weights for %s were not found in %s: mxmod does not '
                         'download from MXNet\'s model store; put its %s-<hash>.params file '
                         'there (or pass root=) to load them' % (name, root, name))
    return found[-1]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101 or 152) layers;
    ``pretrained`` loads model-store weights found in ``root``; other keywords go to the
    network (classes, thumbnail, prefix, ...)."""
    if num_layers not in resnet_spec:
        raise AssertionError('Invalid number of layers: %d. Options are %s'
                             % (num_layers, str(resnet_spec.keys())))
    if version not in (1, 2):
        raise AssertionError('Invalid resnet version: %d. Options are 1 and 2.' % version)
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type],
                                           layers, channels, **kwargs)
    if pretrained:
        name = 'resnet%d_v%d' % (num_layers, version)
        net.load_parameters(pretrained_file(name, root or _default_root()), ctx=ctx)
    return net


def _constructor(version, num_layers):
    def build(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    build.__name__ = 'resnet%d_v%d' % (num_layers, version)
    build.__doc__ = 'ResNet-%d V%d (see get_resnet for the keywords).' % (num_layers, version)
    return build


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (
    _constructor(1, n) for n in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (
    _constructor(2, n) for n in (18, 34, 50, 101, 152))
