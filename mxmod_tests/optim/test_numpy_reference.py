"""Every optimizer against a tiny float64 numpy version of its update rule (3 steps)."""
import warnings

import numpy as np
import pytest

import mxmod as mx
from mxmod.optimizer import sgd as sgd_module

COMMON = {'wd': 0.03, 'clip_gradient': 0.6, 'rescale_grad': 0.8}


def _clip(x, bound):
    return np.clip(x, -bound, bound)


def ref_sgd(w, g, s, t, lr=0.1, momentum=0.9, wd=0.03, clip=0.6, rs=0.8):
    step = -lr * wd * w - lr * _clip(rs * g, clip)
    s.setdefault('m', np.zeros_like(w))
    s['m'] = momentum * s['m'] + step
    return w + s['m']


def ref_nag(w, g, s, t, lr=0.1, momentum=0.9, wd=0.03, clip=0.6, rs=0.8):
    # MXNet's in-place kernel: the momentum's weight-decay term sees the updated weight
    gc = _clip(rs * g, clip)
    m = momentum * s.get('m', np.zeros_like(w))
    new = w - m + (momentum + 1) * (m - lr * (gc + wd * w))
    s['m'] = m - lr * (gc + wd * new)
    return new


def ref_adam(w, g, s, t, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g + wd * w, clip)
    s['m'] = b1 * s.get('m', 0) + (1 - b1) * gc
    s['v'] = b2 * s.get('v', 0) + (1 - b2) * gc * gc
    lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * s['m'] / (np.sqrt(s['v']) + eps)


def ref_adamax(w, g, s, t, lr=0.002, b1=0.9, b2=0.999, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g + wd * w, clip)
    s['m'] = b1 * s.get('m', 0) + (1 - b1) * gc
    s['u'] = np.maximum(b2 * s.get('u', 0), np.abs(gc))
    return w - lr / (1 - b1 ** t) * s['m'] / s['u']


def ref_nadam(w, g, s, t, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, decay=0.004, wd=0.03, clip=0.6,
              rs=0.8):
    gc = _clip(rs * g + wd * w, clip)
    mom_t = b1 * (1 - 0.5 * 0.96 ** (t * decay))
    mom_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
    s['sched'] = s.get('sched', 1.0) * mom_t
    s['m'] = b1 * s.get('m', 0) + (1 - b1) * gc
    s['v'] = b2 * s.get('v', 0) + (1 - b2) * gc * gc
    m_bar = (1 - mom_t) * gc / (1 - s['sched']) + mom_next * s['m'] / (1 - s['sched'] * mom_next)
    return w - lr * m_bar / (np.sqrt(s['v'] / (1 - b2 ** t)) + eps)


def ref_adagrad(w, g, s, t, lr=0.01, eps=1e-7, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g, clip)
    s['h'] = s.get('h', 0) + gc * gc
    return w - lr * (gc / np.sqrt(s['h'] + eps) + wd * w)


def ref_rmsprop(w, g, s, t, lr=0.001, g1=0.9, eps=1e-8, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g + wd * w, clip)
    s['n'] = (1 - g1) * gc * gc + g1 * s.get('n', 0)
    return w - lr * gc / np.sqrt(s['n'] + eps)


def ref_rmsprop_centered(w, g, s, t, lr=0.001, g1=0.9, g2=0.9, eps=1e-8, wd=0.03, clip=0.6,
                         rs=0.8, clip_weights=0.5):
    gc = _clip(rs * g + wd * w, clip)
    s['n'] = (1 - g1) * gc * gc + g1 * s.get('n', 0)
    s['g'] = (1 - g1) * gc + g1 * s.get('g', 0)
    s['d'] = g2 * s.get('d', 0) - lr * gc / np.sqrt(s['n'] - s['g'] ** 2 + eps)
    return _clip(w + s['d'], clip_weights)


def ref_adadelta(w, g, s, t, rho=0.9, eps=1e-5, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g, clip)
    s['ag'] = rho * s.get('ag', 0) + (1 - rho) * gc * gc
    delta = np.sqrt(s.get('ad', 0) + eps) / np.sqrt(s['ag'] + eps) * gc
    s['ad'] = rho * s.get('ad', 0) + (1 - rho) * delta * delta
    return w - (delta + wd * w)


def ref_signum(w, g, s, t, lr=0.01, momentum=0.9, wd_lh=0.01, wd=0.03, clip=0.6, rs=0.8):
    s['m'] = momentum * s.get('m', 0) - (1 - momentum) * (wd * w + _clip(rs * g, clip))
    return (1 - lr * wd_lh) * w + lr * np.sign(s['m'])


def ref_signsgd(w, g, s, t, lr=0.01, wd=0.03, **_):
    return (1 - lr * wd) * w - lr * np.sign(g)


def ref_ftrl(w, g, s, t, lr=0.1, lamda1=0.01, beta=1.0, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g, clip)
    n = s.get('n', np.zeros_like(w))
    s['z'] = s.get('z', 0) + gc - (np.sqrt(n + gc * gc) - np.sqrt(n)) * w / lr
    s['n'] = n + gc * gc
    z = s['z']
    return (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(s['n'])) / lr + wd) * (np.abs(z) > lamda1)


def ref_ftml(w, g, s, t, lr=0.0025, b1=0.6, b2=0.999, eps=1e-8, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g + wd * w, clip)
    s['v'] = b2 * s.get('v', 0) + (1 - b2) * gc * gc
    d_t = (1 - b1 ** t) / lr * (np.sqrt(s['v'] / (1 - b2 ** t)) + eps)
    s['z'] = b1 * s.get('z', 0) + (1 - b1) * gc - (d_t - b1 * s.get('d', 0)) * w
    s['d'] = d_t
    return -s['z'] / d_t


def ref_dcasgd(w, g, s, t, lr=0.01, momentum=0.5, lamda=0.04, wd=0.03, clip=0.6, rs=0.8):
    gc = _clip(rs * g, clip)
    prev = s.get('prev', w)
    s['m'] = momentum * s.get('m', 0) - lr * (gc + wd * w + lamda * gc * gc * (w - prev))
    s['prev'] = w
    return w + s['m']


def ref_lamb(w, g, s, t, lr=0.001, b1=0.9, b2=0.999, eps=1e-6, wd=0.03, clip=0.6, rs=0.8,
             lower=0.1, upper=2.0):
    gc = _clip(rs * g, clip)
    s['m'] = b1 * s.get('m', 0) + (1 - b1) * gc
    s['v'] = b2 * s.get('v', 0) + (1 - b2) * gc * gc
    d = (s['m'] / (1 - b1 ** t)) / (np.sqrt(s['v'] / (1 - b2 ** t)) + eps) + wd * w
    r1 = min(max(np.linalg.norm(w), lower), upper)
    return w - lr * r1 / np.linalg.norm(d) * d


def ref_test(w, g, s, t, rs=0.8, **_):
    return w + rs * g


CASES = {
    'sgd': (ref_sgd, dict(COMMON, momentum=0.9, learning_rate=0.1)),
    'nag': (ref_nag, dict(COMMON, momentum=0.9, learning_rate=0.1)),
    'adam': (ref_adam, COMMON),
    'adamax': (ref_adamax, COMMON),
    'nadam': (ref_nadam, COMMON),
    'adagrad': (ref_adagrad, COMMON),
    'rmsprop': (ref_rmsprop, COMMON),
    'rmsprop_centered': (ref_rmsprop_centered, dict(COMMON, centered=True, clip_weights=0.5)),
    'adadelta': (ref_adadelta, COMMON),
    'signum': (ref_signum, dict(COMMON, wd_lh=0.01)),
    'signsgd': (ref_signsgd, {'momentum': 0.0, 'wd': 0.03}),
    'ftrl': (ref_ftrl, COMMON),
    'ftml': (ref_ftml, dict(COMMON, learning_rate=0.0025)),
    'dcasgd': (ref_dcasgd, dict(COMMON, momentum=0.5)),
    'lamb': (ref_lamb, dict(COMMON, lower_bound=0.1, upper_bound=2.0)),
    'test': (ref_test, {'rescale_grad': 0.8}),
}
_CLASS = {'rmsprop_centered': 'rmsprop', 'signsgd': 'signum'}


def _run(name, steps=3, use_updater=False):
    ref_fn, kwargs = CASES[name]
    rng = np.random.RandomState(7)
    w0 = rng.uniform(-1, 1, (4, 5))
    grads = [rng.normal(0, 1, (4, 5)) for _ in range(steps)]
    opt = mx.optimizer.create(_CLASS.get(name, name), **kwargs)
    weight = mx.nd.array(w0)
    updater = mx.optimizer.get_updater(opt)
    state = opt.create_state_multi_precision(0, weight)
    expected, ref_state = w0.copy(), {}
    for t, grad in enumerate(grads, 1):
        if use_updater:
            updater([0], [mx.nd.array(grad)], [weight])
        else:
            opt.update_multi_precision(0, weight, mx.nd.array(grad), state)
        expected = ref_fn(expected, grad, ref_state, t)
        np.testing.assert_allclose(weight.asnumpy(), expected, rtol=2e-5, atol=2e-6,
                                   err_msg='%s step %d' % (name, t))


@pytest.mark.parametrize('name', sorted(CASES))
def test_update_rule_matches_numpy(name):
    _run(name)


@pytest.mark.parametrize('name', ['sgd', 'lamb', 'adam'])
def test_updater_list_path_matches_numpy(name):
    _run(name, use_updater=True)


def test_sgld_is_half_sgd_step_plus_gaussian_noise(monkeypatch):
    noise = np.random.RandomState(3).normal(0, 1, (2, 3)).astype(np.float32)
    seen = []

    def fake_gaussian(weight, scale):
        seen.append(scale)
        return noise * scale
    monkeypatch.setattr(sgd_module, '_gaussian', fake_gaussian)
    opt = mx.optimizer.SGLD(learning_rate=0.04, wd=0.1, rescale_grad=0.5, clip_gradient=0.3)
    w0 = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]])
    g = np.array([[1.0, -2.0, 0.1], [0.0, 0.4, 0.8]])
    weight = mx.nd.array(w0)
    opt.update(0, weight, mx.nd.array(g), None)
    expected = w0 - 0.04 / 2 * (np.clip(0.5 * g, -0.3, 0.3) + 0.1 * w0) + 0.2 * noise
    np.testing.assert_allclose(weight.asnumpy(), expected, rtol=1e-6)
    assert seen == [pytest.approx(0.2)]


def test_sgld_noise_has_the_right_scale():
    opt = mx.optimizer.SGLD(learning_rate=0.25)
    weight = mx.nd.zeros((200, 50))
    opt.update(0, weight, mx.nd.zeros((200, 50)), None)
    assert abs(weight.asnumpy().std() - 0.5) < 0.02 and abs(weight.asnumpy().mean()) < 0.02


@pytest.mark.parametrize('name,kwargs', [('sgd', {'momentum': 0.9}), ('nag', {'momentum': 0.9}),
                                         ('adam', {}), ('sgd', {})])
def test_multi_precision_tracks_a_float32_run(name, kwargs):
    rng = np.random.RandomState(1)
    w0 = rng.uniform(-1, 1, (3, 4)).astype(np.float16)
    grads = [rng.normal(0, 1, (3, 4)).astype(np.float16) for _ in range(3)]
    mp_opt = mx.optimizer.create(name, multi_precision=True, **kwargs)
    ref_opt = mx.optimizer.create(name, **kwargs)
    w16, w32 = mx.nd.array(w0, dtype='float16'), mx.nd.array(w0, dtype='float32')
    s16 = mp_opt.create_state_multi_precision(0, w16)
    s32 = ref_opt.create_state_multi_precision(0, w32)
    master = s16[1] if name in ('sgd', 'nag') else s16[0]
    assert master.dtype == np.float32
    for grad in grads:
        mp_opt.update_multi_precision(0, w16, mx.nd.array(grad, dtype='float16'), s16)
        ref_opt.update_multi_precision(0, w32, mx.nd.array(grad, dtype='float32'), s32)
        np.testing.assert_array_equal(master.asnumpy(), w32.asnumpy())
        np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        mx.optimizer.Adam().create_state_multi_precision(0, mx.nd.zeros((2,), dtype='float16'))
        mx.optimizer.SGD(momentum=0.9).create_state_multi_precision(
            0, mx.nd.zeros((2,), dtype='float16'))
    assert len([w for w in caught if 'multi_precision=True' in str(w.message)]) == 2
