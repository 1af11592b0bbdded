"""CTCLoss against a brute-force sum over all alignments, MXNet's documented values (warp-ctc),
and float64 central differences of the loss; padding, explicit lengths and both blank
positions."""
import itertools

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(8)


def collapse(path, blank):
    out, prev = [], None
    for s in path:
        if s != prev and s != blank:
            out.append(s)
        prev = s
    return out


def brute_force_loss(acts, label, blank, steps=None):
    """-log sum over every path of length ``steps`` that collapses to ``label``."""
    steps = steps or acts.shape[0]
    logp = acts[:steps] - np.log(np.exp(acts[:steps]).sum(-1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(acts.shape[1]), repeat=steps):
        if collapse(path, blank) == list(label):
            total += np.exp(sum(logp[t, s] for t, s in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize('blank_label', ['first', 'last'])
def test_ctc_matches_brute_force(blank_label):
    acts = RNG.uniform(-1, 1, (5, 2, 4))
    blank = 0 if blank_label == 'first' else 3
    labels = [[1, 1], [2]] if blank_label == 'first' else [[0, 0], [1]]
    pad = 0 if blank_label == 'first' else -1
    padded = np.array([l + [pad] * (3 - len(l)) for l in labels], dtype=np.float64)
    want = [brute_force_loss(acts[:, b], labels[b], blank) for b in range(2)]
    attrs = {'blank_label': blank_label}
    check_forward('CTCLoss', attrs, [acts, padded], [np.array(want)], rtol=1e-10)
    head = [RNG.uniform(0.5, 1.5, 2), np.zeros(acts.shape)]    # the second output is hidden
    check_grad('CTCLoss', attrs, [acts, padded], wrt=[0], head=head)


def test_ctc_lengths():
    acts = RNG.uniform(-1, 1, (5, 2, 4))
    labels = np.array([[1, 3, 2], [2, 2, 1]], dtype=np.float64)
    steps, lens = np.array([4.0, 5.0]), np.array([2.0, 1.0])
    want = [brute_force_loss(acts[:, 0], [1, 3], 0, steps=4),
            brute_force_loss(acts[:, 1], [2], 0)]
    attrs = {'use_data_lengths': True, 'use_label_lengths': True}
    outs = check_forward('CTCLoss', attrs, [acts, labels, steps, lens], [np.array(want)],
                         rtol=1e-10)
    nan_tail = acts.copy()
    nan_tail[4, 0] = np.nan          # beyond the first sample's length: never read
    again = run_forward(make('CTCLoss', **attrs), [nan_tail, labels, steps, lens])
    np.testing.assert_allclose(again[0], outs[0], rtol=1e-12)
    assert not again[1][4, 0].any()
    head = [np.ones(2), np.zeros(acts.shape)]
    check_grad('CTCLoss', attrs, [acts, labels, steps, lens], wrt=[0], head=head)


def test_ctc_documented_values_and_names():
    acts = np.array([[[1.2, 3.4, 1.2, -0.1, -2.34], [1.2, 3.4, 1.2, -0.1, -2.34]],
                     [[0.1, 0.2, 0.3, 0.22, 0.123], [0.1, 0.2, 0.3, 0.22, 0.123]],
                     [[-15, -14, -13, -12, -11], [-15, -14, -13, -12, -11]]], dtype=np.float32)
    loss = mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array([[2, 3, 0], [2, 3, 0]]))
    np.testing.assert_allclose(loss.asnumpy(), [4.04789, 4.04789], rtol=1e-5)
    assert mx.nd.contrib.ctc_loss is not None and mx.nd.contrib.CTCLoss is not None
    data, label = mx.sym.var('data'), mx.sym.var('label')
    sym = mx.sym.CTCLoss(data, label, use_data_lengths=True)
    assert sym.list_arguments()[2].endswith('data_lengths')
    with pytest.raises(MXNetError, match='alphabet'):
        mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array([[7, 1, 0], [1, 0, 0]]))
