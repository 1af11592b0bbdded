"""BaseModule.fit / score call order, frozen from MXNet 1.9.1 running the same recording module
(bind, init, per batch: tic, forward_backward, update, label read, update_metric, next batch +
prepare, toc, callbacks; epoch end: get_params/set_params, callback, validation, reset)."""
import mxmod as mx

MXNET_EVENTS = [
    'bind', 'install_monitor', 'init_params', 'init_optimizer', 'iter', 'next0', 'tic',
    'forward0:True', 'backward', 'update', 'label0', 'update_metric', 'next1', 'prepare1',
    'toc', 'batch_end0/0', 'tic', 'forward1:True', 'backward', 'update', 'label1',
    'update_metric', 'next2', 'prepare2', 'toc', 'batch_end0/1', 'tic', 'forward2:True',
    'backward', 'update', 'label2', 'update_metric', 'stop', 'toc', 'batch_end0/2',
    'get_params', 'set_params', 'epoch_end0', 'reset', 'iter', 'next0', 'prepare0',
    'forward0:False', 'label0', 'update_metric', 'eval_batch_end0/0', 'next1', 'prepare1',
    'forward1:False', 'label1', 'update_metric', 'eval_batch_end0/1', 'stop', 'eval_end0/2',
    'reset', 'iter', 'next0', 'tic', 'forward0:True', 'backward', 'update', 'label0',
    'update_metric', 'next1', 'prepare1', 'toc', 'batch_end1/0', 'tic', 'forward1:True',
    'backward', 'update', 'label1', 'update_metric', 'next2', 'prepare2', 'toc', 'batch_end1/1',
    'tic', 'forward2:True', 'backward', 'update', 'label2', 'update_metric', 'stop', 'toc',
    'batch_end1/2', 'get_params', 'set_params', 'epoch_end1', 'reset', 'iter', 'next0',
    'prepare0', 'forward0:False', 'label0', 'update_metric', 'eval_batch_end1/0', 'next1',
    'prepare1', 'forward1:False', 'label1', 'update_metric', 'eval_batch_end1/1', 'stop',
    'eval_end1/2', 'reset',

]


def _recording_module(log):
    class Batch(object):
        def __init__(self, i):
            self.i = i
            self.pad = 0
            self.data = [mx.nd.ones((2, 1)) * i]

        @property
        def label(self):
            log.append('label%d' % self.i)
            return [mx.nd.zeros((2,))]

    class Iter(object):
        def __init__(self, n):
            self.n, self.k = n, 0
            self.provide_data = [('data', (2, 1))]
            self.provide_label = None

        def __iter__(self):
            log.append('iter')
            self.k = 0
            return self

        def __next__(self):
            if self.k >= self.n:
                log.append('stop')
                raise StopIteration
            self.k += 1
            log.append('next%d' % (self.k - 1))
            return Batch(self.k - 1)

        def reset(self):
            log.append('reset')

    class Monitor(object):
        def tic(self):
            log.append('tic')

        def toc_print(self):
            log.append('toc')

    class Recorder(mx.mod.BaseModule):
        def bind(self, *args, **kwargs):
            log.append('bind')
            self.binded = True

        def init_params(self, *args, **kwargs):
            log.append('init_params' if kwargs.get('initializer') is not None else 'set_params')
            self.params_initialized = True

        def init_optimizer(self, *args, **kwargs):
            log.append('init_optimizer')

        def install_monitor(self, mon):
            log.append('install_monitor')

        def forward(self, data_batch, is_train=None):
            log.append('forward%d:%s' % (data_batch.i, is_train))

        def backward(self, out_grads=None):
            log.append('backward')

        def update(self):
            log.append('update')

        def update_metric(self, eval_metric, labels, pre_sliced=False):
            log.append('update_metric')

        def prepare(self, data_batch, sparse_row_id_fn=None):
            log.append('prepare%d' % data_batch.i)

        def get_params(self):
            log.append('get_params')
            return ({}, {})

    return Recorder(), Iter, Monitor


def test_fit_and_score_event_order_matches_mxnet():
    log = []
    mod, Iter, Monitor = _recording_module(log)
    mod.fit(Iter(3), eval_data=Iter(2), num_epoch=2, monitor=Monitor(),
            batch_end_callback=lambda p: log.append('batch_end%d/%d' % (p.epoch, p.nbatch)),
            epoch_end_callback=lambda e, s, a, x: log.append('epoch_end%d' % e),
            eval_batch_end_callback=lambda p: log.append('eval_batch_end%d/%d'
                                                         % (p.epoch, p.nbatch)),
            eval_end_callback=lambda p: log.append('eval_end%d/%d' % (p.epoch, p.nbatch)))
    assert log == MXNET_EVENTS


def test_fit_requires_num_epoch():
    log = []
    mod, Iter, _ = _recording_module(log)
    try:
        mod.fit(Iter(1))
    except ValueError as err:
        assert 'num_epoch' in str(err)
    else:
        raise AssertionError('fit without num_epoch must raise')
