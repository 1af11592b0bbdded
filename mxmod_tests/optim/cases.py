"""The optimizer and scheduler cases frozen from MXNet 1.9.1 (shared by the generator and tests).

Plain data only: this file is imported both by gen_oracle.py under MXNet's interpreter and by the
mxmod tests."""

SHAPES = [(3, 4), (5, 2)]        # index 0 'fc1_weight', index 1 'fc1_bias'
NAMES = {0: 'fc1_weight', 1: 'fc1_bias'}
STEPS = 5

_SCHED_FACTOR = ['FactorScheduler', {'step': 2, 'factor': 0.5, 'base_lr': 0.1}]
_SCHED_MULTI = ['MultiFactorScheduler', {'step': [1, 3], 'factor': 0.3, 'base_lr': 0.2,
                                         'warmup_steps': 1, 'warmup_begin_lr': 0.05}]
_SCHED_POLY = ['PolyScheduler', {'max_update': 4, 'base_lr': 0.1, 'pwr': 2, 'final_lr': 0.01}]
_SCHED_COS = ['CosineScheduler', {'max_update': 4, 'base_lr': 0.1, 'final_lr': 0.01,
                                  'warmup_steps': 1, 'warmup_mode': 'constant',
                                  'warmup_begin_lr': 0.02}]
_FULL = {'wd': 0.03, 'clip_gradient': 0.5, 'rescale_grad': 0.7}

# name -> (optimizer, kwargs, dtype, lr_scheduler or None, lr_mult, wd_mult)
CASES = {
    'sgd_plain': ('sgd', {'learning_rate': 0.1}, 'float32', None, {}, {}),
    'sgd_full': ('sgd', dict(_FULL, momentum=0.9, learning_rate=0.1), 'float32', None,
                 {'fc1_weight': 0.5}, {'fc1_bias': 2.0}),
    'sgd_nomom_wd': ('sgd', {'learning_rate': 0.1, 'wd': 0.05, 'rescale_grad': 0.5}, 'float32',
                     _SCHED_FACTOR, {}, {}),
    'sgd_sched': ('sgd', {'momentum': 0.8}, 'float32', _SCHED_MULTI, {1: 3.0}, {}),
    'sgd_f64': ('sgd', dict(_FULL, momentum=0.9, learning_rate=0.1), 'float64', None, {}, {}),
    'sgd_mp': ('sgd', dict(_FULL, momentum=0.9, learning_rate=0.1, multi_precision=True),
               'float16', None, {}, {}),
    'sgd_mp_nomom': ('sgd', {'learning_rate': 0.1, 'multi_precision': True, 'wd': 0.01},
                     'float16', None, {}, {}),
    'nag': ('nag', dict(_FULL, momentum=0.9, learning_rate=0.1), 'float32', None, {}, {}),
    'nag_nomom': ('nag', {'learning_rate': 0.1, 'wd': 0.02}, 'float32', _SCHED_POLY, {}, {}),
    'nag_mp': ('nag', dict(_FULL, momentum=0.9, learning_rate=0.1, multi_precision=True),
               'float16', None, {}, {}),
    'adam': ('adam', dict(_FULL), 'float32', None, {'fc1_weight': 2.0}, {}),
    'adam_default': ('adam', {}, 'float32', _SCHED_COS, {}, {}),
    'adam_mp': ('adam', dict(_FULL, multi_precision=True), 'float16', None, {}, {}),
    'adamax': ('adamax', dict(_FULL), 'float32', None, {}, {}),
    'nadam': ('nadam', dict(_FULL), 'float32', None, {}, {}),
    'adagrad': ('adagrad', dict(_FULL, learning_rate=0.1), 'float32', None, {}, {}),
    'rmsprop': ('rmsprop', dict(_FULL), 'float32', None, {}, {}),
    'rmsprop_centered': ('rmsprop', dict(_FULL, centered=True, clip_weights=0.9), 'float32', None,
                         {}, {}),
    'adadelta': ('adadelta', dict(_FULL), 'float32', None, {}, {}),
    'signum': ('signum', dict(_FULL, wd_lh=0.01), 'float32', None, {}, {}),
    'signsgd': ('signum', {'momentum': 0.0, 'wd': 0.02}, 'float32', None, {}, {}),
    'ftrl': ('ftrl', dict(_FULL, lamda1=0.01), 'float32', None, {}, {}),
    'ftml': ('ftml', dict(_FULL, learning_rate=0.05), 'float32', None, {}, {}),
    'dcasgd': ('dcasgd', dict(_FULL, learning_rate=0.1), 'float32', None, {}, {}),
    'lamb': ('lamb', dict(_FULL, learning_rate=0.01), 'float32', None, {}, {}),
    'lamb_bounds': ('lamb', {'lower_bound': 0.5, 'upper_bound': 1.5, 'bias_correction': False},
                    'float32', None, {}, {}),
    'lamb_mp': ('lamb', dict(_FULL, learning_rate=0.01, multi_precision=True), 'float16', None,
                {}, {}),
    'test': ('test', {'rescale_grad': 0.5}, 'float32', None, {}, {}),
    'lars': ('lars', dict(_FULL, momentum=0.9, eta=0.01, eps=1e-3), 'float32', _SCHED_FACTOR,
             {}, {}),
    'lars_mp': ('lars', dict(_FULL, momentum=0.9, multi_precision=True), 'float16', None, {},
                {}),
    'lbsgd': ('lbsgd', dict(_FULL, momentum=0.9, batch_scale=2, warmup_epochs=1,
                            updates_per_epoch=4), 'float32', None, {}, {}),
    'lbsgd_lars': ('lbsgd', dict(_FULL, warmup_strategy='lars', batch_scale=1), 'float32',
                   None, {}, {}),
    'groupadagrad': ('groupadagrad', {'clip_gradient': 0.5, 'rescale_grad': 0.7,
                                      'learning_rate': 0.1}, 'float32', None, {}, {}),
}

# scheduler name -> (class, kwargs, num_updates queried in order)
SCHEDULES = {
    'factor': ['FactorScheduler', {'step': 3, 'factor': 0.5, 'stop_factor_lr': 0.02, 'base_lr': 0.1,
                                   'warmup_steps': 2, 'warmup_begin_lr': 0.01}],
    'factor_const': ['FactorScheduler', {'step': 1, 'factor': 0.9, 'warmup_steps': 3,
                                         'warmup_begin_lr': 0.001, 'warmup_mode': 'constant'}],
    'multi': ['MultiFactorScheduler', {'step': [2, 5, 6], 'factor': 0.1, 'base_lr': 1.0}],
    'poly': ['PolyScheduler', {'max_update': 7, 'base_lr': 0.5, 'pwr': 3, 'final_lr': 0.05,
                               'warmup_steps': 2}],
    'cosine': ['CosineScheduler', {'max_update': 9, 'base_lr': 0.3, 'final_lr': 0.01}],
}
SCHEDULE_QUERIES = [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20, 6]

# update operators called directly: name -> (input names, kwargs)
OPS = {
    'sgd_update': (['weight', 'grad'], {'lr': 0.1, 'wd': 0.03, 'rescale_grad': 0.7,
                                        'clip_gradient': 0.5}),
    'sgd_update_noclip': (['weight', 'grad'], {'lr': 0.1, 'wd': 0.03, 'rescale_grad': 0.7}),
    'sgd_mom_update': (['weight', 'grad', 'mom'], {'lr': 0.1, 'momentum': 0.9, 'wd': 0.03,
                                                   'rescale_grad': 0.7}),
    'nag_mom_update': (['weight', 'grad', 'mom'], {'lr': 0.1, 'momentum': 0.9, 'wd': 0.03,
                                                   'clip_gradient': 0.3}),
    'signsgd_update': (['weight', 'grad'], {'lr': 0.1, 'wd': 0.03}),
    'signum_update': (['weight', 'grad', 'mom'], {'lr': 0.1, 'momentum': 0.9, 'wd': 0.03,
                                                  'wd_lh': 0.01}),
    'rmsprop_update': (['weight', 'grad', 'n'], {'lr': 0.01, 'clip_weights': 0.8}),
    'ftml_update': (['weight', 'grad', 'd', 'v', 'z'], {'lr': 0.1, 't': 3, 'clip_grad': 0.4}),
    'lamb_update_phase1': (['weight', 'grad', 'mean', 'var'], {'t': 2, 'wd': 0.01}),
    'multi_sgd_mom_update': (['weight_0', 'grad_0', 'mom_0', 'weight_1', 'grad_1', 'mom_1'],
                             {'lrs': (0.1, 0.2), 'wds': (0.01, 0.0), 'momentum': 0.9,
                              'num_weights': 2, 'clip_gradient': 0.5}),
}
