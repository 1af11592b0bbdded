"""ops/blas.py: the dense layers' products on Intel MKL (when installed) against numpy's."""
import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import mxmod as mx
from mxmod.ops import blas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_MKL = blas.backend() == 'mkl'
needs_mkl = pytest.mark.skipif(not HAVE_MKL, reason='Intel MKL (pip install mkl) not installed')


@pytest.fixture
def numpy_backend():
    """numpy's products for one test; the previous backend back afterwards."""
    before = blas.backend()
    blas.set_backend('numpy')
    yield
    blas.set_backend('auto' if before == 'mkl' else 'numpy')


def _layouts(rs, rows, cols, dtype):
    """The same matrix as a C-ordered array, a Fortran-ordered one, a view with padded rows,
    the transpose of a C-ordered array, and two layouts no GEMM takes (every other column,
    reversed rows)."""
    base = rs.randn(rows, cols).astype(dtype)
    padded = np.zeros((rows, cols + 3), dtype)
    padded[:, :cols] = base
    wide = np.zeros((rows, 2 * cols), dtype)
    wide[:, ::2] = base
    return {'c': base, 'f': np.asfortranarray(base), 'padded': padded[:, :cols],
            'transposed': np.ascontiguousarray(base.T).T, 'strided': wide[:, ::2],
            'reversed': base[::-1].copy()[::-1]}


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_products_of_every_layout_match_numpy(dtype):
    rs = np.random.RandomState(0)
    m, k, n = 96, 130, 70
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-10)
    for name_a, a in _layouts(rs, m, k, dtype).items():
        for name_b, b in _layouts(rs, k, n, dtype).items():
            want = np.matmul(a.astype(np.float64), b.astype(np.float64))
            got = blas.matmul(a, b)
            assert got.dtype == dtype and got.shape == (m, n), (name_a, name_b)
            np.testing.assert_allclose(got, want, err_msg='%s x %s' % (name_a, name_b), **tol)
            out = np.full((m, n), np.nan, dtype)
            assert blas.matmul(a, b, out=out) is out
            np.testing.assert_allclose(out, want, err_msg='%s x %s' % (name_a, name_b), **tol)


def test_what_no_gemm_takes_goes_to_numpy():
    rs = np.random.RandomState(1)
    a = rs.randn(64, 64).astype(np.float32)
    b = rs.randn(64, 64).astype(np.float32)
    # a product into one of its operands: numpy buffers it, so must we
    want = a @ b
    assert blas.matmul(a, b, out=a) is a
    np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-4)
    # mixed dtypes, integers, non-native byte order, small and empty products, N-d stacks
    c = rs.randn(64, 64)
    np.testing.assert_allclose(blas.matmul(b, c), b @ c, rtol=1e-6)
    ints = rs.randint(-5, 5, size=(64, 64))
    np.testing.assert_array_equal(blas.matmul(ints, ints), ints @ ints)
    swapped = b.astype('>f4')
    np.testing.assert_allclose(blas.matmul(swapped, b), b @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(blas.matmul(b[:4, :4], b[:4, :4]), b[:4, :4] @ b[:4, :4])
    assert blas.matmul(np.zeros((0, 64), np.float32), b).shape == (0, 64)
    raw = np.zeros(64 * 64 * 4 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(64, 64)
    unaligned[...] = b
    assert not unaligned.flags.aligned
    np.testing.assert_allclose(blas.matmul(unaligned, b), b @ b, rtol=1e-5, atol=1e-4)
    stack = rs.randn(3, 64, 64).astype(np.float32)
    np.testing.assert_allclose(blas.matmul(stack, b), stack @ b, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError):
        blas.matmul(b, rs.randn(63, 64).astype(np.float32))
    frozen = np.zeros((64, 64), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        blas.matmul(b, b, out=frozen)


@needs_mkl
def test_mkl_results_do_not_depend_on_threads_or_alignment():
    """MKL's reproducible mode: the same bits at one and two threads (the governor changes the
    count with the machine's load) and for operands at other addresses; a product with a long
    inner dimension, which MKL splits between threads when not told otherwise."""
    rs = np.random.RandomState(2)
    a = rs.randn(64, 4096).astype(np.float32)
    b = rs.randn(4096, 500).astype(np.float32)
    results = []
    for threads in (1, 2, 1, 2):
        with threadpool_limits(threads, user_api='blas'):
            results.append(blas.matmul(a, b))
    shifted = np.empty(a.size + 1, np.float32)[1:].reshape(a.shape)
    shifted[...] = a
    results.append(blas.matmul(shifted, b))
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    np.testing.assert_allclose(results[0], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


@needs_mkl
def test_mkl_takes_the_governors_thread_count():
    names = {lib['internal_api']: lib['num_threads'] for lib in threadpool_info()}
    assert 'mkl' in names
    gov = mx.threads.GOVERNOR
    if gov.mode != 'env':
        # one thread while the compiled kernels run on several (threads.kernels_threaded)
        expected = 1 if gov.blas_single else gov.threads
        assert names['mkl'] == names['openblas'] == expected
    saved = gov.threads
    with threadpool_limits(limits=None):        # every library's count restored on exit
        try:
            gov.apply(1)
            assert {lib['num_threads'] for lib in threadpool_info()
                    if lib['user_api'] == 'blas'} == {1}
        finally:
            gov.threads = saved


def _train(seed_data=0):
    """Parameters after 20 SGD steps of an MLP with products large enough for MKL."""
    rs = np.random.RandomState(seed_data)
    x = rs.randn(256, 300).astype(np.float32)
    y = rs.randint(0, 10, size=256).astype(np.float32)
    net = mx.sym.Variable('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(net, num_hidden=256, name='fc1'), 'relu')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=10, name='fc2'),
                               name='softmax')
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(data_shapes=[('data', (128, 300))], label_shapes=[('softmax_label', (128,))])
    mx.random.seed(3)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    it = mx.io.NDArrayIter(x, y, batch_size=128)
    for _ in range(10):
        it.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


@needs_mkl
def test_training_on_mkl_repeats_bit_for_bit_and_agrees_with_numpy(numpy_backend):
    on_numpy = _train()
    blas.set_backend('mkl')
    first, second = _train(), _train()
    for name, value in first.items():
        np.testing.assert_array_equal(second[name], value, err_msg=name)
        np.testing.assert_allclose(value, on_numpy[name], rtol=1e-3, atol=1e-4, err_msg=name)


def test_fully_connected_gradients_match_on_either_backend(numpy_backend):
    """FullyConnected's forward and backward through blas.matmul (both backends) against numpy
    in float64."""
    rs = np.random.RandomState(4)
    x = rs.randn(64, 3, 50).astype(np.float32)
    w = rs.randn(120, 150).astype(np.float32)
    bias = rs.randn(120).astype(np.float32)
    dy = rs.randn(64, 120).astype(np.float32)
    want_y = x.reshape(64, -1).astype(np.float64) @ w.T + bias
    want_dx = (dy.astype(np.float64) @ w).reshape(x.shape)
    want_dw = dy.astype(np.float64).T @ x.reshape(64, -1)
    for backend in ('numpy', 'auto'):
        blas.set_backend(backend)
        args = {'data': mx.nd.array(x), 'fc_weight': mx.nd.array(w), 'fc_bias': mx.nd.array(bias)}
        grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
        sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=120, name='fc')
        exe = sym.bind(mx.cpu(), args, args_grad=grads)
        y = exe.forward(is_train=True)[0].asnumpy()
        exe.backward([mx.nd.array(dy)])
        np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-3, err_msg=backend)
        np.testing.assert_allclose(grads['data'].asnumpy(), want_dx, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(grads['fc_weight'].asnumpy(), want_dw, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(grads['fc_bias'].asnumpy(), dy.sum(0), rtol=1e-4, atol=1e-3)


def _child(code, **env):
    environ = dict(os.environ, PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, '-c', code], env=environ, capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_backend_variable_is_checked_and_obeyed():
    code = ('import numpy as np\nfrom mxmod.ops import blas\n'
            'a = np.ones((128, 128), np.float32)\nblas.matmul(a, a)\nprint(blas.backend())')
    bad = _child(code, MXMOD_BLAS='fast')
    assert bad.returncode != 0
    assert 'MXMOD_BLAS must be one of auto, mkl, numpy' in bad.stderr and "'fast'" in bad.stderr
    plain = _child(code, MXMOD_BLAS='numpy')
    assert plain.returncode == 0 and plain.stdout.split()[-1] == 'numpy', plain.stderr
    with pytest.raises(ValueError, match='blas backend must be one of'):
        blas.set_backend('openblas')


def test_asking_for_a_missing_mkl_names_it():
    code = ('import numpy as np\nfrom mxmod.ops import blas\n'
            'blas._mkl_paths = lambda search_system=False: []\n'
            'a = np.ones((128, 128), np.float32)\nblas.matmul(a, a)')
    missing = _child(code, MXMOD_BLAS='mkl')
    assert missing.returncode != 0
    assert 'MXMOD_BLAS=mkl: Intel MKL could not be loaded' in missing.stderr
    assert 'pip install mkl' in missing.stderr
    quiet = _child(code + '\nprint(blas.backend())', MXMOD_BLAS='auto')
    assert quiet.returncode == 0 and quiet.stdout.split()[-1] == 'numpy', quiet.stderr


def test_dot_operator_on_either_backend(numpy_backend):
    """mx.nd.dot / sym.dot (MXNet's matrix rule, transposes included) through blas.matmul."""
    rs = np.random.RandomState(5)
    a = rs.randn(4, 30, 40).astype(np.float32)
    b = rs.randn(40, 50).astype(np.float32)
    for backend in ('numpy', 'auto'):
        blas.set_backend(backend)
        got = mx.nd.dot(mx.nd.array(a), mx.nd.array(b)).asnumpy()
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
        got_t = mx.nd.dot(mx.nd.array(b), mx.nd.array(a.reshape(120, 40)), transpose_a=True,
                          transpose_b=True).asnumpy()
        np.testing.assert_allclose(got_t, b.T.astype(np.float64) @ a.reshape(120, 40).T,
                                   rtol=1e-4, atol=1e-3)
        x, y = mx.sym.var('x'), mx.sym.var('y')
        exe = mx.sym.dot(x, y).simple_bind(mx.cpu(), x=a.shape, y=b.shape)
        exe.forward(is_train=True, x=mx.nd.array(a), y=mx.nd.array(b))
        dy = rs.randn(4, 30, 50).astype(np.float32)
        exe.backward([mx.nd.array(dy)])
        dy2 = dy.reshape(120, 50).astype(np.float64)
        np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(),
                                   (dy2 @ b.T).reshape(a.shape), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(exe.grad_dict['y'].asnumpy(), a.reshape(120, 40).T @ dy2,
                                   rtol=1e-4, atol=1e-3)
