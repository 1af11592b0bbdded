"""Small networks, one or a few layers each, exported and compared with mxmod's forward.

Each case is ``name -> builder()`` returning ``(symbol, {input name: numpy array})``."""
import numpy as np

import mxmod as mx

sym = mx.sym
R = np.random.RandomState(7)


def _x(*shape, low=None, high=None):
    if low is not None:
        return R.uniform(low, high, shape).astype(np.float32)
    return R.normal(0, 1, shape).astype(np.float32)


def _d(name='data'):
    return sym.Variable(name)


def _one(net, *shape, **kw):
    """A case with one input 'data' of ``shape``; ``net(data)`` builds the symbol."""
    return lambda: (net(_d()), {'data': _x(*shape, **kw)})


CASES = {
    # ---- dense, convolution, pooling
    'fc': _one(lambda d: sym.FullyConnected(d, num_hidden=7, name='fc'), 4, 5),
    'fc_flatten4d': _one(lambda d: sym.FullyConnected(d, num_hidden=3, name='fc'), 2, 3, 4, 5),
    'fc_noflatten': _one(lambda d: sym.FullyConnected(d, num_hidden=3, flatten=False,
                                                    name='fc'), 2, 3, 4),
    'fc_nobias': _one(lambda d: sym.FullyConnected(d, num_hidden=3, no_bias=True, name='fc'),
                      2, 6),
    'conv2d': _one(lambda d: sym.Convolution(d, kernel=(3, 3), num_filter=4, stride=(2, 1),
                                           pad=(1, 2), dilate=(1, 2), name='conv'), 2, 3, 9, 8),
    'conv_group': _one(lambda d: sym.Convolution(d, kernel=(3, 3), num_filter=6, num_group=3,
                                               no_bias=True, name='conv'), 1, 6, 7, 7),
    'conv1d': _one(lambda d: sym.Convolution(d, kernel=(3,), num_filter=4, pad=(1,),
                                           name='conv'), 2, 3, 10),
    'conv3d': _one(lambda d: sym.Convolution(d, kernel=(2, 3, 3), num_filter=2, stride=(1, 2, 2),
                                           name='conv'), 1, 2, 4, 7, 7),
    'conv_nhwc': _one(lambda d: sym.Convolution(d, kernel=(3, 3), num_filter=4, layout='NHWC',
                                              name='conv'), 2, 7, 7, 3),
    'deconv_default': _one(lambda d: sym.Deconvolution(d, kernel=(3, 3), num_filter=4,
                                                     stride=(2, 2), name='deconv'), 2, 3, 5, 5),
    'deconv_bias_adj': _one(lambda d: sym.Deconvolution(d, kernel=(4, 4), num_filter=4,
                                                      stride=(2, 2), pad=(1, 1), adj=(1, 1),
                                                      no_bias=False, name='deconv'), 2, 3, 5, 5),
    'deconv_target': _one(lambda d: sym.Deconvolution(d, kernel=(3, 3), num_filter=2,
                                                    stride=(2, 2), target_shape=(10, 11),
                                                    name='deconv'), 1, 3, 5, 5),
    'deconv_group': _one(lambda d: sym.Deconvolution(d, kernel=(3, 3), num_filter=4,
                                                   num_group=2, name='deconv'), 1, 4, 5, 5),
    'pool_max': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pool_type='max'),
                     2, 3, 9, 9),
    'pool_max_full': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                              pooling_convention='full'), 2, 3, 10, 10),
    'pool_avg': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(1, 1), pad=(1, 1),
                                         pool_type='avg'), 2, 3, 6, 6),
    'pool_avg_full': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                              pool_type='avg', pooling_convention='full'),
                          2, 3, 10, 10),
    'pool_avg_full_exclude': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(2, 2),
                                                      pad=(1, 1), pool_type='avg',
                                                      count_include_pad=False,
                                                      pooling_convention='full'), 2, 3, 10, 10),
    'pool_avg_exclude': _one(lambda d: sym.Pooling(d, kernel=(2, 2), pad=(1, 1), stride=(2, 2),
                                                 pool_type='avg', count_include_pad=False),
                             2, 3, 7, 7),
    'pool_sum_full': _one(lambda d: sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                              pool_type='sum', pooling_convention='full'),
                          1, 2, 8, 8),
    'pool_lp': _one(lambda d: sym.Pooling(d, kernel=(2, 2), stride=(2, 2), pool_type='lp',
                                        p_value=2), 1, 2, 6, 6),
    'pool_same1d': _one(lambda d: sym.Pooling(d, kernel=(3,), stride=(2,), pool_type='avg',
                                            pooling_convention='same'), 2, 3, 9),
    'pool_1d': _one(lambda d: sym.Pooling(d, kernel=(2,), stride=(2,)), 2, 3, 8),
    'pool_3d': _one(lambda d: sym.Pooling(d, kernel=(2, 2, 2), stride=(2, 2, 2),
                                        pool_type='avg'), 1, 2, 4, 4, 4),
    'global_max': _one(lambda d: sym.Pooling(d, kernel=(1, 1), global_pool=True), 2, 3, 5, 4),
    'global_avg': _one(lambda d: sym.Pooling(d, kernel=(1, 1), global_pool=True,
                                           pool_type='avg'), 2, 3, 5, 4),
    'global_sum': _one(lambda d: sym.Pooling(d, kernel=(1, 1), global_pool=True,
                                           pool_type='sum'), 2, 3, 5, 4),
    'global_lp': _one(lambda d: sym.Pooling(d, kernel=(1, 1), global_pool=True,
                                          pool_type='lp', p_value=2), 2, 3, 5, 4),
    # ---- normalisation
    'bn_fix_gamma': _one(lambda d: sym.BatchNorm(d, name='bn'), 2, 3, 4, 4),
    'bn_gamma': _one(lambda d: sym.BatchNorm(d, fix_gamma=False, eps=1e-5, name='bn'),
                     2, 3, 4, 4),
    'bn_2d': _one(lambda d: sym.BatchNorm(d, fix_gamma=False, name='bn'), 5, 3),
    'bn_last_axis': _one(lambda d: sym.BatchNorm(d, axis=-1, fix_gamma=False, name='bn'),
                         2, 4, 3),
    'instance_norm': _one(lambda d: sym.InstanceNorm(d, name='inorm'), 2, 3, 4, 4),
    'layer_norm': _one(lambda d: sym.LayerNorm(d, name='ln'), 2, 3, 5),
    'layer_norm_axis1': _one(lambda d: sym.LayerNorm(d, axis=1, name='ln'), 2, 3, 5),
    'lrn': _one(lambda d: sym.LRN(d, nsize=3, alpha=0.01, beta=0.75, knorm=2), 2, 5, 4, 4),
    'l2norm_instance': _one(lambda d: sym.L2Normalization(d), 2, 3, 4),
    'l2norm_channel': _one(lambda d: sym.L2Normalization(d, mode='channel'), 2, 3, 4),
    'l2norm_spatial': _one(lambda d: sym.L2Normalization(d, mode='spatial'), 2, 3, 4, 2),
    # ---- activations
    'act_relu': _one(lambda d: sym.Activation(d, act_type='relu'), 3, 4),
    'act_sigmoid': _one(lambda d: sym.Activation(d, act_type='sigmoid'), 3, 4),
    'act_tanh': _one(lambda d: sym.Activation(d, act_type='tanh'), 3, 4),
    'act_softrelu': _one(lambda d: sym.Activation(d, act_type='softrelu'), 3, 4),
    'act_softsign': _one(lambda d: sym.Activation(d, act_type='softsign'), 3, 4),
    'leaky': _one(lambda d: sym.LeakyReLU(d, slope=0.1), 3, 4),
    'elu': _one(lambda d: sym.LeakyReLU(d, act_type='elu', slope=0.5), 3, 4),
    'selu': _one(lambda d: sym.LeakyReLU(d, act_type='selu'), 3, 4),
    'gelu': _one(lambda d: sym.LeakyReLU(d, act_type='gelu'), 3, 4),
    'rrelu': _one(lambda d: sym.LeakyReLU(d, act_type='rrelu', lower_bound=0.1,
                                        upper_bound=0.3), 3, 4),
    'prelu_after_conv': _one(lambda d: sym.LeakyReLU(
        sym.Convolution(d, kernel=(3, 3), num_filter=4, name='conv'), act_type='prelu',
        name='prelu'), 2, 3, 6, 6),
    'prelu_2d': _one(lambda d: sym.LeakyReLU(d, act_type='prelu', name='prelu'), 3, 4),
    'dropout': _one(lambda d: sym.Dropout(d, p=0.3), 3, 4),
}
