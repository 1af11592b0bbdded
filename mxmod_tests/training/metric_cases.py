"""Metric cases shared by the oracle fixture generator (run with MXNet) and test_metric.py
(run with mxmod): the same inputs and protocol, so frozen MXNet results can be compared.

Each case is (id, metric spec, kwargs, batches); a batch is (labels, preds), lists of numpy
arrays. ``run_case(mx, case)`` feeds the batches and records get/get_global around
reset_local."""
import numpy as np


def _rand(rs, *shape):
    return rs.rand(*shape).astype(np.float32)


def _softmax(rs, n, k):
    x = rs.randn(n, k).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _cls_batches(rs, n_batches, pairs, n, k, label_k=None):
    batches = []
    for _ in range(n_batches):
        labels = [rs.randint(0, label_k or k, size=n).astype(np.float32) for _ in range(pairs)]
        preds = [_softmax(rs, n, k) for _ in range(pairs)]
        batches.append((labels, preds))
    return batches


def _reg_batches(rs, n_batches, pairs, shape):
    return [([_rand(rs, *shape) for _ in range(pairs)], [_rand(rs, *shape) for _ in range(pairs)])
            for _ in range(n_batches)]


def cases():
    """All metric cases, built from a fixed RandomState."""
    rs = np.random.RandomState(1234)
    out = [
        ('acc', 'acc', {}, _cls_batches(rs, 3, 2, 8, 4)),
        ('acc_axis0', 'acc', {'axis': 0}, [([np.array([1, 0, 2], np.float32)],
                                             [_rand(rs, 3, 3)])]),
        ('acc_2d_label', 'acc', {}, [([rs.randint(0, 3, (2, 3)).astype(np.float32)],
                                      [_softmax(rs, 6, 3)])]),
        ('acc_class_preds', 'accuracy', {}, [([np.array([0, 1, 2, 1], np.float32)],
                                              [np.array([0, 2, 2, 1], np.float32)])]),
        ('top_k3', 'top_k_accuracy', {'top_k': 3}, _cls_batches(rs, 3, 2, 10, 6)),
        ('top_k2', 'TopKAccuracy', {'top_k': 2}, _cls_batches(rs, 2, 1, 7, 5)),
        ('f1_macro', 'f1', {}, _cls_batches(rs, 3, 2, 9, 2)),
        ('f1_micro', 'f1', {'average': 'micro'}, _cls_batches(rs, 3, 2, 9, 2)),
        ('mcc_macro', 'mcc', {}, _cls_batches(rs, 3, 2, 9, 2)),
        ('mcc_micro', 'mcc', {'average': 'micro'}, _cls_batches(rs, 3, 2, 9, 2)),
        ('perplexity_ignore', 'perplexity', {'ignore_label': 0}, _cls_batches(rs, 3, 2, 12, 5)),
        ('perplexity_none', 'Perplexity', {'ignore_label': None}, _cls_batches(rs, 3, 2, 12, 5)),
        ('mae', 'mae', {}, _reg_batches(rs, 3, 2, (6, 3))),
        ('mse', 'mse', {}, _reg_batches(rs, 3, 2, (6, 3))),
        ('rmse', 'rmse', {}, _reg_batches(rs, 3, 2, (6, 3))),
        ('mse_1d', 'mse', {}, _reg_batches(rs, 2, 3, (7,))),
        ('rmse_1d', 'rmse', {}, _reg_batches(rs, 2, 2, (5,))),
        ('ce', 'ce', {}, _cls_batches(rs, 3, 2, 8, 4)),
        ('nll', 'nll_loss', {}, _cls_batches(rs, 3, 2, 8, 4)),
        ('ce_eps', 'CrossEntropy', {'eps': 1e-3}, _cls_batches(rs, 1, 1, 8, 4)),
        ('pearsonr_macro', 'pearsonr', {}, _reg_batches(rs, 3, 2, (5, 2))),
        ('pearsonr_micro', 'pearsonr', {'average': 'micro'}, _reg_batches(rs, 3, 2, (5, 2))),
        ('pcc', 'pcc', {}, _cls_batches(rs, 3, 2, 20, 3)),
        ('pcc_grow', 'pcc', {}, _cls_batches(rs, 1, 1, 15, 2) + _cls_batches(rs, 2, 1, 30, 5)),
        ('loss', 'loss', {}, _reg_batches(rs, 3, 2, (4, 3))),
        ('torch', 'torch', {}, _reg_batches(rs, 1, 1, (4,))),
        ('caffe', 'caffe', {}, _reg_batches(rs, 1, 1, (4,))),
        ('composite', ['acc', 'ce', 'f1'], {}, _cls_batches(rs, 3, 2, 8, 2)),
    ]
    return out


def _value(v):
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    return None if v != v else float(v)  # nan -> None (JSON)


def _result(pair):
    name, value = pair
    return [name, _value(value)]


def run_case(mx, case):
    """Run ``case`` with the ``mx`` module; return JSON-ready results."""
    _, spec, kwargs, batches = case
    metric = mx.metric.create(spec, **kwargs)
    to_nd = lambda arrays: [mx.nd.array(a) for a in arrays]  # noqa: E731
    res = {'empty': _result(metric.get())}
    steps = []
    for labels, preds in batches:
        metric.update(to_nd(labels), to_nd(preds))
        steps.append(_result(metric.get()))
    res['steps'] = steps
    res['global'] = _result(metric.get_global())
    res['name_value'] = [[n, _value(v)] for n, v in metric.get_name_value()]
    metric.reset_local()
    res['after_reset_local'] = _result(metric.get())
    res['global_after_reset_local'] = _result(metric.get_global())
    labels, preds = batches[-1]
    metric.update(to_nd(labels), to_nd(preds))
    res['local_last'] = _result(metric.get())
    res['global_last'] = _result(metric.get_global())
    metric.reset()
    res['after_reset'] = _result(metric.get())
    return res


def custom_cases(mx):
    """CustomMetric cases: create(callable), mx.metric.np, tuple results, extra outputs."""
    rs = np.random.RandomState(99)
    label = [mx.nd.array(rs.rand(4, 2).astype(np.float32))]
    preds = [mx.nd.array(rs.rand(4, 2).astype(np.float32))]
    preds_extra = preds + [mx.nd.array(rs.rand(3).astype(np.float32))]

    def mean_abs(lab, pred):
        return float(np.abs(lab - pred).mean())

    def sum_count(lab, pred):
        return float(np.abs(lab - pred).sum()), lab.size

    out = {}
    for key, metric, pr in [('callable', mx.metric.create(mean_abs), preds),
                            ('lambda', mx.metric.create(lambda l, p: float((l * p).sum())), preds),
                            ('np', mx.metric.np(mean_abs), preds),
                            ('tuple', mx.metric.CustomMetric(sum_count, name='sc'), preds),
                            ('extra', mx.metric.np(mean_abs, allow_extra_outputs=True),
                             preds_extra)]:
        metric.update(label, pr)
        metric.update(label, pr)
        out[key] = [_result(metric.get()), metric.num_inst]
    return out
