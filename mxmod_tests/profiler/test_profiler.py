"""``mx.profiler``: what it records from executors, imperative calls, Custom operators, Module.fit
(data, kvstore, optimizer) and user objects; the Chrome trace file; states and dumps."""
import json
import os
import time
import warnings

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.profiler.state import PROFILER

from ..module.common import mlp_sym
from .tracing import load_trace, names

CPU0, CPU1 = 100, 101          # the tracks of cpu(0) and cpu(1)


def _start(tmp_path, **kwargs):
    path = str(tmp_path / 'trace.json')
    config = dict(profile_all=True, filename=path, continuous_dump=False)
    config.update(kwargs)
    mx.profiler.set_config(**config)
    mx.profiler.set_state('run')
    return path


def _finish(path):
    mx.profiler.set_state('stop')
    mx.profiler.dump()
    return load_trace(path)


def _run_executor(ctx):
    exe = mlp_sym().simple_bind(ctx, data=(4, 5))
    rng = np.random.RandomState(3)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape) if name != 'softmax_label' else [0, 1, 2, 1]
    exe.forward(is_train=True)
    exe.backward()
    return exe.outputs[0].asnumpy(), {k: v.asnumpy() for k, v in exe.grad_dict.items()}


def test_executor_operators_on_their_device_track(tmp_path):
    plain_out, plain_grads = _run_executor(mx.cpu(1))
    path = _start(tmp_path)
    out, grads = _run_executor(mx.cpu(1))
    events, threads, processes = _finish(path)
    np.testing.assert_array_equal(out, plain_out)          # profiling changes no result
    for name, grad in plain_grads.items():
        np.testing.assert_array_equal(grads[name], grad)
    ops = [e for e in events if e['cat'] == 'operator' and 'node' in e.get('args', {})]
    assert [e['name'] for e in ops] == [
        'FullyConnected', 'Activation', 'FullyConnected', 'SoftmaxOutput',
        '_backward_SoftmaxOutput', '_backward_FullyConnected', '_backward_Activation',
        '_backward_FullyConnected']
    assert [e['args']['node'] for e in ops[:4]] == ['fc1', 'relu1', 'fc2', 'softmax']
    assert all(e['ph'] == 'X' and e['dur'] >= 0 and e['pid'] == 0 and e['tid'] == CPU1
               for e in ops)
    starts = [e['ts'] for e in ops]
    assert starts == sorted(starts)
    assert threads[(0, CPU1)] == 'cpu(1)' and processes[0].startswith('rank 0 (')


def test_imperative_operators_and_custom_op_names(tmp_path):
    class AddOne(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] + 1)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 1)

    @mx.operator.register('ProfAddOne')
    class AddOneProp(mx.operator.CustomOpProp):  # pylint: disable=unused-variable
        def list_arguments(self):
            return ['data']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            return [in_shape[0]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return AddOne()

    path = _start(tmp_path, aggregate_stats=True)
    x = mx.nd.zeros((3, 4))
    mx.nd.sqrt(x + 1)
    x += 2
    exe = mx.sym.Custom(mx.sym.Variable('a'), op_type='ProfAddOne').simple_bind(mx.cpu(), a=(3, 4))
    exe.forward(is_train=True, a=x)
    exe.backward(mx.nd.ones((3, 4)))
    stats = json.loads(mx.profiler.dumps(format='json'))['Time']
    events, _, _ = _finish(path)
    assert names(events, 'operator', CPU0)[:4] == ['_zeros', '_plus_scalar', 'sqrt', '_plus_scalar']
    custom = set(names(events, 'Custom Operator'))
    assert {'ProfAddOne::pure_python', 'ProfAddOne::_plus_scalar',
            '_backward_ProfAddOne::pure_python', '_backward_ProfAddOne::_mul_scalar'} <= custom
    assert stats['operator']['_plus_scalar']['Count'] == 2
    assert stats['Custom Operator']['ProfAddOne::_plus_scalar']['Count'] == 1


def test_autograd_backward_records_backward_operators(tmp_path):
    # MXNet 1.9.1 (profile_imperative, aggregate_stats) counts an autograd backward of
    # FullyConnected -> relu -> sum as these operators (its SetValueOp/DeleteVariable are
    # engine internals without a counterpart here); the gradients are unchanged by profiling
    x, w = mx.nd.ones((3, 4)), mx.nd.ones((5, 4))
    for arr in (x, w):
        arr.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.sum(mx.nd.relu(mx.nd.FullyConnected(x, w, num_hidden=5, no_bias=True)))
    path = _start(tmp_path, profile_all=False, profile_imperative=True, aggregate_stats=True)
    loss.backward()
    stats = json.loads(mx.profiler.dumps(format='json'))['Time']['operator']
    events, _, _ = _finish(path)
    assert {k: v['Count'] for k, v in stats.items()} == {
        '_backward_FullyConnected': 1, '_backward_relu': 1, '_backward_sum': 1}
    assert names(events, 'operator', CPU0) == ['_backward_sum', '_backward_relu',
                                               '_backward_FullyConnected']
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((3, 4), 5.0))
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((5, 4), 3.0))


def test_fit_records_data_kvstore_optimizer_and_steps(tmp_path):
    rng = np.random.RandomState(0)
    train = mx.io.NDArrayIter(rng.randn(40, 5).astype('f'), rng.randint(0, 3, 40).astype('f'), 10)
    mod = mx.mod.Module(mlp_sym(), context=[mx.cpu(0), mx.cpu(1)])
    path = _start(tmp_path)
    mod.fit(train, num_epoch=1, optimizer_params={'learning_rate': 0.1})
    events, threads, _ = _finish(path)
    assert names(events, 'Data').count('NDArrayIter.next') == 5      # 4 batches and the end
    # one bucket per batch, pushed during backward; the new weights pulled after it
    assert names(events, 'KVStore').count('KVStore.push') == 4
    assert names(events, 'KVStore').count('KVStore.pull') == 4
    assert names(events, 'Optimizer').count('SGD.update') >= 4
    assert names(events, 'Module').count('Module.forward_backward') == 4
    for tid in (CPU0, CPU1):     # each device ran its half of every batch
        assert names(events, 'operator', tid).count('_backward_FullyConnected') == 8
    host = {e['tid'] for e in events if e['cat'] in ('Data', 'Module')}
    assert host == {1} and threads[(0, 1)] == 'python (main thread)'
    # gradient communication overlaps backward on the kvstore's communication thread
    comm = {e['tid'] for e in events if e['name'] in ('KVStore.push', 'KVStore.pull')}
    assert len(comm) == 1 and 'mxmod-comm' in threads[(0, comm.pop())]
    memory = [e for e in events if e['cat'] == 'Device Storage']
    assert {e['name'] for e in memory} == {'Memory: cpu/0', 'Memory: cpu/1'}
    assert all(e['args'][e['name']] >= 0 for e in memory)


def test_nothing_recorded_when_stopped_paused_or_not_in_mode(tmp_path):
    _run_executor(mx.cpu())
    mx.nd.ones((2,)) + 1
    assert not PROFILER.events
    path = _start(tmp_path, profile_all=False, profile_symbolic=False, profile_api=False,
                  profile_memory=False)
    _run_executor(mx.cpu())
    mx.profiler.pause()
    mx.nd.ones((2,)) * 3
    mx.profiler.resume()
    mx.nd.ones((2,)) + 1
    events, _, _ = _finish(path)
    ops = names(events, 'operator')
    assert 'FullyConnected' not in ops                  # executor steps are not imperative
    assert ops[-2:] == ['_ones', '_plus_scalar'] and '_mul_scalar' not in ops


def test_user_objects_and_scope(tmp_path):
    path = _start(tmp_path, aggregate_stats=True)
    domain = mx.profiler.Domain('Mine')
    with domain.new_task('work'):
        with mx.profiler.scope('outer'):
            with mx.profiler.scope('inner') as where:
                mx.nd.ones((2,)) + 1
    frame = mx.profiler.Frame(domain, 'iteration')
    frame.start()
    frame.stop()
    event = mx.profiler.Event('loading')
    event.start()
    event.stop()
    counter = domain.new_counter('items', 3)
    counter += 4
    domain.new_marker('here').mark('global')
    mx.profiler.Task(domain, 'never').stop()            # no error, as in MXNet
    events, _, _ = _finish(path)
    assert where == 'outer:inner:'
    assert [e['args']['scope'] for e in events if e['name'] == '_plus_scalar'] == ['outer:inner:']
    by_cat = {(e['cat'], e['name'], e['ph']) for e in events}
    assert {('Mine', 'work', 'X'), ('Mine,frame', 'iteration', 'X'), ('event', 'loading', 'X'),
            ('Mine', 'items', 'C'), ('Mine,instant_marker', 'here', 'i')} <= by_cat
    assert [e['args']['items'] for e in events if e['name'] == 'items'] == [3, 7]
    assert 'never' not in {e['name'] for e in events}   # stopped without a start: no event


def test_continuous_dump_appends_until_the_final_dump(tmp_path):
    path = _start(tmp_path, continuous_dump=True, dump_period=0.05)
    mx.nd.ones((2,)) + 1
    mx.profiler.dump(False)
    first = os.path.getsize(path)
    with open(path) as src:
        assert src.read().startswith('{\n    "traceEvents": [')
    mx.nd.ones((2,)) * 2
    deadline = time.time() + 10
    while os.path.getsize(path) == first and time.time() < deadline:
        time.sleep(0.02)     # the periodic dump appends the new events
    assert os.path.getsize(path) > first
    mx.nd.ones((2,)) - 1
    events, _, _ = _finish(path)
    assert names(events, 'operator') == ['_ones', '_plus_scalar', '_ones', '_mul_scalar', '_ones',
                                         '_minus_scalar']
    with pytest.raises(MXNetError, match="hasn't been run"):
        mx.profiler.dump()


def test_config_and_state_errors(tmp_path):
    with pytest.raises(MXNetError, match='profile_everything'):
        mx.profiler.set_config(profile_everything=True)
    with pytest.raises(MXNetError, match='boolean'):
        mx.profiler.set_config(profile_api='maybe')
    with pytest.raises(MXNetError, match="'run' or 'stop'"):
        mx.profiler.set_state('go')
    with pytest.raises(MXNetError, match='server'):
        mx.profiler.set_state('run', profile_process='server')
    with pytest.raises(MXNetError, match="hasn't been run"):
        mx.profiler.dump()
    stale = tmp_path / 'stale.json'
    stale.write_text('old')
    mx.profiler.set_config(filename=str(stale))
    assert not stale.exists()                   # a new configuration starts a new file


def test_deprecated_functions(tmp_path):
    path = str(tmp_path / 'old.json')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        mx.profiler.profiler_set_config(mode='all', filename=path)
        mx.profiler.profiler_set_state('run')
        mx.nd.ones((2,))
        mx.profiler.profiler_set_state('stop')
        mx.profiler.dump_profile()
    assert len(caught) == 4 and all('deprecated' in str(w.message) for w in caught)
    events, _, _ = load_trace(path)
    assert names(events, 'operator') == ['_ones']


@pytest.mark.parametrize('mode,expected', [('13', {'operator', 'Module'}), ('2', {'operator'})])
def test_autostart_writes_profile_json_at_exit(tmp_path, mode, expected):
    import subprocess  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel
    code = ('import mxmod as mx, numpy as np\n'
            'it = mx.io.NDArrayIter(np.ones((8, 5), "f"), np.zeros(8, "f"), 4)\n'
            'mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"),'
            ' num_hidden=2), name="softmax")).fit(it, num_epoch=1)\n')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, MXNET_PROFILER_AUTOSTART='1', MXNET_PROFILER_MODE=mode,
               PYTHONPATH=root)
    for name in ('MXMOD_RANK', 'PMI_RANK', 'OMPI_COMM_WORLD_RANK'):
        env.pop(name, None)
    subprocess.run([sys.executable, '-c', code], cwd=str(tmp_path), env=env, check=True)
    events, _, _ = load_trace(str(tmp_path / 'profile.json'))
    categories = {e['cat'] for e in events}
    assert expected <= categories
    steps = {e['name'] for e in events if 'node' in e.get('args', {})}
    assert ('FullyConnected' in steps) == (mode == '13')    # mask 2: imperative only
    (tmp_path / 'profile.json').unlink()
    subprocess.run([sys.executable, '-c', 'import mxmod'], cwd=str(tmp_path), env=env, check=True)
    assert not (tmp_path / 'profile.json').exists()         # nothing recorded, no file


def test_configuring_a_device_or_pipe_as_the_trace_file_leaves_it_in_place(tmp_path):
    """set_config deletes a trace left by an earlier run, but only a regular file: as root,
    filename='/dev/null' used to unlink the device itself."""
    import stat
    fifo = str(tmp_path / 'trace-pipe')
    os.mkfifo(fifo)
    target = tmp_path / 'real.json'
    target.write_text('old')
    link = str(tmp_path / 'link.json')
    os.symlink(str(target), link)
    stale = tmp_path / 'stale.json'
    stale.write_text('old trace')
    for name in (fifo, link, str(stale)):
        mx.profiler.set_config(filename=name, continuous_dump=False)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert os.path.islink(link) and target.read_text() == 'old'
    assert not stale.exists()
