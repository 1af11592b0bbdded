"""The operators added for MXNet's full library (special functions, statistics, linalg, vision,
detection, image, CTC) against frozen MXNet 1.9.1 runs: MXNet's symbol JSON loads in mxmod and
gives MXNet's outputs and gradients; mxmod's front end writes the same JSON nodes."""
import pytest

from mxmod_tests.ops.extra_replay import all_groups, load_group, replay, same_json_ops

TOLERANCE = {'f32': (2e-5, 2e-6), 'default': (1e-5, 1e-7)}


def _cases():
    out = []
    for group in all_groups():
        data, cases = load_group(group)
        out += [(group, data, case) for case in cases]
    return out


CASES = _cases()


@pytest.mark.parametrize('group,data,case', CASES, ids=['%s-%s' % (g, c['key']) for g, _, c in CASES])
def test_mxnet_json_replays(group, data, case):
    low_precision = any(data['%s__in%d' % (case['key'], i)].dtype.itemsize < 8
                        for i in range(case['n_in']))
    rtol, atol = TOLERANCE['f32' if low_precision else 'default']
    replay(data, case, rtol=rtol, atol=atol)


@pytest.mark.parametrize('group,data,case', CASES, ids=['%s-%s' % (g, c['key']) for g, _, c in CASES])
def test_front_end_writes_mxnet_json(group, data, case):
    same_json_ops(case)
