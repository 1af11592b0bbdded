"""Loading a checkpoint while another process saves the same prefix over and over: every load
returns one whole save (every array, and the symbol's attribute, carry the same save number,
one the writer wrote), never a TornCheckpointError; a set torn for good still raises, once the
files have stayed still for SETTLE_SECONDS. (Before loads retried, 115 of 155 loads raised.)"""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mxmod as mx
from mxmod import checkpoint
from mxmod.checkpoint import TornCheckpointError

# saves numbers 1, 2, ... of one checkpoint (epoch 1) until the stop file appears: a network
# whose 'data' variable carries attribute save=N and parameters filled with N; prints the last
# number
WRITER = textwrap.dedent('''
    import os, sys
    import mxmod as mx
    prefix, stop = sys.argv[1], sys.argv[2]
    number = 0
    while not os.path.exists(stop) and number < 100000:
        number += 1
        net = mx.sym.FullyConnected(mx.sym.Variable('data', attr={'save': str(number)}),
                                    num_hidden=64, name='fc')
        arg = {'fc_weight': mx.nd.full((64, 256), number), 'fc_bias': mx.nd.full((64,), number)}
        aux = {'extra': mx.nd.full((5000,), number)}
        mx.model.save_checkpoint(prefix, 1, net, arg, aux)
    print(number)
''')


def _save_number(symbol, arg_params, aux_params):
    """The save number all of a load's parts carry (an AssertionError when they differ)."""
    numbers = {int(symbol.attr_dict()['data']['save'])}
    for value in list(arg_params.values()) + list(aux_params.values()):
        array = value.asnumpy()
        numbers.update(np.unique(array).astype(int).tolist())
    assert len(numbers) == 1, 'a load mixed saves %s' % sorted(numbers)
    return numbers.pop()


def _loaders(prefix):
    def module_load():
        mod = mx.mod.Module.load(prefix, 1, label_names=None)
        return mod.symbol, mod._arg_params, mod._aux_params  # pylint: disable=protected-access
    return [lambda: mx.model.load_checkpoint(prefix, 1), module_load]


@pytest.mark.parametrize('loader', [0, 1])
def test_loads_during_saves_return_one_whole_save(tmp_path, loader):
    prefix, stop = str(tmp_path / 'net'), str(tmp_path / 'stop')
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    writer = subprocess.Popen([sys.executable, '-c', WRITER, prefix, stop], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not os.path.exists(checkpoint.manifest_name(prefix, 1)):
            assert writer.poll() is None and time.time() < deadline, writer.communicate()
            time.sleep(0.01)
        load = _loaders(prefix)[loader]
        seen = []
        for _ in range(150):
            seen.append(_save_number(*load()))
    finally:
        open(stop, 'w').close()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    last = int(out.split()[-1])
    assert seen == sorted(seen) and 1 <= seen[0] and seen[-1] <= last
    # the loads overlapped the saves: several different saves were read
    assert len(set(seen)) > 3, (len(set(seen)), last)


def test_load_params_alone_during_saves(tmp_path):
    """load_params without a reader retries the same way (parameters of one save)."""
    prefix, stop = str(tmp_path / 'net'), str(tmp_path / 'stop')
    writer = subprocess.Popen([sys.executable, '-c', WRITER, prefix, stop],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not os.path.exists(checkpoint.manifest_name(prefix, 1)):
            assert writer.poll() is None, writer.communicate()
            time.sleep(0.01)
        for _ in range(100):
            arg, aux = mx.model.load_params(prefix, 1)
            values = {int(v) for a in list(arg.values()) + list(aux.values())
                      for v in np.unique(a.asnumpy())}
            assert len(values) == 1, values
    finally:
        open(stop, 'w').close()
        writer.communicate(timeout=60)


def test_a_set_that_stays_torn_still_raises(tmp_path):
    prefix = str(tmp_path / 'net')
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    mx.model.save_checkpoint(prefix, 1, net, {'fc_weight': mx.nd.ones((2, 3))}, {})
    params = '%s-0001.params' % prefix
    mx.nd.save(params + '.other', {'arg:fc_weight': mx.nd.zeros((2, 3))})
    os.replace(params + '.other', params)         # another save's parameters, for good
    tic = time.monotonic()
    with pytest.raises(TornCheckpointError, match='stayed so for 1.0 s: no save is under way'):
        mx.model.load_checkpoint(prefix, 1)
    assert checkpoint.SETTLE_SECONDS <= time.monotonic() - tic < checkpoint.SETTLE_SECONDS + 5


@pytest.mark.parametrize('devices', [1, 2])
def test_states_loaded_later_are_those_of_the_loaded_save(tmp_path, devices):
    """Module.load(load_optimizer_states=True) reads the states with the parameters; when the
    module's init_optimizer applies them, a save made since (same prefix and epoch) does not leak
    in: the momentum and the update count are the loaded save's (updates on the kvstore or in
    the module)."""
    from mxmod_tests.hardening.common import toy_data, trained_module  # pylint: disable=import-outside-toplevel
    from mxmod.optimizer.pickling import load_states  # pylint: disable=import-outside-toplevel
    prefix = str(tmp_path / 'net')
    contexts = [mx.cpu(i) for i in range(devices)]
    mod = trained_module(context=contexts, steps=2)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    with open('%s-0001.states' % prefix, 'rb') as handle:
        saved, _ = load_states(handle.read(), 'A')
    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True, context=contexts)
    x, y = toy_data(10)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    for _ in range(3):
        mod.forward_backward(batch)
        mod.update()
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)      # save B over save A
    loaded.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    loaded.init_optimizer(kvstore='local', optimizer='sgd',
                          optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    updater = loaded._kvstore._updater if loaded._update_on_kvstore else loaded._updater  # pylint: disable=protected-access
    assert loaded._update_on_kvstore == (devices == 2)  # pylint: disable=protected-access
    assert set(updater.states) == set(saved)
    for key, state in saved.items():
        np.testing.assert_array_equal(updater.states[key].asnumpy(), state.asnumpy())
    assert updater.optimizer.num_update == 2

