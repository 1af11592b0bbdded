"""Where MXNet 1.9.1 is permissive, mxmod is too: parameter dicts with names the network lacks
(MXNet's example/stochastic-depth, the feature-extraction idiom) and data descriptions as plain
(name, shape) pairs (example/nce-loss). Outcomes are held to MXNet's record
(fixtures/permissive_mxnet.json, from fixtures/make_permissive_fixture.py), values to one-process
references."""
import json
import logging
import os
import subprocess

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from mxmod_tests.module import permissive_cases
from mxmod_tests.module.common import mlp_sym, toy_data

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'permissive_mxnet.json')) as _handle:
    RECORDED = json.load(_handle)['outcomes']


@pytest.fixture(scope='module')
def outcomes():
    return permissive_cases.run_all(mx)


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_outcome_matches_mxnet(outcomes, name):
    assert outcomes[name] == RECORDED[name]


def test_the_record_refuses_some():
    """Not a record of 'OK' only: the refusals MXNet keeps are held too."""
    assert RECORDED['set_params_extra_allow_missing'] == 'ValueError'
    assert RECORDED['set_params_missing'] == 'RuntimeError'
    assert RECORDED['set_params_extra'] == 'OK'


class _Wrapper(mx.mod.BaseModule):
    """A user's module around a Module, as example/stochastic-depth's StochasticDepthModule: no
    ``_arg_params`` of its own, parameters only through get_params/init_params."""

    def __init__(self, symbol, data_names):
        super(_Wrapper, self).__init__(logger=logging)
        self._inner = mx.mod.Module(symbol, data_names=data_names, label_names=None)

    data_names = property(lambda self: self._inner.data_names)
    output_names = property(lambda self: self._inner.output_names)
    data_shapes = property(lambda self: self._inner.data_shapes)
    label_shapes = property(lambda self: self._inner.label_shapes)
    output_shapes = property(lambda self: self._inner.output_shapes)

    def get_params(self):
        return self._inner.get_params()

    def init_params(self, *args, **kwargs):
        self._inner.init_params(*args, **kwargs)
        self.params_initialized = True

    def bind(self, *args, **kwargs):
        self._inner.bind(*args, **kwargs)
        self.binded = True

    def init_optimizer(self, *args, **kwargs):
        self._inner.init_optimizer(*args, **kwargs)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        self._inner.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._inner.backward(out_grads=out_grads)

    def update(self):
        self._inner.update()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        pass

    def get_outputs(self, merge_multi_context=True):
        return self._inner.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._inner.get_input_grads(merge_multi_context)


def _chain():
    seq = mx.mod.SequentialModule()
    fc1 = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=8, name='fc1')
    seq.add(mx.mod.Module(fc1, label_names=None))
    hidden = mx.sym.Activation(mx.sym.Variable('h'), act_type='relu')
    seq.add(_Wrapper(mx.sym.FullyConnected(hidden, num_hidden=8, name='fc2'), ['h']),
            auto_wiring=True)
    out = mx.sym.FullyConnected(mx.sym.Variable('h2'), num_hidden=3, name='fc3')
    seq.add(mx.mod.Module(mx.sym.SoftmaxOutput(out, name='softmax'), data_names=['h2']),
            auto_wiring=True, take_labels=True)
    return seq


def test_sequential_with_a_custom_module_fits_and_sets_the_union():
    """fit sets the union of all modules' parameters back after each epoch; each module takes
    its own (this stopped with ExtraParamsError on the custom module's names)."""
    x, y = toy_data(40)
    seq = _chain()
    seq.fit(mx.io.NDArrayIter(x, y, batch_size=10), eval_data=mx.io.NDArrayIter(x, y, 10),
            num_epoch=2, optimizer_params={'learning_rate': 0.1})
    arg, aux = seq.get_params()
    assert sorted(arg) == ['fc1_bias', 'fc1_weight', 'fc2_bias', 'fc2_weight', 'fc3_bias',
                           'fc3_weight']
    moved = {k: v + 1 for k, v in arg.items()}
    seq.set_params(moved, aux)
    for name, value in seq.get_params()[0].items():
        np.testing.assert_array_equal(value.asnumpy(), moved[name].asnumpy(), err_msg=name)
    assert sorted(seq._modules[1].get_params()[0]) == ['fc2_bias', 'fc2_weight']


def test_sequential_still_refuses_duplicated_names():
    seq = mx.mod.SequentialModule()
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=5, name='fc')
    seq.add(mx.mod.Module(fc, label_names=None))
    again = mx.sym.FullyConnected(mx.sym.Variable('d2'), num_hidden=5, name='fc')
    seq.add(mx.mod.Module(again, data_names=['d2'], label_names=None), auto_wiring=True)
    seq.bind([('data', (2, 5))])
    with pytest.raises(MXNetError, match='Duplicated parameter names'):
        seq.init_params()


def test_truncated_network_takes_a_whole_checkpoint():
    """The feature-extraction idiom: a symbol cut at an internal output gets the whole trained
    network's parameters with set_params (the extra fc2_* are ignored)."""
    x, y = toy_data(40)
    full = mx.mod.Module(mlp_sym())
    full.fit(mx.io.NDArrayIter(x, y, batch_size=10), num_epoch=1)
    arg, aux = full.get_params()
    features = mx.mod.Module(mlp_sym().get_internals()['relu1_output'], label_names=None)
    features.bind([('data', (40, 6))], for_training=False)
    features.set_params(arg, aux)
    features.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    want = np.maximum(x @ arg['fc1_weight'].asnumpy().T + arg['fc1_bias'].asnumpy(), 0)
    np.testing.assert_allclose(features.get_outputs()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


class _PlainBatch(object):
    def __init__(self, data, label):
        self.data, self.label = data, label

    @property
    def provide_data(self):
        return [('data', self.data[0].shape)]

    @property
    def provide_label(self):
        return [('softmax_label', self.label[0].shape)]


class _PairIter(mx.io.DataIter):
    """NDArrayIter's batches, described by plain pairs and given as plain objects."""

    def __init__(self, x, y, batch_size):
        super(_PairIter, self).__init__(batch_size)
        self._inner = mx.io.NDArrayIter(x, y, batch_size)
        self.provide_data = [tuple(d[:2]) for d in self._inner.provide_data]
        self.provide_label = [list(d[:2]) for d in self._inner.provide_label]

    def __iter__(self):
        self._inner.reset()
        for batch in self._inner:
            yield _PlainBatch(batch.data, batch.label)

    def reset(self):
        pass


def _fit_params(data_iter):
    mx.random.seed(7)
    np.random.seed(7)
    mod = mx.mod.Module(mlp_sym())
    mod.fit(data_iter, num_epoch=2, optimizer_params={'learning_rate': 0.1},
            initializer=mx.init.Xavier())
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}, mod


def test_pair_descriptions_train_as_datadesc_does():
    x, y = toy_data(40)
    want, _ = _fit_params(mx.io.NDArrayIter(x, y, batch_size=10))
    got, mod = _fit_params(_PairIter(x, y, 10))
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    score = dict(mod.score(_PairIter(x, y, 10), 'acc'))['accuracy']
    assert score == dict(mod.score(mx.io.NDArrayIter(x, y, 10), 'acc'))['accuracy']


def test_missing_label_named_with_pair_descriptions():
    x, y = toy_data(40)
    it = _PairIter(x, y, 10)
    it.provide_label = [('other_label', (10,))]
    with pytest.raises(MXNetError, match="'softmax_label'.*other_label"):
        mx.mod.Module(mlp_sym()).fit(it, num_epoch=1)


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle venv')
def test_record_is_what_mxnet_gives_now(tmp_path):
    out = tmp_path / 'live.json'
    script = os.path.join(HERE, 'fixtures', 'make_permissive_fixture.py')
    subprocess.run([ORACLE_PYTHON, script, str(out)], check=True, timeout=300,
                   capture_output=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert json.loads(out.read_text())['outcomes'] == RECORDED
