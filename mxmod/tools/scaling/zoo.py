"""Networks the scaling tool can profile by name: ResNets (CIFAR-style ResNet-20/56 on 3x32x32,
ImageNet-style ResNet-50/101 with bottlenecks on 3x224x224) and an MLP of a given size."""
from ... import symbol as sym
from ...base import MXNetError

__all__ = ['build', 'NAMES']


def _conv_bn(data, filters, kernel, stride, name, relu=True):
    pad = (kernel // 2, kernel // 2)
    net = sym.Convolution(data, num_filter=filters, kernel=(kernel, kernel), stride=(stride, stride),
                          pad=pad, no_bias=True, name=name + '_conv')
    net = sym.BatchNorm(net, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + '_bn')
    return sym.Activation(net, act_type='relu', name=name + '_relu') if relu else net


def _unit(data, filters, stride, name, bottleneck, project):
    if bottleneck:
        net = _conv_bn(data, filters // 4, 1, 1, name + '_a')
        net = _conv_bn(net, filters // 4, 3, stride, name + '_b')
        net = _conv_bn(net, filters, 1, 1, name + '_c', relu=False)
    else:
        net = _conv_bn(data, filters, 3, stride, name + '_a')
        net = _conv_bn(net, filters, 3, 1, name + '_b', relu=False)
    short = _conv_bn(data, filters, 1, stride, name + '_sc', relu=False) if project else data
    return sym.Activation(net + short, act_type='relu', name=name + '_out')


def resnet(units, filters, classes, bottleneck, imagenet):
    """A ResNet v1: ``units`` blocks per stage with ``filters`` channels per stage."""
    data = sym.Variable('data')
    if imagenet:
        net = _conv_bn(data, 64, 7, 2, 'stem')
        net = sym.Pooling(net, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='max')
        channels = 64
    else:
        net = _conv_bn(data, filters[0], 3, 1, 'stem')
        channels = filters[0]
    for stage, (count, width) in enumerate(zip(units, filters)):
        for unit in range(count):
            stride = 2 if unit == 0 and stage > 0 else 1
            project = unit == 0 and (stride != 1 or channels != width)
            net = _unit(net, width, stride, 's%d_u%d' % (stage, unit), bottleneck, project)
            channels = width
    net = sym.Pooling(net, global_pool=True, kernel=(7, 7), pool_type='avg', name='pool')
    net = sym.FullyConnected(sym.Flatten(net), num_hidden=classes, name='fc')
    return sym.SoftmaxOutput(net, name='softmax')


def mlp(hidden, inputs, classes):
    """Fully connected layers of the given widths."""
    net = sym.Variable('data')
    for i, width in enumerate(hidden):
        net = sym.Activation(sym.FullyConnected(net, num_hidden=width, name='fc%d' % i),
                             act_type='relu', name='relu%d' % i)
    net = sym.FullyConnected(net, num_hidden=classes, name='fc_out')
    return sym.SoftmaxOutput(net, name='softmax')


NAMES = {
    'resnet20': (lambda: resnet([3, 3, 3], [16, 32, 64], 10, False, False), (3, 32, 32), 64),
    'resnet56': (lambda: resnet([9, 9, 9], [16, 32, 64], 10, False, False), (3, 32, 32), 64),
    'resnet50': (lambda: resnet([3, 4, 6, 3], [256, 512, 1024, 2048], 1000, True, True),
                 (3, 224, 224), 32),
    'resnet101': (lambda: resnet([3, 4, 23, 3], [256, 512, 1024, 2048], 1000, True, True),
                  (3, 224, 224), 32),
    'mlp50m': (lambda: mlp([4096, 4096, 4096], 3072, 1000), (3072,), 64),
    # the same parameter count in eight hidden layers: each gradient is an eighth of the bytes,
    # so less of them is final only when backward ends
    'mlp50m_deep': (lambda: mlp([2432] * 8, 3072, 1000), (3072,), 64),
}


def build(name):
    """(symbol, input shape without batch, default batch size) of a named network."""
    try:
        make, shape, batch = NAMES[name]
    except KeyError:
        raise MXNetError('unknown network %r; known: %s' % (name, ', '.join(sorted(NAMES)))) \
            from None
    return make(), shape, batch
