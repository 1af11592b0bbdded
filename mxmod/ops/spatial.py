"""Spatial transformer operators: GridGenerator, BilinearSampler, SpatialTransformer, and the
legacy Crop.

Sampling grids hold normalised source coordinates in [-1, 1] (x in channel 0, y in channel 1);
the sampler reads ``data`` bilinearly at ``((x + 1) (W - 1) / 2, (y + 1) (H - 1) / 2)`` with zeros
outside the image, as MXNet does, and its gradient goes to the data (scattered to the four
neighbours) and to the grid. MXNet's scratch outputs (grid_dst, tmp) are not exposed."""
from ..base import MXNetError
from .base import Operator, Param, register, merge_shape


# ---- bilinear sampling ------------------------------------------------------------------------
def _corners(xp, gx, gy, height, width):
    """The four neighbours of each sampling point: (flat index, in-bounds mask, weight), plus
    the fractional weights (wx, wy) of the top-left corner."""
    x = (gx + 1) * ((width - 1) / 2)
    y = (gy + 1) * ((height - 1) / 2)
    x0, y0 = xp.floor(x), xp.floor(y)
    wx, wy = 1 - (x - x0), 1 - (y - y0)
    x0, y0 = x0.astype('int64'), y0.astype('int64')
    out = []
    for dy, dx, weight in ((0, 0, wy * wx), (0, 1, wy * (1 - wx)), (1, 0, (1 - wy) * wx),
                           (1, 1, (1 - wy) * (1 - wx))):
        yy, xx = y0 + dy, x0 + dx
        inside = (xx >= 0) & (xx < width) & (yy >= 0) & (yy < height)
        index = xp.clip(yy, 0, height - 1) * width + xp.clip(xx, 0, width - 1)
        out.append((index, inside, weight))
    return out, wx, wy


def _gather(xp, flat, index, inside):
    """``flat`` (N, C, HW) read at ``index`` (N, L); zero where not ``inside``."""
    return xp.take_along_axis(flat, index[:, None, :], axis=2) * inside[:, None, :]


def bilinear_sample(xp, data, gx, gy):
    """Sample ``data`` (N, C, H, W) at the normalised points ``gx``, ``gy`` (N, L): (N, C, L)."""
    n, c, h, w = data.shape
    flat = data.reshape(n, c, h * w)
    corners, _, _ = _corners(xp, gx, gy, h, w)
    out = 0
    for index, inside, weight in corners:
        out = out + _gather(xp, flat, index, inside) * weight[:, None, :]
    return out.astype(data.dtype, copy=False)


def bilinear_sample_grad(xp, data, gx, gy, dy):
    """Gradients (data, gx, gy) of :func:`bilinear_sample` for the head ``dy`` (N, C, L)."""
    n, c, h, w = data.shape
    flat = data.reshape(n, c, h * w)
    corners, wx, wy = _corners(xp, gx, gy, h, w)
    (i00, m00, w00), (i01, m01, w01), (i10, m10, w10), (i11, m11, w11) = corners
    base = (xp.arange(n)[:, None, None] * c + xp.arange(c)[None, :, None]) * (h * w)
    targets = xp.concatenate([(base + i[:, None, :]).reshape(-1) for i in (i00, i01, i10, i11)])
    weights = xp.concatenate([(dy * (wt * m)[:, None, :]).reshape(-1)
                              for wt, m in ((w00, m00), (w01, m01), (w10, m10), (w11, m11))])
    ddata = xp.bincount(targets, weights=weights, minlength=n * c * h * w)
    v00, v01, v10, v11 = (_gather(xp, flat, i, m) for i, m in ((i00, m00), (i01, m01),
                                                               (i10, m10), (i11, m11)))
    cross = v00 - v01 - v10 + v11
    gwy = -(dy * (v01 - v11 + cross * wx[:, None, :])).sum(axis=1)
    gwx = -(dy * (v10 - v11 + cross * wy[:, None, :])).sum(axis=1)
    return (ddata.reshape(data.shape).astype(data.dtype, copy=False),
            (gwx * ((w - 1) / 2)).astype(data.dtype, copy=False),
            (gwy * ((h - 1) / 2)).astype(data.dtype, copy=False))


def _check_4d(op, name, shape):
    if shape is not None and len(shape) != 4:
        raise MXNetError('%s: %s must be 4-D (batch, channel, y, x), got shape %s'
                         % (op, name, tuple(shape)))


@register
class BilinearSampler(Operator):
    """Sample ``data`` (N, C, H, W) at ``grid`` (N, 2, H', W'): output (N, C, H', W')."""
    op_name = 'BilinearSampler'
    arguments = ('data', 'grid')
    params = {'cudnn_off': Param('bool?', None)}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: once data and grid are fully known, forwards only
        data, grid = in_shapes
        if data is None or 0 in data:
            return in_shapes, out_shapes
        _check_4d(self.op_name, 'data', data)
        if grid is None or 0 in grid:
            return in_shapes, out_shapes
        _check_4d(self.op_name, 'grid', grid)
        if grid[1] != 2 or grid[0] != data[0]:
            raise MXNetError('BilinearSampler: grid must be (batch, 2, y, x) with data\'s batch, '
                             'got %s for data %s' % (tuple(grid), tuple(data)))
        out = (data[0], data[1], grid[2], grid[3])
        return [data, grid], [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        data, grid = inputs
        n, _, ho, wo = grid.shape
        g = grid.reshape(n, 2, ho * wo)
        out = bilinear_sample(octx.xp, data, g[:, 0], g[:, 1])
        return [out.reshape(data.shape[:2] + (ho, wo))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        data, grid = inputs
        n, _, ho, wo = grid.shape
        g = grid.reshape(n, 2, ho * wo)
        dy = out_grads[0].reshape(data.shape[:2] + (ho * wo,))
        ddata, gx, gy = bilinear_sample_grad(octx.xp, data, g[:, 0], g[:, 1], dy)
        return [ddata, octx.xp.stack([gx, gy], axis=1).reshape(grid.shape)]


def target_points(xp, height, width, dtype):
    """The (3, H*W) homogeneous normalised target coordinates (x, y, 1), row by row."""
    k = xp.arange(height * width)
    x = -1.0 + (k % width) * (2.0 / (width - 1) if width > 1 else float('inf'))
    y = -1.0 + (k // width) * (2.0 / (height - 1) if height > 1 else float('inf'))
    return xp.stack([x, y, xp.ones(height * width)]).astype(dtype)


def _target(op, shape):
    if len(shape) != 2 or min(shape) <= 0:
        raise MXNetError('%s: target_shape must be two positive sizes (H, W), got %s'
                         % (op, shape))
    return shape


@register
class GridGenerator(Operator):
    """A sampling grid: ``affine`` maps each (N, 6) affine matrix over the ``target_shape``
    target points; ``warp`` adds an (N, 2, H, W) flow to the pixel coordinates."""
    op_name = 'GridGenerator'
    params = {'transform_type': Param('str', choices=('affine', 'warp')),
              'target_shape': Param('shape', (0, 0))}

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:    # MXNet checks the rank of an unknown shape, and fails
            raise MXNetError('GridGenerator: the shape of data must be known')
        if self.p.transform_type == 'affine':
            if len(data) != 2 or data[1] != 6:
                raise MXNetError('GridGenerator: affine data must be (batch, 6), got %s'
                                 % (tuple(data),))
            h, w = _target(self.op_name, self.p.target_shape)
            out = (data[0], 2, h, w)
        else:
            if len(data) != 4 or data[1] != 2:
                raise MXNetError('GridGenerator: warp data must be a (batch, 2, y, x) flow, got %s'
                                 % (tuple(data),))
            out = tuple(data)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        xp, data = octx.xp, inputs[0]
        if self.p.transform_type == 'affine':
            h, w = _target(self.op_name, self.p.target_shape)
            theta = data.reshape(-1, 2, 3)
            return [xp.matmul(theta, target_points(xp, h, w, data.dtype)).reshape(-1, 2, h, w)]
        n, _, h, w = data.shape
        pixels = target_points(xp, h, w, data.dtype)[:2].reshape(1, 2, h, w)
        pixels = (pixels + 1) * self._half(xp, h, w, data.dtype)
        return [(data + pixels) / self._half(xp, h, w, data.dtype) - 1]

    @staticmethod
    def _half(xp, h, w, dtype):
        return xp.asarray([(w - 1) / 2.0, (h - 1) / 2.0], dtype=dtype).reshape(1, 2, 1, 1)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, dy = octx.xp, out_grads[0]
        if self.p.transform_type == 'affine':
            h, w = self.p.target_shape
            dtheta = xp.matmul(dy.reshape(-1, 2, h * w), target_points(xp, h, w, dy.dtype).T)
            return [dtheta.reshape(-1, 6)]
        return [dy / self._half(xp, dy.shape[2], dy.shape[3], dy.dtype)]


@register
class SpatialTransformer(Operator):
    """Warp ``data`` by the affine transforms ``loc`` (N, 6) onto a ``target_shape`` grid with
    bilinear sampling (GridGenerator + BilinearSampler in one operator)."""
    op_name = 'SpatialTransformer'
    arguments = ('data', 'loc')
    params = {'target_shape': Param('shape', (0, 0)),
              'transform_type': Param('str', choices=('affine',)),
              'sampler_type': Param('str', choices=('bilinear',)),
              'cudnn_off': Param('bool?', None)}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: once data and loc are fully known, forwards only
        data, loc = in_shapes
        if data is None or 0 in data:
            return in_shapes, out_shapes
        _check_4d(self.op_name, 'data', data)
        if loc is None or 0 in loc:
            return in_shapes, out_shapes
        if len(loc) != 2 or loc[1] != 6:
            raise MXNetError('SpatialTransformer: loc must be (batch, 6), got %s' % (tuple(loc),))
        h, w = _target(self.op_name, self.p.target_shape)
        out = (data[0], data[1], h, w)
        return [data, loc], [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _grid(self, xp, loc):
        h, w = self.p.target_shape
        points = target_points(xp, h, w, loc.dtype)
        return xp.matmul(loc.reshape(-1, 2, 3), points), points

    def forward(self, octx, inputs, aux):
        data, loc = inputs
        grid, _ = self._grid(octx.xp, loc)
        out = bilinear_sample(octx.xp, data, grid[:, 0], grid[:, 1])
        return [out.reshape(data.shape[:2] + tuple(self.p.target_shape))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (data, loc) = octx.xp, inputs
        grid, points = self._grid(xp, loc)
        dy = out_grads[0].reshape(data.shape[:2] + (-1,))
        ddata, gx, gy = bilinear_sample_grad(xp, data, grid[:, 0], grid[:, 1], dy)
        dloc = xp.matmul(xp.stack([gx, gy], axis=1), points.T)
        return [ddata, dloc.reshape(loc.shape)]


@register
class Crop(Operator):
    """Crop the (N, C, H, W) ``arg0`` to ``h_w`` or, with two inputs, to the height and width of
    ``arg1``, at ``offset`` (y, x) or centred (``center_crop``). ``arg1`` gets a zero gradient."""
    op_name = 'Crop'
    params = {'num_args': Param('int'), 'offset': Param('shape', (0, 0)),
              'h_w': Param('shape', (0, 0)), 'center_crop': Param('bool', False)}
    backward_uses = ()

    def setup(self):
        if self.p.num_args not in (1, 2):
            raise MXNetError('Crop: num_args must be 1 or 2, got %d' % self.p.num_args)

    def list_arguments(self):
        return ['arg%d' % i for i in range(self.p.num_args)]

    def _size(self, data, like):
        if self.p.num_args == 2:
            if like is None or len(like) < 4:   # MXNet reads dims 2 and 3 of crop_like
                raise MXNetError('Crop: crop_like must be 4-D, got %s' % (like,))
            return tuple(like[2:4])
        h, w = self.p.h_w
        if not (1 <= h <= data[2] and 1 <= w <= data[3]):
            raise MXNetError('Crop: h_w %s must be between 1 and the input size %s'
                             % (self.p.h_w, tuple(data[2:])))
        return (h, w)

    def _offset(self, data, size):
        room = (data[2] - size[0], data[3] - size[1])
        if min(room) < 0:
            raise MXNetError('Crop: the crop %s is larger than the input %s'
                             % (size, tuple(data[2:])))
        if self.p.center_crop:
            return room[0] // 2, room[1] // 2
        oy, ox = self.p.offset
        if not (0 <= oy <= room[0] and 0 <= ox <= room[1]):
            raise MXNetError('Crop: offset %s does not fit a %s crop of %s'
                             % (self.p.offset, size, tuple(data[2:])))
        return oy, ox

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or len(data) != 4:
            raise MXNetError('Crop: input data must be 4-D (batch, channel, y, x), got %s'
                             % ('an unknown shape' if data is None else tuple(data),))
        size = self._size(data, in_shapes[1] if self.p.num_args == 2 else None)
        if size is None:
            return in_shapes, out_shapes
        return in_shapes, [merge_shape(self.op_name, 'output', tuple(data[:2]) + size,
                                       out_shapes[0])]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        size = self._size(x.shape, inputs[1].shape if self.p.num_args == 2 else None)
        oy, ox = self._offset(x.shape, size)
        octx.saved['meta'] = [(tuple(a.shape), a.dtype) for a in inputs]
        return [x[:, :, oy:oy + size[0], ox:ox + size[1]].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, dy = octx.xp, out_grads[0]
        meta = octx.saved['meta']
        grad = xp.zeros(meta[0][0], dtype=meta[0][1])
        oy, ox = self._offset(meta[0][0], dy.shape[2:])
        grad[:, :, oy:oy + dy.shape[2], ox:ox + dy.shape[3]] = dy
        return [grad] + [xp.zeros(shape, dtype=dtype) for shape, dtype in meta[1:]]
