"""UpSampling: nearest-neighbour (one or more inputs, concatenated or summed) and bilinear (a
grouped Deconvolution with a learnable ``weight``), NCHW only as in MXNet."""
from ..base import MXNetError
from .base import mx_dim, Operator, Param, register, merge_shape
from .conv import Deconvolution

__all__ = ['UpSampling']


@register
class UpSampling(Operator):
    """Upsample by an integer ``scale``.

    'nearest': every input (``arg0``..``arg{num_args-1}``, NCHW) is repeated up to ``scale`` times
    the first input's size; results are concatenated on the channel axis or summed
    (``multi_input_mode``). 'bilinear': Deconvolution of ``data`` with ``weight``
    (C, 1, k, k), k = 2*scale - scale%2, stride = scale, pad = ceil((scale-1)/2), one group per
    channel."""
    op_name = 'UpSampling'
    params = {'scale': Param('int'), 'num_filter': Param('int', 0),
              'sample_type': Param('str', choices=('nearest', 'bilinear')),
              'multi_input_mode': Param('str', 'concat', choices=('concat', 'sum')),
              'num_args': Param('int'), 'workspace': Param('int', 512)}
    mirror_cheap = True
    backward_uses = ('inputs',)

    def input_var_attrs(self):
        return {'weight': {'__init__': '["bilinear", {}]'}}

    def setup(self):
        p = self.p
        if p.scale < 1 or p.num_args < 1:
            raise MXNetError('UpSampling: scale and num_args must be >= 1, got %d and %d'
                             % (p.scale, p.num_args))
        self.bilinear = p.sample_type == 'bilinear'
        self._deconvs = {}

    def _deconv(self, channels):
        """The Deconvolution that bilinear upsampling of ``channels`` channels amounts to."""
        op = self._deconvs.get(channels)
        if op is None:
            if self.p.num_filter and self.p.num_filter != channels:
                raise MXNetError('UpSampling: num_filter=%d but the data has %d channels'
                                 % (self.p.num_filter, channels))
            s = self.p.scale
            op = self._deconvs[channels] = Deconvolution({
                'kernel': (2 * s - s % 2,) * 2, 'stride': (s, s), 'pad': (s // 2,) * 2,
                'num_filter': channels, 'num_group': channels, 'no_bias': True})
        return op

    def list_arguments(self):
        if self.bilinear:
            return ['data', 'weight']
        return ['arg%d' % i for i in range(self.p.num_args)]

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from the inputs forwards; every input's rank must be known (4)
        ins = list(in_shapes)
        for i, shp in enumerate(ins if not self.bilinear else ins[:1]):
            if shp is None or len(shp) != 4:
                raise MXNetError('UpSampling: input %d should be 4-D (batch, channel, y, x), got '
                                 '%s' % (i, 'an unknown shape' if shp is None else (shp,)))
        first, s = ins[0], self.p.scale
        if self.bilinear:
            if 0 in first:
                return ins, list(out_shapes)
            k = 2 * s - s % 2
            ins[1] = merge_shape(self.op_name, 'weight', ins[1], (first[1], 1, k, k))
            chans = first[1]
        else:
            if not first[2] or not first[3]:    # MXNet's output size would be -2
                raise MXNetError('UpSampling: the spatial size of input 0 must be known, got %s'
                                 % (first,))
            chans = self._out_channels(ins, first[2] * s, first[3] * s)
        out = (first[0], chans, first[2] * s, first[3] * s)
        return ins, [merge_shape(self.op_name, 'output', out_shapes[0], out)]

    def _out_channels(self, shapes, oh, ow):
        """The output's channels: their sum ('concat') or their common number ('sum'); 0 when
        unknown. An unknown channel count equals only an unknown one, as in MXNet."""
        chans = None
        for i, shp in enumerate(shapes):
            if shp[2] and oh % shp[2] or shp[3] and ow % shp[3]:
                raise MXNetError('UpSampling: input %d size %s does not divide the output size %s'
                                 % (i, tuple(shp[2:]), (oh, ow)))
            if self.p.multi_input_mode == 'sum':
                if chans is not None and mx_dim(shp[1]) != mx_dim(chans):
                    raise MXNetError('UpSampling: number of channels must be the same when '
                                     'multi_input_mode=sum, got %d and %d' % (chans, shp[1]))
                chans = shp[1]
            else:
                chans = (chans or 0) + shp[1] if shp[1] and chans != 0 else 0
        return chans

    def _factors(self, inputs):
        oh, ow = inputs[0].shape[2] * self.p.scale, inputs[0].shape[3] * self.p.scale
        return [(oh // x.shape[2], ow // x.shape[3]) for x in inputs]

    def forward(self, octx, inputs, aux):
        if self.bilinear:
            return self._deconv(inputs[0].shape[1]).forward(octx, inputs, aux)
        xp = octx.xp
        ups = [xp.repeat(xp.repeat(x, fh, axis=2), fw, axis=3)
               for x, (fh, fw) in zip(inputs, self._factors(inputs))]
        if self.p.multi_input_mode == 'sum':
            out = ups[0].copy()
            for u in ups[1:]:
                out += u
            return [out]
        return [xp.concatenate(ups, axis=1)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        if self.bilinear:
            return self._deconv(inputs[0].shape[1]).backward(octx, out_grads, inputs, outputs, aux)
        dy = out_grads[0]
        grads, start = [], 0
        for x, (fh, fw) in zip(inputs, self._factors(inputs)):
            n, c, h, w = x.shape
            part = dy if self.p.multi_input_mode == 'sum' else dy[:, start:start + c]
            start += c
            grads.append(part.reshape(n, c, h, fh, w, fw).sum(axis=(3, 5)))
        return grads
