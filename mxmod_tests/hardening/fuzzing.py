"""Hypothesis strategies that mutate real files (byte-level for binary formats, structure-aware
for JSON), and the loaders' contracts the fuzz tests assert."""
import json

import numpy as np
from hypothesis import strategies as st

import mxmod as mx
from mxmod.optimizer.pickling import load_states
from mxmod.optimizer.states_check import check_states_match
from mxmod_tests.hardening.common import outcome, real_files, mxnet_states

INTERESTING_INTS = [0, 1, 2, 3, 7, 0x7F, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF,
                    0xF993FAC9, 0x112, 2 ** 40, 2 ** 63 - 1, 2 ** 64 - 1]
INTERESTING_JSON = [-1, 0, 1, 2, 3, 99, 2 ** 31, 2 ** 63, 1.5, True, None, '', 'null', 'x',
                    'FullyConnected', 'SoftmaxOutput', '__lr_mult__', '(3,', '1e999', [], {},
                    [0, 0, 0], [[0, 0, 0]], [0], {'op': 'null', 'name': 'data', 'inputs': []}]
# data shapes for the seeds' infer_shape (by file name prefix)
DATA_SHAPES = {'mlp': (4, 20), 'convnet': (2, 3, 8, 8), 'lstm': (3, 5), 'fit_mlp': (10, 6),
               'mxnet_ckpt': (5, 4)}


def _edit(draw, data):
    """One byte-level mutation of ``data`` (a bytearray), in place."""
    kind = draw(st.sampled_from(['set', 'int', 'truncate', 'insert', 'delete', 'dup']))
    pos = draw(st.integers(0, max(len(data) - 1, 0)))
    if kind == 'set' and data:
        data[pos] = draw(st.integers(0, 255))
    elif kind == 'int':
        width = draw(st.sampled_from([1, 2, 4, 8]))
        value = draw(st.sampled_from(INTERESTING_INTS)) % (1 << (8 * width))
        data[pos:pos + width] = value.to_bytes(width, 'little')
    elif kind == 'truncate':
        del data[pos:]
    elif kind == 'insert':
        data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
    elif kind == 'delete':
        del data[pos:pos + draw(st.integers(1, 16))]
    else:
        data[pos:pos] = data[pos:pos + draw(st.integers(1, 32))]


@st.composite
def mutated_bytes(draw, seeds):
    """(seed name, mutated bytes) from a dict of real files."""
    name = draw(st.sampled_from(sorted(seeds)))
    data = bytearray(seeds[name])
    for _ in range(draw(st.integers(1, 3))):
        _edit(draw, data)
    return name, bytes(data)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, prefix + (i,))


def _replace(doc, path, new, delete):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new


@st.composite
def mutated_json(draw, seeds):
    """(seed name, mutated JSON text): values replaced, keys/items deleted, or bytes edited."""
    name = draw(st.sampled_from(sorted(seeds)))
    if draw(st.integers(0, 4)) == 0:
        data = bytearray(seeds[name])
        _edit(draw, data)
        return name, bytes(data)
    doc = json.loads(seeds[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        new = draw(st.sampled_from(INTERESTING_JSON))
        _replace(doc, path, json.loads(json.dumps(new)), draw(st.booleans()))
    return name, json.dumps(doc).encode()


def json_seeds():
    return real_files('symbol.json')


def params_seeds():
    seeds = real_files('.params')
    from mxmod_tests.conftest import GOLDEN  # pylint: disable=import-outside-toplevel
    import os  # pylint: disable=import-outside-toplevel
    folder = os.path.join(os.path.dirname(GOLDEN), 'ndarray', 'fixtures')
    for name in sorted(os.listdir(folder)):
        if name.endswith('.params'):
            with open(os.path.join(folder, name), 'rb') as handle:
                seeds['nd/' + name] = handle.read()
    return seeds


def states_seeds():
    seeds = real_files('.states')
    picked = mxnet_states()
    for key in ('adam:mp:dump', 'sgd:float32:dump:factor', 'rmsprop:float32:plain',
                'kvstore:dump', 'lamb:float32:dump', 'ftml:mp:plain'):
        seeds[key] = picked[key]
    return seeds


def check_json(name, data):
    """Loading mutated JSON either refuses with an MXNetError or gives a symbol that works."""
    result = []

    def use():
        symbol = mx.sym.load_json(data.decode('utf-8', 'replace'))
        symbol.list_arguments()
        mx.sym.load_json(symbol.tojson())
        shape = next((v for k, v in DATA_SHAPES.items() if name.startswith(k)), None)
        if shape is not None and 'data' in symbol.list_arguments():
            symbol.infer_shape_partial(data=shape)
        result.append(symbol)
    return outcome(use)


def check_params(data):
    """Mutated .params: refused, or arrays that can be read."""
    def use():
        loaded = mx.nd.load_frombuffer(data)
        values = loaded.values() if isinstance(loaded, dict) else loaded
        for arr in values:
            if arr is not None:
                np.asarray(arr.asnumpy()).sum()
    return outcome(use)


def check_states(name, data):
    """Mutated .states: refused, or states that match some weights and drive an update."""
    def use():
        states, optimizer = load_states(data, name)
        optimizer = optimizer or mx.optimizer.create('sgd', momentum=0.9)
        weights = {}
        for key, state in states.items():
            leaf = state
            while isinstance(leaf, (tuple, list)) and leaf:
                leaf = leaf[-1]
            shape = leaf.shape if isinstance(leaf, mx.nd.NDArray) else (2,)
            weights[key] = (str(key), mx.nd.ones(shape))
        try:
            check_states_match(states, weights, optimizer, name)
        except mx.MXNetError:
            return
        updater = mx.optimizer.get_updater(optimizer)
        updater.set_states(data)
        for key, (_, weight) in weights.items():
            updater(key, mx.nd.ones(weight.shape), weight)
    return outcome(use)
