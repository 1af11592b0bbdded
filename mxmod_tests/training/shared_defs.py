"""Initializer, callback and monitor scenarios shared by the oracle fixture generator (MXNet)
and the mxmod tests: each takes the ``mx`` module so both run the same code."""
import numpy as np

# key -> factory of an initializer whose dumps() is compared
INIT_DUMPS = {
    'zero': lambda mx: mx.init.Zero(),
    'one': lambda mx: mx.init.One(),
    'constant': lambda mx: mx.init.Constant(0.5),
    'constant_int': lambda mx: mx.init.Constant(1),
    'uniform': lambda mx: mx.init.Uniform(0.2),
    'uniform_default': lambda mx: mx.init.Uniform(),
    'normal': lambda mx: mx.init.Normal(0.3),
    'orthogonal': lambda mx: mx.init.Orthogonal(),
    'orthogonal_normal': lambda mx: mx.init.Orthogonal(2.0, 'normal'),
    'xavier': lambda mx: mx.init.Xavier(),
    'xavier_gauss': lambda mx: mx.init.Xavier('gaussian', 'in', 2),
    'msra': lambda mx: mx.init.MSRAPrelu(),
    'msra_in': lambda mx: mx.init.MSRAPrelu('in', 0.1),
    'bilinear': lambda mx: mx.init.Bilinear(),
    'lstmbias': lambda mx: mx.init.LSTMBias(2.0),
    'fused': lambda mx: mx.init.FusedRNN(mx.init.Uniform(0.1), 4, 2, 'lstm', True, 1.5),
    'fused_none': lambda mx: mx.init.FusedRNN(None, 3, 1, 'gru'),
}

# (name, attrs, shape) initialized by Constant(0.7) through an InitDesc
DISPATCH = [
    ('fc_weight', {}, (2, 3)),
    ('fc_bias', {}, (3,)),
    ('bn_gamma', {}, (3,)),
    ('bn_beta', {}, (3,)),
    ('q_min', {}, (1,)),
    ('q_max', {}, (1,)),
    ('fc_weight', {'__init__': '["one", {}]'}, (2, 2)),
    ('fc_bias', {'__init__': '["constant", {"value": 3.0}]'}, (2,)),
    ('bn_moving_mean', {'__init__': '["zero", {}]'}, (3,)),
    ('bn_moving_var', {'__init__': '["one", {}]'}, (3,)),
    ('prelu_gamma', {'__init__': '["Constant", {"value": 0.25}]'}, (3,)),
    ('up_weight', {'__init__': '["bilinear", {}]'}, (1, 1, 4, 4)),
    ('lstm_i2h_bias', {'__init__': '["lstmbias", {"forget_bias": 1.0}]'}, (8,)),
    ('mystery', {}, (2,)),
    ('bn_moving_mean', {}, (3,)),
    ('bn_moving_var', {}, (3,)),
]

# plain-str (deprecated) calls of Constant(0.7)
LEGACY = [
    ('fc_weight', (2, 2)), ('fc_bias', (2,)), ('bn_gamma', (2,)), ('bn_beta', (2,)),
    ('bn_moving_mean', (2,)), ('bn_moving_var', (2,)), ('bn_moving_inv_var', (2,)),
    ('x_moving_avg', (2,)), ('q_min', (1,)), ('q_max', (1,)), ('upsampling0_weight', (1, 1, 4, 4)),
    ('stn_loc_weight', (6, 2)), ('stn_loc_bias', (6,)), ('mystery', (2,)),
]

BILINEAR_SHAPES = [(1, 1, 4, 4), (2, 3, 5, 5), (1, 2, 3, 6), (1, 1, 2, 3)]

# key -> (use NameCode as init (else the global One), FusedRNN kwargs, parameter size)
FUSED = {
    'lstm_bi_2layer': (True, dict(num_hidden=3, num_layers=2, mode='lstm', bidirectional=True,
                                  forget_bias=1.5), 504),
    'lstm_global': (False, dict(num_hidden=3, num_layers=1, mode='lstm', forget_bias=2.0),
                    (5 + 3 + 2) * 3 * 4),
    'gru_2layer': (True, dict(num_hidden=2, num_layers=2, mode='gru'),
                   (4 + 2 + 2) * 2 * 3 + 3 * 2 * (2 + 2 + 2)),
    'rnn_tanh_bi': (True, dict(num_hidden=2, num_layers=1, mode='rnn_tanh', bidirectional=True),
                    (3 + 2 + 2) * 2 * 1 * 2),
}


def make_name_code(mx):
    """Register and return an initializer writing a name-dependent ramp into every piece."""
    class NameCode(mx.init.Initializer):
        """Fills ``code(name) * 100 + arange(size)``."""

        def __init__(self):
            super(NameCode, self).__init__()

        @staticmethod
        def _fill(name, arr):
            code = sum(ord(c) * (i + 1) for i, c in enumerate(str(name))) % 97
            arr[:] = (code * 100 + np.arange(arr.size)).reshape(arr.shape).astype(np.float32)

        def _init_weight(self, name, arr):
            self._fill(name, arr)

        def _init_bias(self, name, arr):
            self._fill(name, arr)
    mx.init.register(NameCode)
    return NameCode


def run_fused(mx, key):
    """Initialize a fused RNN parameter vector for scenario ``key``; returns a numpy array.

    With NameCode the FusedRNN is called directly (MXNet cannot rebuild a FusedRNN whose init
    is not None from its JSON); otherwise it goes through the variable's ``__init__``."""
    use_code, kwargs, size = FUSED[key]
    arr = mx.nd.zeros((size,))
    if use_code:
        desc = mx.init.InitDesc('rnn_parameters', global_init=mx.init.One())
        mx.init.FusedRNN(make_name_code(mx)(), **kwargs)._init_weight(desc, arr)
    else:
        desc = mx.init.InitDesc('rnn_parameters',
                                {'__init__': mx.init.FusedRNN(None, **kwargs).dumps()})
        mx.init.One()(desc, arr)
    return arr.asnumpy()


class FakeClock(object):
    """A time.time replacement advancing 0.25 s per call."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        self.now += 0.25
        return self.now


CALLBACKS = {
    'speedometer': lambda mx: mx.callback.Speedometer(4, 2),
    'speedometer_noreset': lambda mx: mx.callback.Speedometer(4, 3, auto_reset=False),
    'speedometer_nometric': lambda mx: mx.callback.Speedometer(2, 3),
    'speedometer_composite': lambda mx: mx.callback.Speedometer(4, 2),
    'log_train_metric': lambda mx: mx.callback.log_train_metric(2),
    'log_train_metric_reset': lambda mx: mx.callback.log_train_metric(3, True),
    'progress': lambda mx: mx.callback.ProgressBar(7, 10),
    'log_validation': lambda mx: mx.callback.LogValidationMetricsCallback(),
}


def make_metric(mx, key):
    """The metric a callback scenario drives (None for the no-metric one)."""
    if key == 'speedometer_nometric':
        return None
    if key == 'speedometer_composite':
        return mx.metric.create(['acc', 'ce'])
    return mx.metric.create('acc')


def drive_callback(mx, callback, param_type, key):
    """Two epochs of seven batches: update the metric, then call the callback."""
    metric = make_metric(mx, key)
    for epoch in range(2):
        if metric is not None:
            metric.reset()
        for nbatch in range(7):
            rs = np.random.RandomState(epoch * 7 + nbatch)
            if metric is not None:
                label = mx.nd.array(rs.randint(0, 3, size=4).astype(np.float32))
                pred = mx.nd.array(rs.dirichlet([1, 1, 1], size=4).astype(np.float32))
                metric.update([label], [pred])
            callback(param_type(epoch=epoch, nbatch=nbatch, eval_metric=metric, locals=None))


def monitor_net(mx):
    """The two-layer net of MXNet's test_monitor, bound with fixed parameters."""
    x = mx.symbol.Variable('data')
    x = mx.symbol.FullyConnected(name='fc_0', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_0', data=x, act_type='sigmoid')
    x = mx.symbol.FullyConnected(name='fc_1', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_1', data=x, act_type='sigmoid')
    x = mx.symbol.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)
    exe = x.simple_bind(mx.cpu(), data=(1, 2), softmax_label=(1, 2))
    values = {'data': [[0.05, 0.10]], 'softmax_label': [[0.01, 0.99]],
              'fc_0_weight': [[.15, .20], [.25, .30]], 'fc_0_bias': [.35, .35],
              'fc_1_weight': [[.40, .45], [.50, .55]], 'fc_1_bias': [.60, .60]}
    for name, value in values.items():
        exe.arg_dict[name][:] = mx.nd.array(value)
    return exe


def run_monitor(mx, backward=True):
    """Monitor scenarios; returns {scenario: [[step, name, text], ...] per tic/toc}."""
    out = {}
    scenarios = {'all_sorted': dict(interval=1, sort=True),
                 'weights_every2': dict(interval=2, pattern='.*weight|.*output'),
                 'monitor_all': dict(interval=1, sort=True, monitor_all=True)}
    for key, kwargs in scenarios.items():
        exe = monitor_net(mx)
        mon = mx.mon.Monitor(**kwargs)
        mon.install(exe)
        rounds = []
        for _ in range(3):
            mon.tic()
            exe.forward(is_train=True)
            if backward:
                exe.backward()
            rounds.append([list(r) for r in mon.toc()])
        out[key] = rounds
    return out
