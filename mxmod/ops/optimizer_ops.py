"""MXNet's optimizer update operators (``sgd_update``, ``adam_update``, ``multi_sgd_mom_update``...).

Called as ``mx.nd.sgd_mom_update(weight, grad, mom, out=weight, lr=..., ...)``: the state inputs
(momentum, mean/var, float32 master copies) are updated in place by forward, which returns the
new weight; ``out=weight`` writes it back. The arithmetic lives in :mod:`.optimizer_kernels`."""
from ..base import MXNetError
from . import optimizer_kernels as K
from .base import Operator, Param, register, merge_shape, mx_dim

_LR = {'lr': Param('float')}
_WD = {'wd': Param('float', 0.0)}
_RESCALE = {'rescale_grad': Param('float', 1.0), 'clip_gradient': Param('float', -1.0)}
_LAZY = {'lazy_update': Param('bool', True)}
_MOMENTUM = {'momentum': Param('float', 0.0)}


def _merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


class UpdateOp(Operator):
    """Base of the update operators: every input shares the weight's shape except ``scalars``
    (shape (1,)); inputs listed in ``float32_inputs`` are float32 master copies or states."""
    outputs = ('output',)
    scalars = ()
    float32_inputs = ()
    float32_output = False
    backward_uses = ()
    kernel = None

    def infer_shape(self, in_shapes, out_shapes):
        names = self.list_arguments()
        shape = out_shapes[0] if out_shapes else None
        for name, s in zip(names, in_shapes):
            if name not in self.scalars:
                shape = merge_shape(self.describe(), name, shape, s)
        ins = [(1,) if n in self.scalars else shape for n in names]
        return ins, [shape] * len(self.list_outputs())

    def infer_type(self, in_types, out_types):
        names = self.list_arguments()
        weight_type = in_types[0] or next((t for n, t in zip(names, in_types)
                                           if t and n not in self.float32_inputs), None)
        ins = ['float32' if n in self.float32_inputs else (t or weight_type)
               for n, t in zip(names, in_types)]
        out = 'float32' if self.float32_output else weight_type
        return ins, [out] * len(self.list_outputs())

    def kernel_params(self):
        """The parameters handed to the kernel (all of them by default)."""
        return dict(vars(self.p))

    def forward(self, octx, inputs, aux):
        params = self.kernel_params()
        params.pop('lazy_update', None)
        return [type(self).kernel(octx.xp, *inputs, **params)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        raise MXNetError('%s is an optimizer update and has no gradient' % self.op_name)


def _update_op(name, kernel, arguments, params, **extra):
    attrs = {'op_name': name, 'arguments': tuple(arguments), 'params': params,
             'kernel': staticmethod(kernel)}
    attrs.update(extra)
    return register(type(name, (UpdateOp,), attrs))


_SGD = _merge(_LR, _WD, _RESCALE, _LAZY)
_SGD_MOM = _merge(_LR, _MOMENTUM, _WD, _RESCALE, _LAZY)
_NAG = _merge(_LR, _MOMENTUM, _WD, _RESCALE)
_update_op('sgd_update', K.sgd, ('weight', 'grad'), _SGD)
_update_op('sgd_mom_update', K.sgd_mom, ('weight', 'grad', 'mom'), _SGD_MOM)
_update_op('mp_sgd_update', K.mp_sgd, ('weight', 'grad', 'weight32'), _SGD,
           float32_inputs=('weight32',))
_update_op('mp_sgd_mom_update', K.mp_sgd_mom, ('weight', 'grad', 'mom', 'weight32'), _SGD_MOM,
           float32_inputs=('mom', 'weight32'))
_update_op('nag_mom_update', K.nag_mom, ('weight', 'grad', 'mom'), _NAG)
_update_op('mp_nag_mom_update', K.mp_nag_mom, ('weight', 'grad', 'mom', 'weight32'), _NAG,
           float32_inputs=('mom', 'weight32'))
_update_op('adam_update', K.adam, ('weight', 'grad', 'mean', 'var'),
           _merge(_LR, {'beta1': Param('float', 0.9), 'beta2': Param('float', 0.999),
                        'epsilon': Param('float', 1e-8)}, _WD, _RESCALE, _LAZY))
_RMS = {'gamma1': Param('float', 0.95), 'epsilon': Param('float', 1e-8)}
_CLIP_W = {'clip_weights': Param('float', -1.0)}
_update_op('rmsprop_update', K.rmsprop, ('weight', 'grad', 'n'),
           _merge(_LR, _RMS, _WD, _RESCALE, _CLIP_W))
_update_op('rmspropalex_update', K.rmspropalex, ('weight', 'grad', 'n', 'g', 'delta'),
           _merge(_LR, _RMS, {'gamma2': Param('float', 0.9)}, _WD, _RESCALE, _CLIP_W))
_update_op('ftrl_update', K.ftrl, ('weight', 'grad', 'z', 'n'),
           _merge(_LR, {'lamda1': Param('float', 0.01), 'beta': Param('float', 1.0)}, _WD,
                  _RESCALE))
_update_op('ftml_update', K.ftml, ('weight', 'grad', 'd', 'v', 'z'),
           _merge(_LR, {'beta1': Param('float', 0.6), 'beta2': Param('float', 0.999),
                        'epsilon': Param('float', 1e-8), 't': Param('int')}, _WD,
                  {'rescale_grad': Param('float', 1.0), 'clip_grad': Param('float', -1.0)}))
_update_op('signsgd_update', K.signsgd, ('weight', 'grad'), _merge(_LR, _WD, _RESCALE))
_update_op('signum_update', K.signum, ('weight', 'grad', 'mom'),
           _merge(_LR, _MOMENTUM, _WD, _RESCALE, {'wd_lh': Param('float', 0.0)}))

_LAMB1 = {'beta1': Param('float', 0.9), 'beta2': Param('float', 0.999),
          'epsilon': Param('float', 1e-6), 't': Param('int'),
          'bias_correction': Param('bool', True), 'wd': Param('float'),
          'rescale_grad': Param('float', 1.0), 'clip_gradient': Param('float', -1.0)}
_LAMB2 = {'lr': Param('float'), 'lower_bound': Param('float', -1.0),
          'upper_bound': Param('float', -1.0)}
def _lamb_phase2_infer(self, in_shapes, out_shapes):
    """MXNet's lamb phase-2 inference: weight, g (and weight32) of one rank and equal dims (an
    unknown dim equals only an unknown dim), r1 and r2 of first dim 1; the output is weight's."""
    names = self.list_arguments()
    weight = in_shapes[0]
    for name in ('g', 'weight32')[:len(names) - 3]:
        other = in_shapes[names.index(name)]
        if (weight is None) != (other is None) or (weight is not None and (
                len(weight) != len(other) or [mx_dim(d) for d in weight] != [mx_dim(d) for d in
                                                                          other])):
            raise MXNetError('%s: weight %s and %s %s must have equal shapes'
                             % (self.op_name, weight, name, other))
    for name in ('r1', 'r2'):
        shape = in_shapes[names.index(name)]
        if not shape or shape[0] != 1:
            raise MXNetError('%s: %s must be of shape (1,), got %s'
                             % (self.op_name, name, 'an unknown shape' if shape is None else shape))
    return list(in_shapes), [weight] if weight is not None else list(out_shapes)


_update_op('lamb_update_phase1', K.lamb_phase1, ('weight', 'grad', 'mean', 'var'), _LAMB1)
_update_op('lamb_update_phase2', K.lamb_phase2, ('weight', 'g', 'r1', 'r2'), _LAMB2,
           scalars=('r1', 'r2'), infer_shape=_lamb_phase2_infer)
_update_op('mp_lamb_update_phase1', K.mp_lamb_phase1, ('weight', 'grad', 'mean', 'var', 'weight32'),
           _LAMB1, float32_inputs=('mean', 'var', 'weight32'), float32_output=True)
_update_op('mp_lamb_update_phase2', K.mp_lamb_phase2, ('weight', 'g', 'r1', 'r2', 'weight32'),
           _LAMB2, scalars=('r1', 'r2'), float32_inputs=('g', 'r1', 'r2', 'weight32'),
           infer_shape=_lamb_phase2_infer)


class MultiSGDOp(UpdateOp):
    """Base of ``multi_sgd_update`` and friends: ``num_weights`` groups of inputs, one output each.

    Each group is ``weight, grad[, mom][, weight32]`` (``group`` names the members)."""
    group = ('weight', 'grad')
    mp_members = ()
    params = {'lrs': Param('floats'), 'wds': Param('floats'),
              'rescale_grad': Param('float', 1.0), 'clip_gradient': Param('float', -1.0),
              'num_weights': Param('int', 1)}

    def setup(self):
        count = self.p.num_weights
        if len(self.p.lrs) != count or len(self.p.wds) != count:
            raise MXNetError('%s: lrs (%d values) and wds (%d values) must both have num_weights'
                             ' = %d values' % (self.op_name, len(self.p.lrs), len(self.p.wds),
                                               count))

    def list_arguments(self):
        return ['%s_%d' % (n, i) for i in range(self.p.num_weights) for n in self.group]

    def list_outputs(self):
        return ['output_%d' % i for i in range(self.p.num_weights)]

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: each group's shapes must agree, but MXNet merges them on copies, so
        # nothing is inferred
        width = len(self.group)
        for i in range(self.p.num_weights):
            shape = out_shapes[i] if out_shapes else None
            for j in range(width):
                shape = merge_shape(self.describe(), self.list_arguments()[i * width + j],
                                    shape, in_shapes[i * width + j])
        return list(in_shapes), list(out_shapes)

    def infer_type(self, in_types, out_types):
        width = len(self.group)
        ins, outs = [], []
        for i in range(self.p.num_weights):
            wtype = in_types[i * width] or in_types[i * width + 1]
            ins += ['float32' if n in self.mp_members else wtype for n in self.group]
            outs.append(wtype)
        return ins, outs

    def forward(self, octx, inputs, aux):
        width = len(self.group)
        momentum = getattr(self.p, 'momentum', 0.0)
        results = []
        for i in range(self.p.num_weights):
            members = dict(zip(self.group, inputs[i * width:(i + 1) * width]))
            results.append(K.multi_sgd(
                octx.xp, members['weight'], members['grad'], members.get('mom'),
                members.get('weight32'), self.p.lrs[i], self.p.wds[i], momentum,
                self.p.rescale_grad, self.p.clip_gradient))
        return results


def _multi_op(name, group, momentum):
    params = dict(MultiSGDOp.params)
    if momentum:
        params['momentum'] = Param('float', 0.0)
    attrs = {'op_name': name, 'group': group, 'params': params,
             'mp_members': tuple(n for n in group if n in ('mom', 'weight32'))
             if 'weight32' in group else ()}
    return register(type(name, (MultiSGDOp,), attrs))


_multi_op('multi_sgd_update', ('weight', 'grad'), False)
_multi_op('multi_sgd_mom_update', ('weight', 'grad', 'mom'), True)
_multi_op('multi_mp_sgd_update', ('weight', 'grad', 'weight32'), False)
_multi_op('multi_mp_sgd_mom_update', ('weight', 'grad', 'mom', 'weight32'), True)

