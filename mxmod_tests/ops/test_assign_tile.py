"""tile with empty, zero and negative reps, and the region-assignment operators _slice_assign /
_crop_assign and _slice_assign_scalar / _crop_assign_scalar (MXNet 1.9.1 semantics: values against
numpy, errors and non-differentiability as MXNet reports them)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


# ---- tile -------------------------------------------------------------------------------------
@pytest.mark.parametrize('reps', [(), (3,), (2, 1), (1, 2, 3)])
def test_tile_matches_numpy(reps):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(mx.nd.tile(mx.nd.array(x), reps).asnumpy(), np.tile(x, reps))


def test_tile_gradient_sums_copies():
    x = np.random.RandomState(0).uniform(-1, 1, (2, 3))
    check_grad('tile', {'reps': (2, 1, 2)}, [x])


def test_tile_negative_reps_is_an_error():
    with pytest.raises(MXNetError, match='reps'):
        mx.nd.tile(mx.nd.ones((4, 4)), (1, 2, -3))


def test_tile_zero_reps_needs_np_shape():
    data = mx.nd.ones((4, 4))
    with pytest.raises(MXNetError, match='inferring shapes failed'):
        mx.nd.tile(data, (1, 0, 3))
    with mx.np_shape(True):
        out = mx.nd.tile(data, (1, 0, 3))
    assert out.shape == (1, 0, 12)


# ---- _slice_assign / _crop_assign ---------------------------------------------------------------
@pytest.mark.parametrize('name', ['_slice_assign', '_crop_assign'])
@pytest.mark.parametrize('begin,end,step', [
    ((0, 1), (1, 3), ()),
    ((None, 0), (None, None), (1, 2)),
    ((2, None), (0, None), (-1, 1)),
])
def test_slice_assign_values(name, begin, end, step):
    rng = np.random.RandomState(1)
    lhs = rng.uniform(size=(3, 4)).astype(np.float32)
    region = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))
    rhs = rng.uniform(size=lhs[region].shape).astype(np.float32)
    want = lhs.copy()
    want[region] = rhs
    check_forward(name, {'begin': begin, 'end': end, 'step': step}, [lhs, rhs], [want])


def test_slice_assign_in_place_through_out():
    x = mx.nd.ones((2, 3, 4))
    mx.nd._internal._crop_assign(x, mx.nd.zeros((2, 1, 3)), begin=(0, 0, 0), end=(2, 1, 3), out=x)
    want = np.ones((2, 3, 4), np.float32)
    want[0:2, 0:1, 0:3] = 0
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_slice_assign_scalar_in_place_through_out():
    x = mx.nd.ones((2, 3, 4))
    mx.nd._internal._crop_assign_scalar(x, scalar=5, begin=(0, 0, 0), end=(2, 1, 3), out=x)
    want = np.ones((2, 3, 4), np.float32)
    want[0:2, 0:1, 0:3] = 5
    np.testing.assert_array_equal(x.asnumpy(), want)
    y = mx.nd._internal._slice_assign_scalar(x, scalar=-1, begin=(None, 1), end=(None, None),
                                             step=(1, 2))
    want[:, 1::2] = -1
    np.testing.assert_array_equal(y.asnumpy(), want)


def test_slice_assign_rhs_shape_is_checked():
    with pytest.raises(MXNetError, match='(?i)shape inconsistent'):
        mx.nd._internal._slice_assign(mx.nd.ones((2, 3)), mx.nd.zeros((2, 2)),
                                      begin=(0, 1), end=(1, 3))


def test_slice_assign_shape_inference_gives_rhs_the_region_shape():
    sym = mx.sym._internal._crop_assign(mx.sym.var('a'), mx.sym.var('b'), begin=(0, 1),
                                        end=(1, 3))
    assert sym.list_arguments() == ['a', 'b']
    assert sym.infer_shape(a=(2, 3)) == ([(2, 3), (1, 2)], [(2, 3)], [])


@pytest.mark.parametrize('call', [
    lambda x, z: mx.nd._internal._slice_assign(x, z, begin=(0, 1), end=(1, 3)),
    lambda x, z: mx.nd._internal._slice_assign_scalar(x, scalar=2., begin=(0, 1), end=(1, 3)),
])
def test_slice_assign_is_not_differentiable(call):
    # MXNet 1.9.1 registers no FGradient for either operator
    x, z = mx.nd.ones((2, 3)), mx.nd.zeros((1, 2))
    x.attach_grad()
    z.attach_grad()
    with pytest.raises(MXNetError, match='non-differentiable'):
        with mx.autograd.record():
            y = call(x, z)
        y.backward(mx.nd.ones((2, 3)))
