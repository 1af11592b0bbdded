"""Learning-rate schedules: ``mx.lr_scheduler`` (factor, multi-factor, polynomial, cosine, warmup).

A scheduler is called with ``num_update``, the largest number of updates any weight has had, and
returns the learning rate. Attribute names follow MXNet's so that optimizers pickled with their
scheduler (``Updater.get_states(dump_optimizer=True)``) move between MXNet and mxmod."""
import logging
from math import cos, pi

from .argcheck import real_number

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler',
           'CosineScheduler']


def _check_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError('%s must be an int, got %r (%s)' % (name, value, type(value).__name__))


class LRScheduler(object):
    """Base class of learning-rate schedulers.

    Parameters
    ----------
    base_lr : float, optional
        The learning rate after warmup.
    warmup_steps : int, optional
        Number of updates spent warming up before the schedule proper starts.
    warmup_begin_lr : float, optional
        The learning rate warmup starts from.
    warmup_mode : {'linear', 'constant'}, optional
        'linear' rises from ``warmup_begin_lr`` to ``base_lr`` in equal steps; 'constant' stays at
        ``warmup_begin_lr`` for the whole warmup.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        what = type(self).__name__
        base_lr = real_number(base_lr, '%s: base_lr' % what, minimum=0)
        warmup_begin_lr = real_number(warmup_begin_lr, '%s: warmup_begin_lr' % what, minimum=0)
        self.base_lr = base_lr
        _check_int('warmup_steps', warmup_steps)
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError('Base lr has to be higher than warmup_begin_lr (got base_lr=%s, '
                             'warmup_begin_lr=%s)' % (base_lr, warmup_begin_lr))
        if self.warmup_steps < 0:
            raise ValueError('Warmup steps has to be positive or 0, got %d' % warmup_steps)
        if warmup_mode not in ('linear', 'constant'):
            raise ValueError("Supports only linear and constant modes of warmup, got %r"
                             % (warmup_mode,))
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The learning rate during warmup (``num_update < warmup_steps``)."""
        if num_update >= self.warmup_steps:
            raise ValueError('get_warmup_lr: num_update %d is past the %d warmup steps'
                             % (num_update, self.warmup_steps))
        if self.warmup_mode == 'linear':
            increase = (self.warmup_final_lr - self.warmup_begin_lr) \
                * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        raise ValueError('Invalid warmup mode %s' % self.warmup_mode)

    def __call__(self, num_update):
        """Return the learning rate for ``num_update`` (the largest per-weight update count)."""
        raise NotImplementedError('must override this')


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates.

    The rate changes when ``num_update`` exceeds the last change point by more than ``step``
    (so with step=100 the first change happens at update 101), and never falls below
    ``stop_factor_lr``. The scheduler is stateful: it remembers how many steps it has applied.

    Parameters
    ----------
    step : int
        Updates between two changes (>= 1).
    factor : float, optional
        Multiplier applied at each change (<= 1).
    stop_factor_lr : float, optional
        Floor of the learning rate.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super(FactorScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_int('step', step)
        factor = real_number(factor, 'FactorScheduler: factor', minimum=0)
        stop_factor_lr = real_number(stop_factor_lr, 'FactorScheduler: stop_factor_lr')
        if step < 1:
            raise ValueError('Schedule step must be greater or equal than 1 round, got %s' % step)
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce, got %s' % factor)
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info('Update[%d]: now learning rate arrived at %0.5e, will not '
                             'change in the future', num_update, self.base_lr)
            else:
                logging.info('Update[%d]: Change learning rate to %0.5e',
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` each time ``num_update`` passes a listed step.

    The change for step ``s`` happens when ``num_update > s`` (strictly).

    Parameters
    ----------
    step : list of int
        Increasing update counts (each >= 1).
    factor : float, optional
        Multiplier applied at each listed step (<= 1).
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super(MultiFactorScheduler, self).__init__(base_lr, warmup_steps,
                                                   warmup_begin_lr, warmup_mode)
        factor = real_number(factor, 'MultiFactorScheduler: factor', minimum=0)
        if not isinstance(step, list) or not step:
            raise TypeError('MultiFactorScheduler: step must be a non-empty list of ints, got %r'
                            % (step,))
        for i, value in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError('Schedule step must be an increasing integer list, got %r'
                                 % (step,))
            if value < 1:
                raise ValueError('Schedule step must be greater or equal than 1 round, got %r'
                                 % (step,))
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce, got %s' % factor)
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update <= self.step[self.cur_step_ind]:
                return self.base_lr
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info('Update[%d]: Change learning rate to %0.5e', num_update, self.base_lr)
        return self.base_lr


class PolyScheduler(LRScheduler):
    """Polynomial decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates.

    After warmup: ``final_lr + (base_lr - final_lr) * (1 - (n - warmup)/(max_update - warmup))**pwr``
    for ``n <= max_update``; later calls keep the last rate.

    Parameters
    ----------
    max_update : int
        Update count at which ``final_lr`` is reached (>= 1).
    base_lr : float, optional
        Starting learning rate.
    pwr : int, optional
        Power of the decay.
    final_lr : float, optional
        Learning rate reached at ``max_update``.
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super(PolyScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_int('max_update', max_update)
        pwr = real_number(pwr, 'PolyScheduler: pwr')
        final_lr = real_number(final_lr, 'PolyScheduler: final_lr', minimum=0)
        if max_update < 1:
            raise ValueError('maximum number of updates must be strictly positive, got %d'
                             % max_update)
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            progress = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                pow(1 - progress, self.power)
        return self.base_lr


class CosineScheduler(LRScheduler):
    """Cosine decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates.

    After warmup: ``final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup)/(max_update -
    warmup))) / 2`` for ``n <= max_update``; later calls keep the last rate.

    Parameters
    ----------
    max_update : int
        Update count at which ``final_lr`` is reached (>= 1).
    base_lr : float, optional
        Starting learning rate.
    final_lr : float, optional
        Learning rate reached at ``max_update``.
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super(CosineScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_int('max_update', max_update)
        final_lr = real_number(final_lr, 'CosineScheduler: final_lr', minimum=0)
        if max_update < 1:
            raise ValueError('maximum number of updates must be strictly positive, got %d'
                             % max_update)
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                (1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps)) / 2
        return self.base_lr
