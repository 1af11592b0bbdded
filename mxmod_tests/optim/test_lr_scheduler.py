"""Learning-rate schedulers: MXNet's step boundaries, warmup, logging and argument checks."""
import logging
import math

import pytest

import mxmod as mx

lrs = mx.lr_scheduler


def test_factor_boundaries_are_strict_and_floored():
    sched = lrs.FactorScheduler(step=100, factor=0.1, stop_factor_lr=1e-4, base_lr=1,
                                warmup_steps=20, warmup_begin_lr=0.1, warmup_mode='constant')
    assert sched(0) == 0.1 and sched(19) == 0.1
    assert sched(20) == 1 and sched(100) == 1
    assert sched(101) == pytest.approx(0.1) and sched(200) == pytest.approx(0.1)
    assert sched(201) == pytest.approx(0.01)
    assert sched(1000) == 1e-4
    assert sched(50) == 1e-4          # stateful: never goes back up


def test_multifactor_steps_and_linear_warmup():
    sched = lrs.MultiFactorScheduler([15, 25], factor=0.1, base_lr=0.1, warmup_steps=10,
                                     warmup_begin_lr=0.05)
    assert sched(0) == 0.05
    assert sched(5) == pytest.approx(0.075)
    assert sched(15) == pytest.approx(0.1)
    assert sched(16) == pytest.approx(0.01)
    assert sched(25) == pytest.approx(0.01)
    assert sched(26) == pytest.approx(0.001) and sched(100) == pytest.approx(0.001)
    assert sched.cur_step_ind == 2 and sched.count == 25


def test_poly_and_cosine_shapes():
    poly = lrs.PolyScheduler(1000, base_lr=3, pwr=2, final_lr=0, warmup_steps=100)
    assert poly(0) == 0 and poly(50) == pytest.approx(1.5) and poly(100) == pytest.approx(3)
    assert poly(550) == pytest.approx(3 * 0.5 ** 2)
    assert poly(1000) == pytest.approx(0) and poly(5000) == pytest.approx(0)
    cosine = lrs.CosineScheduler(1000, base_lr=3, final_lr=0.1)
    assert cosine(0) == pytest.approx(3) and cosine(1000) == pytest.approx(0.1)
    assert cosine(250) == pytest.approx(0.1 + 2.9 * (1 + math.cos(math.pi / 4)) / 2)
    assert cosine(2000) == cosine(250)    # past max_update the last computed rate is kept
    cosine(1000)
    assert cosine(2000) == pytest.approx(0.1)


def test_logging_messages(caplog):
    with caplog.at_level(logging.INFO):
        sched = lrs.FactorScheduler(step=2, factor=0.5, stop_factor_lr=0.3, base_lr=1.0)
        sched(3)
        sched(5)
        lrs.MultiFactorScheduler([1], factor=0.5, base_lr=1.0)(2)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ['Update[3]: Change learning rate to 5.00000e-01',
                        'Update[5]: now learning rate arrived at 3.00000e-01, will not change in '
                        'the future',
                        'Update[2]: Change learning rate to 5.00000e-01']


@pytest.mark.parametrize('make,error', [
    (lambda: lrs.FactorScheduler(0), ValueError),
    (lambda: lrs.FactorScheduler(1, factor=1.5), ValueError),
    (lambda: lrs.MultiFactorScheduler([3, 2]), ValueError),
    (lambda: lrs.MultiFactorScheduler([0]), ValueError),
    (lambda: lrs.MultiFactorScheduler(5), TypeError),
    (lambda: lrs.PolyScheduler(0), ValueError),
    (lambda: lrs.CosineScheduler(10.0), TypeError),
    (lambda: lrs.LRScheduler(warmup_steps=1.5), TypeError),
    (lambda: lrs.LRScheduler(warmup_steps=-1), ValueError),
    (lambda: lrs.LRScheduler(base_lr=0.1, warmup_begin_lr=0.2), ValueError),
    (lambda: lrs.LRScheduler(warmup_mode='exp'), ValueError),
])
def test_invalid_arguments(make, error):
    with pytest.raises(error):
        make()


def test_base_class_is_abstract_and_warmup_bounds():
    sched = lrs.LRScheduler(base_lr=1.0, warmup_steps=4)
    assert sched.get_warmup_lr(2) == 0.5
    with pytest.raises(ValueError):
        sched.get_warmup_lr(4)
    with pytest.raises(NotImplementedError):
        sched(0)
