"""plot_network cases shared by make_fixtures.py (MXNet) and test_plot.py (mxmod): each is a
network from the zoo fixtures or a small graph of the operators that get their own drawing, and
the keyword arguments of the call."""


def small_graph(mx):
    """Operators plot_network labels specially, a Custom op, and a multi-output layer."""
    data = mx.sym.Variable('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), stride=(2, 2), num_filter=8, name='conv')
    net = mx.sym.BatchNorm(net, name='bn')
    net = mx.sym.LeakyReLU(net, act_type='elu', name='elu')
    left = mx.sym.Pooling(net, kernel=(2, 2), pool_type='avg', name='pool')
    right = mx.sym.Pooling(net, global_pool=True, kernel=(1, 1), pool_type='max', name='gpool')
    right = mx.sym.broadcast_like(right, left, name='bcast')
    net = mx.sym.Concat(left, right, name='concat')
    net = mx.sym.SliceChannel(net, num_outputs=2, name='split')
    net = mx.sym.Flatten(net[1], name='flat')
    net = mx.sym.FullyConnected(net, num_hidden=5, name='fc')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh')
    return mx.sym.softmax(net, name='prob')


CASES = {
    'small_default': ('small', {}),
    'small_shapes_types': ('small', {'shape': {'data': (2, 3, 16, 16)},
                                     'dtype': {'data': 'float32'}, 'title': 'small',
                                     'save_format': 'png'}),
    'small_weights_shown': ('small', {'hide_weights': False,
                                      'node_attrs': {'shape': 'oval', 'fixedsize': 'false'}}),
    'lenet_shapes': ('lenet', {'shape': {'data': (1, 1, 28, 28)}}),
    'resnet-18_shapes': ('resnet-18', {'shape': {'data': (1, 3, 224, 224)}}),
}


def plot(mx, symbol, kwargs):
    """{'source', 'name', 'format'} of ``mx.viz.plot_network(symbol, **kwargs)``."""
    graph = mx.viz.plot_network(symbol, **kwargs)
    return {'source': graph.source.rstrip('\n'), 'name': graph.name, 'format': graph.format}
