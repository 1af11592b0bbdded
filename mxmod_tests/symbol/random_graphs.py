"""Random graphs for comparing shape/type inference implementations: a mix of elementwise,
broadcast, FullyConnected, Concat, Reshape, SliceChannel, sum and transpose nodes over
variables whose true shapes are tracked, and the partial knowledge (whole shapes, shapes with
unknown dimensions, nothing, now and then a wrong dimension) handed to inference."""
import numpy as np

import mxmod as mx


class _Builder(object):
    def __init__(self, rng):
        self.rng = rng
        self.values = []        # (symbol, true shape)
        self.variables = {}     # name -> true shape

    def var(self, shape):
        name = 'v%d' % len(self.variables)
        self.variables[name] = tuple(shape)
        return mx.sym.Variable(name)

    def pick(self, want=None):
        choices = [v for v in self.values if want is None or want(v[1])]
        return choices[self.rng.randint(len(choices))] if choices else None

    def add(self, sym, shape):
        self.values.append((sym, tuple(shape)))

    def step(self):
        """Apply one randomly chosen operator to existing values."""
        kind = self.rng.randint(9)
        sym, shape = self.pick()
        if kind == 0:
            act = ('relu', 'tanh', 'sigmoid')[self.rng.randint(3)]
            self.add(mx.sym.Activation(sym, act_type=act), shape)
        elif kind == 1:
            other = self.pick(lambda s: s == shape)
            other = other[0] if other is not None and self.rng.rand() < 0.5 else self.var(shape)
            fn = (mx.sym.elemwise_add, mx.sym.elemwise_mul)[self.rng.randint(2)]
            self.add(fn(sym, other), shape)
        elif kind == 2:
            bshape = tuple(1 if self.rng.rand() < 0.5 else d for d in shape)
            self.add(mx.sym.broadcast_add(sym, self.var(bshape)), shape)
        elif kind == 3 and len(shape) == 2:
            hidden = int(self.rng.randint(1, 6))
            self.add(mx.sym.FullyConnected(sym, num_hidden=hidden), (shape[0], hidden))
        elif kind == 4 and len(shape) >= 2:
            width = int(self.rng.randint(1, 4))
            part = shape[:1] + (width,) + shape[2:]
            self.add(mx.sym.Concat(sym, self.var(part), dim=1),
                     shape[:1] + (shape[1] + width,) + shape[2:])
        elif kind == 5 and len(shape) >= 2:
            self.add(mx.sym.Reshape(sym, shape=(0, -1)), (shape[0], int(np.prod(shape[1:]))))
        elif kind == 6 and len(shape) >= 2 and shape[1] % 2 == 0:
            halves = mx.sym.SliceChannel(sym, num_outputs=2, axis=1)
            half = shape[:1] + (shape[1] // 2,) + shape[2:]
            self.add(halves[0], half)
            self.add(halves[1], half)
        elif kind == 7 and len(shape) >= 2:
            self.add(mx.sym.sum(sym, axis=1, keepdims=True), shape[:1] + (1,) + shape[2:])
        elif kind == 8 and len(shape) >= 2:
            self.add(mx.sym.transpose(sym), shape[::-1])


def random_graph(seed, size=12):
    """``(symbol, true variable shapes)`` of a random graph of about ``size`` operators."""
    rng = np.random.RandomState(seed)
    builder = _Builder(rng)
    for _ in range(int(rng.randint(1, 3))):
        ndim = int(rng.randint(2, 4))
        shape = tuple(int(d) for d in rng.randint(1, 5, size=ndim) * 2)
        builder.add(builder.var(shape), shape)
    with mx.name.NameManager():
        for _ in range(size):
            builder.step()
    count = int(rng.randint(1, 4))
    heads = [sym for sym, _ in builder.values[-count:]]
    return mx.sym.Group(heads), builder.variables


def partial_knowledge(seed, variables):
    """What inference is told of ``variables``' shapes: for each, its shape, the shape with some
    dimensions unknown (0), nothing, or (rarely) the shape with one dimension wrong."""
    rng = np.random.RandomState(seed + 1000)
    known = {}
    for name, shape in sorted(variables.items()):
        draw = rng.rand()
        if draw < 0.35:
            known[name] = shape
        elif draw < 0.6:
            known[name] = tuple(0 if rng.rand() < 0.5 else d for d in shape)
        elif draw < 0.95:
            continue
        else:
            axis = int(rng.randint(len(shape)))
            known[name] = shape[:axis] + (shape[axis] + 1,) + shape[axis + 1:]
    return known


def type_knowledge(seed, variables):
    """Dtypes told to type inference: float32 for some variables, now and then float16."""
    rng = np.random.RandomState(seed + 2000)
    known = {}
    for name in sorted(variables):
        draw = rng.rand()
        if draw < 0.3:
            known[name] = 'float32'
        elif draw < 0.35:
            known[name] = 'float16'
    return known
