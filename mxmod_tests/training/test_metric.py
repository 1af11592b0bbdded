"""mx.metric against MXNet 1.9.1 results frozen in fixtures/oracle.json (same inputs, same
protocol: metric_cases.run_case), plus registry, config and update_dict behaviour."""
import json
import math
import os
from collections import OrderedDict

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.training import metric_cases

ORACLE = json.load(open(os.path.join(os.path.dirname(__file__), 'fixtures', 'oracle.json')))
METRICS = ORACLE['metrics']
CASES = metric_cases.cases()


def assert_results_equal(got, want, path='result'):
    """Names exactly, values to 1e-6 relative (None stands for nan)."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_results_equal(g, w, '%s[%d]' % (path, i))
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), path
        for key in want:
            assert_results_equal(got[key], want[key], '%s.%s' % (path, key))
    elif isinstance(want, str) or want is None:
        assert got == want, (path, got, want)
    else:
        assert got is not None and math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9), \
            (path, got, want)


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_metric_matches_oracle(case):
    got = metric_cases.run_case(mx, case)
    want = METRICS['cases'][case[0]]
    if case[0] == 'pearsonr_micro':
        # MXNet never fills the global tally in micro mode (get_global gives 0.0) and its
        # reset_local keeps the streaming sums; mxmod keeps separate local and global tallies,
        # checked against numpy in test_pearsonr_micro_global.
        for key in ('global', 'global_after_reset_local', 'global_last', 'local_last'):
            got.pop(key)
            want = dict(want)
            want.pop(key)
    assert_results_equal(got, want)


# get_config keys mxmod adds so that create(get_config()) rebuilds the same metric
_EXTRA_CONFIG = {'F1': ('average',), 'MCC': ('average',), 'PearsonCorrelation': ('average',),
                 'Perplexity': ('axis',)}


def _strip(config):
    config = dict(config)
    for key in _EXTRA_CONFIG.get(config['metric'], ()):
        config.pop(key)
    if config['metric'] == 'TopKAccuracy':
        config['name'] += '_%d' % config['top_k']  # mxmod stores the name before the suffix
    if 'metrics' in config:
        config['metrics'] = [_strip(c) for c in config['metrics']]
    return config


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_get_config_matches_oracle_and_round_trips(case):
    cid, spec, kwargs, _ = case
    metric = mx.metric.create(spec, **kwargs)
    config = metric.get_config()
    assert _strip(config) == METRICS['configs'][cid]
    again = mx.metric.create(json.dumps(config))
    assert again.get_config() == config
    assert [n for n, _ in again.get_name_value()] == [n for n, _ in metric.get_name_value()]
    assert mx.metric.create(config).get_config() == config


def test_custom_metrics_match_oracle():
    got = metric_cases.custom_cases(mx)
    assert_results_equal(got, METRICS['custom'])


def test_custom_metric_cannot_be_serialized():
    with pytest.raises(NotImplementedError):
        mx.metric.create(lambda l, p: 0.).get_config()


def test_create_by_names_aliases_and_case():
    expect = {'acc': 'Accuracy', 'Accuracy': 'Accuracy', 'ce': 'CrossEntropy',
              'nll_loss': 'NegativeLogLikelihood', 'top_k_acc': 'TopKAccuracy',
              'f1': 'F1', 'mcc': 'MCC', 'mae': 'MAE', 'MSE': 'MSE', 'rmse': 'RMSE',
              'pearsonr': 'PearsonCorrelation', 'pcc': 'PCC', 'loss': 'Loss', 'torch': 'Torch',
              'caffe': 'Caffe', 'composite': 'CompositeEvalMetric'}
    for name, cls in expect.items():
        kwargs = {'top_k': 2} if cls == 'TopKAccuracy' else {}
        assert type(mx.metric.create(name, **kwargs)).__name__ == cls
    assert type(mx.metric.create('perplexity', -1)).__name__ == 'Perplexity'
    assert type(mx.metric.create(metric='acc')).__name__ == 'Accuracy'
    inst = mx.metric.MAE()
    assert mx.metric.create(inst) is inst
    with pytest.raises(ValueError, match='valid names'):
        mx.metric.create('no_such_metric')


def test_register_and_alias_custom_metric():
    @mx.metric.register
    @mx.metric.alias('always_one')
    class AlwaysOne(mx.metric.EvalMetric):
        def __init__(self, name='one'):
            super(AlwaysOne, self).__init__(name)

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += len(preds)

    assert isinstance(mx.metric.create('alwaysone'), AlwaysOne)
    metric = mx.metric.create('always_one')
    metric.update([mx.nd.ones((2,))], [mx.nd.ones((2,))])
    assert metric.get() == ('one', 1.0)
    assert metric.get_global() == ('one', 1.0)  # no global stats: falls back to local
    metric.reset_local()
    assert math.isnan(metric.get_global()[1])


def test_check_label_shapes():
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((3, 3))
    with pytest.raises(ValueError, match='does not match'):
        mx.metric.check_label_shapes([a], [a, b])
    with pytest.raises(ValueError):
        mx.metric.check_label_shapes(a, b, shape=True)
    labels, preds = mx.metric.check_label_shapes(a, a, wrap=True, shape=True)
    assert labels == [a] and preds == [a]


def test_update_dict_selects_names():
    acc = mx.metric.Accuracy(output_names=['good_output'], label_names=['good_label'])
    labels = OrderedDict([('bad_label', mx.nd.array([0, 0])), ('good_label', mx.nd.array([1, 0]))])
    preds = OrderedDict([('bad_output', mx.nd.array([[1, 0], [1, 0]])),
                         ('good_output', mx.nd.array([[0, 1], [0, 1]]))])
    acc.update_dict(labels, preds)
    assert acc.get() == ('accuracy', 0.5)
    composite = mx.metric.CompositeEvalMetric(['acc', 'mse'], output_names=['good_output'],
                                              label_names=['good_label'])
    composite.update_dict(labels, preds)
    assert composite.get()[0] == ['accuracy', 'mse']
    assert composite.get()[1][0] == 0.5


def test_composite_metric_access():
    composite = mx.metric.create(['acc', mx.metric.F1()])
    assert isinstance(composite.get_metric(1), mx.metric.F1)
    with pytest.raises(ValueError, match='out of range'):
        composite.get_metric(5)
    composite.add('mae')
    assert [m.name for m in composite.metrics] == ['accuracy', 'f1', 'mae']
    assert str(mx.metric.create('acc')) == "EvalMetric: {'accuracy': nan}"


def test_pearsonr_micro_global():
    rs = np.random.RandomState(3)
    batches = [(rs.rand(6, 2), rs.rand(6, 2)) for _ in range(4)]
    metric = mx.metric.create('pearsonr', average='micro')
    for i, (label, pred) in enumerate(batches):
        metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
        if i == 1:
            metric.reset_local()
    lab = np.concatenate([b[0].astype(np.float32).ravel() for b in batches])
    prd = np.concatenate([b[1].astype(np.float32).ravel() for b in batches])
    np.testing.assert_allclose(metric.get_global()[1], np.corrcoef(prd, lab)[0, 1], rtol=1e-9)
    np.testing.assert_allclose(metric.get()[1], np.corrcoef(prd[24:], lab[24:])[0, 1], rtol=1e-9)


def test_per_device_averaging_of_regression_metrics():
    """One mean per (label, pred) pair: two devices with different sizes are not pooled."""
    a_l, a_p = np.zeros((2, 1), np.float32), np.ones((2, 1), np.float32)
    b_l, b_p = np.zeros((6, 1), np.float32), np.full((6, 1), 3., np.float32)
    mse = mx.metric.MSE()
    mse.update([mx.nd.array(a_l), mx.nd.array(b_l)], [mx.nd.array(a_p), mx.nd.array(b_p)])
    assert mse.get() == ('mse', (1. + 9.) / 2) and mse.num_inst == 2


def test_invalid_arguments_raise():
    with pytest.raises(ValueError, match='top_k'):
        mx.metric.TopKAccuracy(top_k=1)
    with pytest.raises(ValueError, match='average'):
        mx.metric.F1(average='weighted')
    with pytest.raises(ValueError, match='binary'):
        mx.metric.F1().update([mx.nd.array([0, 1, 2])], [mx.nd.ones((3, 3))])
    with pytest.raises(ValueError, match='labels'):
        mx.metric.CrossEntropy().update([mx.nd.array([0, 1, 2])], [mx.nd.ones((2, 3))])


@pytest.mark.parametrize('name,kwargs', [('f1', {}), ('f1', {'average': 'micro'}),
                                         ('mcc', {'average': 'micro'}),
                                         ('pearsonr', {'average': 'micro'}), ('acc', {})])
def test_values_print_as_mxnet_printed_them(name, kwargs):
    # MXNet 1.9.1 (numpy < 2) printed f1.get() as ('f1', 0.6666666666666666), as the logistic
    # regression tutorial prints it; a numpy scalar would print as np.float64(0.66...) on numpy 2
    label = mx.nd.array([0, 1, 1, 0])
    pred = mx.nd.array([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4], [0.9, 0.1]])
    metric = mx.metric.create(name, **kwargs)
    metric.update([label], [pred[:, 1] if name == 'pearsonr' else pred])
    want = {'f1': 0.6666666666666666, 'mcc': 0.5773502691896258, 'pearsonr': 0.7844645354948087,
            'acc': 0.75}[name]
    for got in (metric.get(), metric.get_global(), metric.get_name_value()[0]):
        assert type(got[1]) is float, got  # pylint: disable=unidiomatic-typecheck
        assert math.isclose(got[1], want, rel_tol=1e-12), got
        assert repr(got) == '(%r, %r)' % (got[0], float(got[1]))
