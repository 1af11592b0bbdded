"""The .states loader: every pickle MXNet 1.9.1 writes loads (all optimizers, multi-precision,
dump_optimizer, schedulers, kvstore updaters); pickles that name anything else are refused before
it runs; states of another network are refused at load, naming the parameter."""
import io
import json
import os
import pickle
import struct

import numpy as np
import pytest

import mxmod as mx
from mxmod.optimizer.pickling import load_states, loads
from mxmod.optimizer.states_check import check_states_match
from mxmod_tests.hardening.common import (mxnet_states, trained_module, FIXTURES, cpus,
                                          mlp_sym)

LAYOUTS = np.load(os.path.join(FIXTURES, 'mxnet_states.npz'))


@pytest.mark.parametrize('key', sorted(k for k in mxnet_states() if not k.startswith('kv')))
def test_every_mxnet_optimizer_pickle_loads_and_matches_its_weights(key):
    states, optimizer = load_states(mxnet_states()[key], key)
    assert (optimizer is not None) == (':dump' in key)
    name, variant = key.split(':')[:2]
    shapes, dtype = json.loads(LAYOUTS['layout:' + key].tobytes())
    if optimizer is None:
        optimizer = mx.optimizer.create(name, multi_precision=variant == 'mp')
    else:
        assert type(optimizer).__name__.lower() == name
        assert optimizer.num_update == (0 if name == 'test' else 3)  # MXNet's Test never counts
        assert (optimizer.lr_scheduler is not None) == (len(key.split(':')) == 4)
    weights = {i: ('w%d' % i, mx.nd.zeros(tuple(s), dtype=dtype)) for i, s in enumerate(shapes)}
    check_states_match(states, weights, optimizer, key)
    updater = mx.optimizer.get_updater(optimizer)
    updater.set_states(mxnet_states()[key])
    for i, (_, weight) in weights.items():    # the loaded states drive a real update
        updater(i, mx.nd.ones(weight.shape, dtype=dtype), weight)


def test_kvstore_pickles_load_with_name_keys():
    for key in ('kvstore:plain', 'kvstore:dump'):
        states, optimizer = load_states(mxnet_states()[key], key)
        assert sorted(states) == ['fc_bias', 'fc_weight']
        assert (optimizer is not None) == key.endswith('dump')


class _Evil(object):
    def __init__(self, call, args):
        self.call, self.args = call, args

    def __reduce__(self):
        return (self.call, self.args)


def _evil_pickles(marker):
    touch = ('touch %s' % marker,)
    payloads = [_Evil(os.system, touch), _Evil(eval, ('open(%r, "w")' % marker,)),
                _Evil(getattr, ('abc', 'upper'))]
    blobs = []
    for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
        for payload in payloads:
            blobs.append(pickle.dumps({0: payload}, protocol=proto))
            blobs.append(pickle.dumps(({}, payload), protocol=proto))
    # names under mxnet.* that are not optimizers, schedulers or NDArray
    blobs.append(b'\x80\x04cmxnet.atomic_io\nwrite_file_atomic\n(X\x01\x00\x00\x00aX\x01\x00\x00'
                 b'\x00bt\x85R.')
    blobs.append(b'cposix\nsystem\n(S"touch %s"\ntR.' % marker.encode())
    blobs.append(b'csubprocess\ncheck_output\n((S"touch"\nS"%s"\nltR.' % marker.encode())
    return blobs


def test_pickles_naming_other_callables_are_refused_before_running(tmp_path):
    marker = str(tmp_path / 'pwned')
    for blob in _evil_pickles(marker):
        with pytest.raises(mx.MXNetError, match='not allowed|Invalid optimizer states'):
            loads(blob, 'evil.states')
        assert not os.path.exists(marker)


def test_module_load_refuses_malicious_states_file(tmp_path):
    mod = trained_module()
    prefix = str(tmp_path / 'net')
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    marker = str(tmp_path / 'pwned')
    with open(prefix + '-0001.states', 'wb') as handle:
        handle.write(pickle.dumps({0: _Evil(os.system, ('touch %s' % marker,))}))
    os.remove(prefix + '-0001.manifest.json')     # an unverified (MXNet-style) checkpoint
    with pytest.raises(mx.MXNetError, match=r'net-0001\.states.*posix\.system|'
                                            r'net-0001\.states.*os\.system'):
        mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    assert not os.path.exists(marker)


@pytest.mark.parametrize('blob, what', [
    (b'\x80\x04\x8e' + struct.pack('<Q', 2 ** 50) + b'x.', 'not a valid pickle'),
    (b'\x80\x04\x96' + struct.pack('<Q', 2 ** 50) + b'x.', 'not a valid pickle'),
    (b'\x80\x04\x95' + struct.pack('<Q', 2 ** 40) + b'}.', 'frame'),
    (b'\x80\x04}.garbage', 'follow the end'),
    (b'', 'not a valid pickle|empty'),
    (b'\x80\x04\x8c\x08builtins\x8c\tbytearray\x93J\x00\x00\x00@\x85R.', 'bytearray'),
    (b'\x80\x02cnumpy\ndtype\nX\x02\x00\x00\x00O8K\x00K\x01\x87R.', 'numpy dtype'),
    (b'\x80\x04]\x94(h\x00a.', 'Invalid optimizer states'),
    (b'\x80\x04\x88\x85Q.', 'persistent|not allowed'),
    (b'\x80\x04\x82\x01.', 'not allowed'),
])
def test_damaged_or_hostile_pickles_refused(blob, what):
    with pytest.raises(mx.MXNetError, match=what):
        load_states(blob, 'x.states')


def _dumped(optimizer, **changes):
    vars(optimizer).update(changes)
    return mx.optimizer.get_updater(optimizer).get_states(dump_optimizer=True)


@pytest.mark.parametrize('changes, what', [
    ({'lr': '0.1'}, r'SGD\.lr'), ({'wd': None}, r'SGD\.wd'), ({'num_update': -3}, 'num_update'),
    ({'_index_update_count': {0: 'x'}}, 'counters'), ({'lr_mult': []}, 'lr_mult'),
    ({'lr_scheduler': 5}, 'lr_scheduler'), ({'lr': None}, 'neither a learning rate'),
])
def test_mutated_pickled_optimizer_refused(changes, what):
    blob = _dumped(mx.optimizer.create('sgd', learning_rate=0.1), **changes)
    with pytest.raises(mx.MXNetError, match=what):
        load_states(blob, 'x.states')


def test_state_tree_and_keys_checked():
    for bad in ({0.5: None}, {0: 'text'}, {0: (1, 2)}, [1, 2], ({}, 'not an optimizer')):
        with pytest.raises(mx.MXNetError, match='Invalid optimizer states in x.states'):
            load_states(mx.optimizer.pickling.dumps(bad), 'x.states')


def test_another_networks_states_refused_at_load_naming_the_parameter(tmp_path):
    fname = str(tmp_path / 'small.states')
    trained_module(hidden=8).save_optimizer_states(fname)
    other = trained_module(hidden=5, steps=0)
    with pytest.raises(mx.MXNetError, match=r"small\.states.*'fc1_weight'.*float32 \(8, 6\).*"
                                            r"\(5, 6\)"):
        other.load_optimizer_states(fname)


def test_states_of_another_device_count_refused(tmp_path):
    fname = str(tmp_path / 'two.states')
    trained_module(context=cpus(2), kvstore=None).save_optimizer_states(fname)  # keys i*2+k
    with pytest.raises(mx.MXNetError, match='another number of devices|another network'):
        trained_module(steps=0).load_optimizer_states(fname)


def test_states_of_another_optimizer_refused(tmp_path):
    fname = str(tmp_path / 'adam.states')
    trained_module(optimizer='adam', optimizer_params={'learning_rate': 0.01}) \
        .save_optimizer_states(fname)
    with pytest.raises(mx.MXNetError, match='another network or optimizer'):
        trained_module(steps=0).load_optimizer_states(fname)   # momentum SGD: one array


def test_kvstore_states_checked_against_names(tmp_path):
    fname = str(tmp_path / 'kv.states')
    mod = trained_module(context=cpus(2), optimizer='adam',
                         optimizer_params={'learning_rate': 0.01})
    assert mod._update_on_kvstore
    mod.save_optimizer_states(fname)
    same = trained_module(context=cpus(2), optimizer='adam', steps=0,
                          optimizer_params={'learning_rate': 0.01})
    same.load_optimizer_states(fname)
    np.testing.assert_array_equal(same._kvstore._updater.states['fc1_weight'][0].asnumpy(),
                                  mod._kvstore._updater.states['fc1_weight'][0].asnumpy())
    other = mx.mod.Module(mlp_sym(hidden=4), context=cpus(2))
    other.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    other.init_params()
    other.init_optimizer(optimizer='adam')
    with pytest.raises(mx.MXNetError, match=r"'fc[12]_weight'.*\(3, 4\)"):
        other.load_optimizer_states(fname)


def test_missing_states_file_named():
    mod = trained_module(steps=0)
    with pytest.raises(mx.MXNetError, match='nowhere.states'):
        mod.load_optimizer_states('/nonexistent/nowhere.states')


def _ndarray_pickle(record):
    """{0: NDArray} as MXNet pickles it, holding the array record ``record``."""
    return (b'\x80\x04}K\x00\x8c\x15mxnet.ndarray.ndarray\x8c\x07NDArray\x93N\x85R}\x8c\x06handle'
            b'\x8c\x08builtins\x8c\tbytearray\x93B' + struct.pack('<I', len(record)) + record
            + b'\x85Rsbs.')


def test_pickled_ndarray_record_bounds():
    record = mx.nd.serialization.record_to_bytes(mx.nd.ones((2, 3)))
    states, _ = load_states(_ndarray_pickle(record), 'x.states')
    np.testing.assert_array_equal(states[0].asnumpy(), np.ones((2, 3)))
    huge = record.replace(struct.pack('<qq', 2, 3), struct.pack('<qq', 2 ** 32, 2 ** 32))
    for raw in (huge, record[:-4], record + b'xx', record[:12]):
        with pytest.raises(mx.MXNetError, match='Invalid optimizer states in x.states'):
            load_states(_ndarray_pickle(raw), 'x.states')


def test_states_of_the_other_key_layout_are_kept_and_used(tmp_path):
    """kvstore states (keyed by name) loaded into a module updating on its device (keyed by
    index): kept under their keys as MXNet keeps them (its test_save_load compares the dicts),
    and handed to the weights instead of fresh zeros."""
    fname = str(tmp_path / 'kv.states')
    source = trained_module(context=cpus(2), optimizer='adam',
                            optimizer_params={'learning_rate': 0.01})
    source.save_optimizer_states(fname)
    saved = source._kvstore._updater.states
    target = trained_module(optimizer='adam', steps=0, optimizer_params={'learning_rate': 0.01})
    target.load_optimizer_states(fname)
    assert sorted(target._updater.states) == sorted(saved)
    index = target._exec_group.param_names.index('fc1_weight')
    target._updater._ensure_state(index, target._exec_group.param_arrays[index][0])
    for got, want in zip(target._updater.states[index], saved['fc1_weight']):
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
        assert np.abs(want.asnumpy()).sum() > 0
