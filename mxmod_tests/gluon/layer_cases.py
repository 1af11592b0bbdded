"""Gluon layer and loss cases shared by the fixture generator (run with real MXNet 1.9.1) and
the tests (run with mxmod): each case builds a block with the ``mx`` module it is given, and
``run_layer`` / ``run_loss`` compute outputs and gradients on deterministic inputs and
parameters, imperatively or hybridized."""
import numpy as np

# name: (builder(mx) -> block, input shapes, options)
#   options: 'int_input' (indices in [0, 10)), 'train' (record in training mode)
# MXNet's CPU (oneDNN) max pooling computes its backward from a workspace that only a forward
# in training mode writes, so the max-pooling cases are recorded in training mode
TRAIN = {'train': True}
LAYERS = {
    'dense_relu': (lambda mx: mx.gluon.nn.Dense(3, activation='relu'), [(4, 5)], {}),
    'dense_noflat_nobias': (lambda mx: mx.gluon.nn.Dense(3, flatten=False, use_bias=False),
                            [(2, 3, 5)], {}),
    'dense_in_units_tanh': (lambda mx: mx.gluon.nn.Dense(4, activation='tanh', in_units=6),
                            [(2, 2, 3)], {}),
    'conv1d_dilated': (lambda mx: mx.gluon.nn.Conv1D(4, 3, padding=2, dilation=2,
                                                     activation='tanh'), [(2, 3, 10)], {}),
    'conv2d_strided': (lambda mx: mx.gluon.nn.Conv2D(3, (3, 2), strides=(2, 1), padding=(1, 0)),
                       [(2, 2, 7, 6)], {}),
    'conv2d_groups': (lambda mx: mx.gluon.nn.Conv2D(4, 3, groups=2, use_bias=False),
                      [(2, 4, 6, 6)], {}),
    'conv3d': (lambda mx: mx.gluon.nn.Conv3D(2, 2, strides=2, activation='sigmoid'),
               [(1, 2, 4, 4, 4)], {}),
    'conv1d_transpose': (lambda mx: mx.gluon.nn.Conv1DTranspose(3, 3, strides=2,
                                                                output_padding=1),
                         [(2, 2, 5)], {}),
    'conv2d_transpose': (lambda mx: mx.gluon.nn.Conv2DTranspose(2, (3, 3), strides=(2, 2),
                                                                padding=(1, 1)),
                         [(1, 3, 4, 4)], {}),
    'conv3d_transpose': (lambda mx: mx.gluon.nn.Conv3DTranspose(2, 2), [(1, 2, 3, 3, 3)], {}),
    'maxpool1d': (lambda mx: mx.gluon.nn.MaxPool1D(3, 2, padding=1), [(2, 3, 9)], TRAIN),
    'maxpool2d_ceil': (lambda mx: mx.gluon.nn.MaxPool2D((2, 2), ceil_mode=True), [(2, 2, 5, 5)],
                       TRAIN),
    'maxpool3d': (lambda mx: mx.gluon.nn.MaxPool3D(), [(1, 2, 4, 4, 4)], TRAIN),
    'avgpool1d': (lambda mx: mx.gluon.nn.AvgPool1D(2), [(2, 3, 8)], {}),
    'avgpool2d_nopad': (lambda mx: mx.gluon.nn.AvgPool2D(3, 2, padding=1,
                                                         count_include_pad=False),
                        [(2, 2, 6, 6)], {}),
    'avgpool3d': (lambda mx: mx.gluon.nn.AvgPool3D(2), [(1, 2, 4, 4, 4)], {}),
    'globalmaxpool1d': (lambda mx: mx.gluon.nn.GlobalMaxPool1D(), [(2, 3, 7)], TRAIN),
    'globalmaxpool2d': (lambda mx: mx.gluon.nn.GlobalMaxPool2D(), [(2, 3, 4, 5)], TRAIN),
    'globalmaxpool3d': (lambda mx: mx.gluon.nn.GlobalMaxPool3D(), [(1, 2, 3, 4, 2)], TRAIN),
    'globalavgpool1d': (lambda mx: mx.gluon.nn.GlobalAvgPool1D(), [(2, 3, 7)], {}),
    'globalavgpool2d': (lambda mx: mx.gluon.nn.GlobalAvgPool2D(), [(2, 3, 4, 5)], {}),
    'globalavgpool3d': (lambda mx: mx.gluon.nn.GlobalAvgPool3D(), [(1, 2, 3, 4, 2)], {}),
    'reflectionpad2d': (lambda mx: mx.gluon.nn.ReflectionPad2D(2), [(1, 2, 5, 5)], {}),
    'batchnorm_train': (lambda mx: mx.gluon.nn.BatchNorm(), [(3, 4, 5, 5)], {'train': True}),
    'batchnorm_predict': (lambda mx: mx.gluon.nn.BatchNorm(momentum=0.8), [(3, 4, 5)], {}),
    'batchnorm_lastaxis_noscale': (lambda mx: mx.gluon.nn.BatchNorm(axis=-1, scale=False),
                                   [(4, 3, 6)], {'train': True}),
    'layernorm': (lambda mx: mx.gluon.nn.LayerNorm(), [(3, 6)], {}),
    'layernorm_axis1': (lambda mx: mx.gluon.nn.LayerNorm(axis=1, epsilon=1e-3),
                        [(2, 4, 3)], {}),
    'instancenorm': (lambda mx: mx.gluon.nn.InstanceNorm(scale=True), [(2, 3, 5)], {}),
    'groupnorm': (lambda mx: mx.gluon.nn.GroupNorm(num_groups=2), [(2, 4, 3, 3)], {}),
    'embedding': (lambda mx: mx.gluon.nn.Embedding(10, 4), [(2, 3)], {'int_input': True}),
    'flatten': (lambda mx: mx.gluon.nn.Flatten(), [(2, 3, 4)], {}),
    'act_relu': (lambda mx: mx.gluon.nn.Activation('relu'), [(3, 4)], {}),
    'act_sigmoid': (lambda mx: mx.gluon.nn.Activation('sigmoid'), [(3, 4)], {}),
    'act_tanh': (lambda mx: mx.gluon.nn.Activation('tanh'), [(3, 4)], {}),
    'act_softrelu': (lambda mx: mx.gluon.nn.Activation('softrelu'), [(3, 4)], {}),
    'act_softsign': (lambda mx: mx.gluon.nn.Activation('softsign'), [(3, 4)], {}),
    'leakyrelu': (lambda mx: mx.gluon.nn.LeakyReLU(0.1), [(3, 4)], {}),
    'prelu': (lambda mx: mx.gluon.nn.PReLU(), [(3, 4)], {}),
    'prelu_channels': (lambda mx: mx.gluon.nn.PReLU(in_channels=3), [(2, 3, 4)], {}),
    'elu': (lambda mx: mx.gluon.nn.ELU(0.5), [(3, 4)], {}),
    'selu': (lambda mx: mx.gluon.nn.SELU(), [(3, 4)], {}),
    'swish': (lambda mx: mx.gluon.nn.Swish(0.7), [(3, 4)], {}),
    'gelu': (lambda mx: mx.gluon.nn.GELU(), [(3, 4)], {}),
    'dropout_predict': (lambda mx: mx.gluon.nn.Dropout(0.5), [(3, 4)], {}),
    'hybridlambda_name': (lambda mx: mx.gluon.nn.HybridLambda('tanh'), [(3, 4)], {}),
    'hybridlambda_fn': (lambda mx: mx.gluon.nn.HybridLambda(lambda F, x: F.relu(x) * 2),
                        [(3, 4)], {}),
    'lambda_name': (lambda mx: mx.gluon.nn.Lambda('sigmoid'), [(3, 4)], {}),
    'hybridsequential': (lambda mx: _sequential(mx, True), [(4, 6)], {'train': True}),
    'sequential': (lambda mx: _sequential(mx, False), [(4, 6)], {}),
    'custom_two_inputs': (lambda mx: _two_inputs(mx), [(3, 5), (3, 4)], {}),
    'contrib_hybridconcurrent': (lambda mx: _concurrent(mx), [(2, 3, 4)], {}),
    'resnet_v1_basic_small': (lambda mx: _resnet(mx, 1), [(2, 3, 8, 8)], TRAIN),
    'resnet_v2_bottleneck_small': (lambda mx: _resnet(mx, 2), [(2, 3, 8, 8)], TRAIN),
}


def _resnet(mx, version):
    vision = mx.gluon.model_zoo.vision
    if version == 1:
        return vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8], classes=3,
                               thumbnail=True)
    return vision.ResNetV2(vision.BottleneckV2, [1, 1], [4, 8, 16], classes=3)


def _sequential(mx, hybrid):
    net = mx.gluon.nn.HybridSequential() if hybrid else mx.gluon.nn.Sequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(5, in_units=6))
        if hybrid:
            net.add(mx.gluon.nn.BatchNorm())
        net.add(mx.gluon.nn.Activation('tanh'))
        net.add(mx.gluon.nn.Dense(2, activation='sigmoid'))
    return net


def _two_inputs(mx):
    class TwoInputs(mx.gluon.HybridBlock):
        """Two inputs, a Parameter of its own, a child, and a list of two outputs."""

        def __init__(self, **kwargs):
            super(TwoInputs, self).__init__(**kwargs)
            with self.name_scope():
                self.scale = self.params.get('scale', shape=(1, 4), init=mx.init.One())
                self.proj = mx.gluon.nn.Dense(4, in_units=5)

        def hybrid_forward(self, F, x, y, scale):  # pylint: disable=invalid-name
            mixed = F.broadcast_mul(self.proj(x), scale) + y
            return [F.tanh(mixed), F.sum(mixed * y, axis=1)]

    return TwoInputs()


def _concurrent(mx):
    net = mx.gluon.contrib.nn.HybridConcurrent(axis=-1)
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3, flatten=False))
        net.add(mx.gluon.contrib.nn.Identity())
    return net


def layer_inputs(name):
    """The deterministic inputs of layer case ``name`` (numpy arrays)."""
    _, shapes, options = LAYERS[name]
    rs = np.random.RandomState(sum(map(ord, name)))
    if options.get('int_input'):
        return [rs.randint(0, 10, size=s).astype(np.float32) for s in shapes]
    return [rs.uniform(-1.5, 1.5, size=s).astype(np.float32) for s in shapes]


def _param_value(rs, name, shape):
    if name.endswith(('running_var', 'moving_var')):
        return rs.uniform(0.5, 1.5, size=shape).astype(np.float32)
    return rs.uniform(-0.6, 0.6, size=shape).astype(np.float32)


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_layer(mx, name, hybridize):
    """Outputs, input gradients, parameter gradients and final parameter values of layer case
    ``name``, keyed 'out<i>', 'dx<i>', 'grad:<param>', 'param:<param>'; plus the names of the
    block's Parameters (in collect_params order) and its prefix."""
    builder, _, options = LAYERS[name]
    with mx.name.NameManager():
        net = builder(mx)
    net.initialize()
    arrays = [mx.nd.array(x) for x in layer_inputs(name)]
    net(*arrays)                       # finishes deferred initialization
    rs = np.random.RandomState(7)
    params = net.collect_params()
    for pname in sorted(params.keys()):
        params[pname].set_data(mx.nd.array(_param_value(rs, pname, params[pname].shape)))
    if hybridize:
        net.hybridize()
    for arr in arrays:
        if not options.get('int_input'):
            arr.attach_grad()
    with mx.autograd.record(train_mode=bool(options.get('train'))):
        outs = _as_list(net(*arrays))
        heads = [mx.nd.array(rs.uniform(-1, 1, size=o.shape).astype(np.float32)) for o in outs]
        total = [(o * h).sum() for o, h in zip(outs, heads)]
    mx.autograd.backward(total)
    result = {}
    for i, out in enumerate(outs):
        result['out%d' % i] = out.asnumpy()
    for i, arr in enumerate(arrays):
        if not options.get('int_input'):
            result['dx%d' % i] = arr.grad.asnumpy()
    for pname, param in params.items():
        result['param:' + pname] = param.data().asnumpy()
        if param.grad_req != 'null':
            result['grad:' + pname] = param.grad().asnumpy()
    return result, list(params.keys()), net.prefix


# name: (builder(mx) -> loss, [(shape, kind)], options); kinds: 'pred', 'prob' (0..1),
# 'class' (integer class index), 'sign' (+-1), 'pos' (>0), 'weight' (sample weight)
LOSSES = {
    'l2': (lambda mx: mx.gluon.loss.L2Loss(), [((4, 3), 'pred'), ((4, 3), 'pred')]),
    'l2_weighted': (lambda mx: mx.gluon.loss.L2Loss(weight=0.5, batch_axis=1),
                    [((3, 4, 2), 'pred'), ((3, 4, 2), 'pred'), ((1, 4, 1), 'weight')]),
    'l1': (lambda mx: mx.gluon.loss.L1Loss(), [((4, 3), 'pred'), ((4, 3), 'pred'),
                                             ((4, 1), 'weight')]),
    'softmax_ce': (lambda mx: mx.gluon.loss.SoftmaxCrossEntropyLoss(),
                   [((4, 5), 'pred'), ((4,), 'class')]),
    'softmax_ce_axis1_weight': (lambda mx: mx.gluon.loss.SoftmaxCrossEntropyLoss(axis=1,
                                                                                weight=2.0),
                                [((3, 5, 2), 'pred'), ((3, 2), 'class'), ((3, 1, 2), 'weight')]),
    'softmax_ce_dense': (lambda mx: mx.gluon.loss.SoftmaxCrossEntropyLoss(sparse_label=False),
                         [((4, 5), 'pred'), ((4, 5), 'prob')]),
    'softmax_ce_logits': (lambda mx: mx.gluon.loss.SoftmaxCELoss(from_logits=True),
                          [((4, 5), 'pred'), ((4,), 'class')]),
    'sigmoid_bce': (lambda mx: mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(),
                    [((4, 3), 'pred'), ((4, 3), 'prob'), ((4, 1), 'weight')]),
    'sigmoid_bce_pos_weight': (lambda mx: mx.gluon.loss.SigmoidBCELoss(),
                               [((4, 3), 'pred'), ((4, 3), 'prob'), None, ((1, 3), 'pos')]),
    'sigmoid_bce_from_sigmoid': (lambda mx: mx.gluon.loss.SigmoidBCELoss(from_sigmoid=True),
                                 [((4, 3), 'prob'), ((4, 3), 'prob')]),
    'kldiv': (lambda mx: mx.gluon.loss.KLDivLoss(), [((4, 5), 'pred'), ((4, 5), 'prob')]),
    'kldiv_logits': (lambda mx: mx.gluon.loss.KLDivLoss(from_logits=False, axis=1),
                     [((4, 5), 'pred'), ((4, 5), 'prob')]),
    'huber': (lambda mx: mx.gluon.loss.HuberLoss(rho=0.7), [((4, 3), 'pred'), ((4, 3), 'pred')]),
    'hinge': (lambda mx: mx.gluon.loss.HingeLoss(margin=0.8), [((4, 3), 'pred'),
                                                                ((4, 3), 'sign')]),
    'squared_hinge': (lambda mx: mx.gluon.loss.SquaredHingeLoss(), [((4, 3), 'pred'),
                                                                   ((4, 3), 'sign')]),
    'logistic_signed': (lambda mx: mx.gluon.loss.LogisticLoss(), [((4, 3), 'pred'),
                                                                 ((4, 3), 'sign')]),
    'logistic_binary': (lambda mx: mx.gluon.loss.LogisticLoss(label_format='binary'),
                        [((4, 3), 'pred'), ((4, 3), 'bit')]),
    'triplet': (lambda mx: mx.gluon.loss.TripletLoss(margin=0.5),
                [((4, 3), 'pred'), ((4, 3), 'pred'), ((4, 3), 'pred')]),
    'cosine_embedding': (lambda mx: mx.gluon.loss.CosineEmbeddingLoss(margin=0.1),
                         [((4, 3), 'pred'), ((4, 3), 'pred'), ((4,), 'sign')]),
    'poisson_nll': (lambda mx: mx.gluon.loss.PoissonNLLLoss(), [((4, 3), 'pred'),
                                                               ((4, 3), 'pos')]),
    'poisson_nll_full': (lambda mx: mx.gluon.loss.PoissonNLLLoss(from_logits=False,
                                                                 compute_full=True),
                         [((4, 3), 'pos'), ((4, 3), 'pos')]),
    'sdml': (lambda mx: mx.gluon.loss.SDMLLoss(), [((4, 3), 'pred'), ((4, 3), 'pred')]),
    'ctc': (lambda mx: mx.gluon.loss.CTCLoss(), [((2, 6, 4), 'pred'), ((2, 3), 'token')]),
    'ctc_tnc_lengths': (lambda mx: mx.gluon.loss.CTCLoss(layout='TNC', label_layout='TN'),
                        [((6, 2, 4), 'pred'), ((3, 2), 'token'), ((2,), 'seqlen'),
                         ((2,), 'labellen')]),
}


def loss_inputs(name):
    """The deterministic inputs of loss case ``name`` (numpy arrays, None where skipped)."""
    rs = np.random.RandomState(sum(map(ord, name)))
    values = []
    for spec in LOSSES[name][1]:
        if spec is None:
            values.append(None)
            continue
        shape, kind = spec
        if kind == 'pred':
            value = rs.uniform(-2, 2, size=shape)
        elif kind == 'prob':
            value = rs.uniform(0.05, 0.95, size=shape)
        elif kind == 'class':
            value = rs.randint(0, 5 if len(shape) == 1 else 5, size=shape)
        elif kind == 'sign':
            value = rs.choice([-1.0, 1.0], size=shape)
        elif kind == 'bit':
            value = rs.choice([0.0, 1.0], size=shape)
        elif kind == 'token':
            value = rs.randint(0, 3, size=shape)
        elif kind == 'seqlen':
            value = np.array([6, 5][:shape[0]])
        elif kind == 'labellen':
            value = np.array([3, 2][:shape[0]])
        elif kind == 'pos':
            value = rs.uniform(0.5, 3.0, size=shape)
        else:
            value = rs.uniform(0.2, 1.5, size=shape)
        values.append(value.astype(np.float32))
    return values


# MXNet's PoissonNLLLoss(compute_full=True) updates an array in place, which autograd refuses:
# only its values are compared
NO_GRAD = {'poisson_nll_full'}


def run_loss(mx, name, hybridize):
    """The loss values and the gradient of their weighted sum with respect to the first
    input, keyed 'loss' and 'dpred'."""
    loss = LOSSES[name][0](mx)
    if hybridize:
        loss.hybridize()
    values = loss_inputs(name)
    arrays = [None if v is None else mx.nd.array(v) for v in values]
    if name in NO_GRAD:
        return {'loss': loss(*arrays).asnumpy()}
    arrays[0].attach_grad()
    with mx.autograd.record():
        out = loss(*arrays)
        head = mx.nd.array(np.linspace(0.5, 1.5, out.size).reshape(out.shape).astype(np.float32))
        total = (out * head).sum()
    total.backward()
    return {'loss': out.asnumpy(), 'dpred': arrays[0].grad.asnumpy()}
