"""Partial shape (and type) inference of every registered operator against MXNet 1.9.1: each case
of partial_shape_cases*.py (single operators with unknown dims, unknown shapes and known
outputs; type cases with unknown dtypes; a few whole keras-style graphs) was run on MXNet by
fixtures/make_partial_shape_fixture.py, which kept the graph's JSON and MXNet's results in
fixtures/partial_shapes_mxnet.json; here mxmod loads each graph and must give the same
infer_shape_partial, infer_shape and infer_type_partial results (or raise where MXNet raises),
but for the deviations listed below with their reasons. A live run against the oracle checks
that the fixture is the cases' current record.

    python -m mxmod_tests.ops.test_partial_shapes [substring]   # list the differing cases"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OPS
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from mxmod_tests.ops.partial_shape_cases import GRAPHS as WHOLE_GRAPHS, all_cases, case_id

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, 'fixtures', 'partial_shapes_mxnet.json')
GENERATOR = os.path.join(HERE, 'fixtures', 'make_partial_shape_fixture.py')

CASES = all_cases()
with open(FIXTURE) as _handle:
    _FIXTURE = json.load(_handle)
RECORD, GRAPHS = _FIXTURE['cases'], _FIXTURE['graphs']

# Registered operators without a case, and why.
NOT_COVERED = {
    '_foreach': 'control flow (holds subgraphs): mxmod_tests/control_flow',
    '_while_loop': 'control flow (holds subgraphs): mxmod_tests/control_flow',
    '_cond': 'control flow (holds subgraphs): mxmod_tests/control_flow',
    'Custom': 'shapes come from the registered Python CustomOpProp: mxmod_tests/ops/test_custom.py',
}

# Cases where mxmod deliberately differs from MXNet 1.9.1: why, and mxmod's infer_shape_partial
# result ('error' when it raises). mxmod keeps unknown what MXNet computes wrongly from an
# unknown dim, and raises where MXNet lets shapes that cannot work pass unnoticed.
_UNKNOWN_ARITH = 'MXNet computes this size from an unknown dim (-1): a wrong size'
_CONCAT_SUM = ('MXNet adds up the concat axis over the inputs of known rank only: a wrong size '
               '(or a failure against the known output)')
_UNCHECKED = 'MXNet lets inputs of shapes that do not fit pass (its forward then fails)'
_OVERWRITE = ('MXNet overwrites the given shapes of gamma/beta/statistics with (channels,) '
              'unchecked, even with an unknown channel count')
_ZERO_SIZE = "MXNet keeps the shape parameter's 0 as a known zero size for this operator"
DEVIATIONS = {
    'graph:keras_dense_seq_time':
        (_CONCAT_SUM, [[[0, 0, 3], [6, 3], [6], [4, 3], [4], []], [[0, 1, 0]], []]),
    'BatchNorm_v1|beta:4 data:0x0x5':
        (_OVERWRITE, [[[0, 0, 5], [0], [4]], [[0, 0, 5]], [[0], [0]]]),
    'BatchNorm_v1|data:0x4 gamma:5':
        (_OVERWRITE, 'error'),
    'BatchNorm|beta:4 data:0x0x5':
        (_OVERWRITE, [[[0, 0, 5], [0], [4]], [[0, 0, 5]], [[0], [0]]]),
    'BatchNorm|data:0x4 gamma:5':
        (_OVERWRITE, 'error'),
    'BatchNorm|data:2x4x5 moving_var:5':
        (_OVERWRITE, 'error'),
    'Concat|dim=-1,num_args=2|a:2x3':
        (_CONCAT_SUM, [[[2, 3], [2, 0]], [[2, 0]], []]),
    'Concat|dim=-1,num_args=2|a:2x3|heads:2x7':
        (_CONCAT_SUM, [[[2, 3], [2, 0], [2, 7]], [[2, 7]], []]),
    'Concat|dim=-1,num_args=2||heads:4x6':
        (_CONCAT_SUM, [[[4, 0], [4, 0], [4, 6]], [[4, 6]], []]),
    'Concat|dim=0,num_args=2|a:2x3':
        (_CONCAT_SUM, [[[2, 3], [0, 3]], [[0, 3]], []]),
    'Concat|dim=0,num_args=2|a:2x3|heads:5x3':
        (_CONCAT_SUM, [[[2, 3], [0, 3], [5, 3]], [[5, 3]], []]),
    'Concat|dim=0,num_args=2||heads:4x6':
        (_CONCAT_SUM, [[[0, 6], [0, 6], [4, 6]], [[4, 6]], []]),
    'Concat|dim=1,num_args=2|a:2x3':
        (_CONCAT_SUM, [[[2, 3], [2, 0]], [[2, 0]], []]),
    'Concat|dim=1,num_args=2|a:2x3|heads:2x7':
        (_CONCAT_SUM, [[[2, 3], [2, 0], [2, 7]], [[2, 7]], []]),
    'Concat|dim=1,num_args=2||heads:4x6':
        (_CONCAT_SUM, [[[4, 0], [4, 0], [4, 6]], [[4, 6]], []]),
    'InstanceNorm|beta:4 data:0x0x5':
        (_OVERWRITE, [[[0, 0, 5], [0], [4]], [[0, 0, 5]], []]),
    'InstanceNorm|data:0x4 gamma:5':
        (_OVERWRITE, 'error'),
    'Pad|mode=constant,pad_width=(0, 0, 0, 0, 1, 2, 3, 1)|data:2x3x0x5':
        (_UNKNOWN_ARITH, [[[2, 3, 0, 5]], [[2, 3, 0, 9]], []]),
    'Pad|mode=edge,pad_width=(0, 0, 0, 0, 1, 1, 1, 1)|data:2x3x0x5':
        (_UNKNOWN_ARITH, [[[2, 3, 0, 5]], [[2, 3, 0, 7]], []]),
    'RNN|bidirectional=True,mode=gru,num_layers=2,state_outputs=True,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [4, 2, 4]], [[5, 2, 8], [4, 2, 4]], []]),
    'RNN|bidirectional=True,mode=lstm,num_layers=2,state_outputs=True,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [4, 2, 4], [4, 2, 4]],
                          [[5, 2, 8], [4, 2, 4], [4, 2, 4]], []]),
    'RNN|bidirectional=True,mode=rnn_tanh,num_layers=2,state_outputs=True,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [4, 2, 4]], [[5, 2, 8], [4, 2, 4]], []]),
    'RNN|mode=gru,num_layers=1,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [1, 2, 4]], [[5, 2, 4]], []]),
    'RNN|mode=lstm,num_layers=1,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [1, 2, 4], [1, 2, 4]], [[5, 2, 4]], []]),
    'RNN|mode=rnn_tanh,num_layers=1,state_size=4|data:5x2x0':
        (_UNKNOWN_ARITH, [[[5, 2, 0], [0], [1, 2, 4]], [[5, 2, 4]], []]),
    '_sample_gamma|alpha:2x3 beta:3':
        (_UNCHECKED, 'error'),
    '_sample_gamma|shape=(2,)|alpha:2x3 beta:3':
        (_UNCHECKED, 'error'),
    '_sample_generalized_negative_binomial|alpha:3 mu:2x3':
        (_UNCHECKED, 'error'),
    '_sample_generalized_negative_binomial|shape=(2,)|alpha:3 mu:2x3':
        (_UNCHECKED, 'error'),
    '_sample_negative_binomial|k:2x3 p:3':
        (_UNCHECKED, 'error'),
    '_sample_negative_binomial|shape=(2,)|k:2x3 p:3':
        (_UNCHECKED, 'error'),
    '_sample_normal|mu:2x3 sigma:3':
        (_UNCHECKED, 'error'),
    '_sample_normal|shape=(2,)|mu:2x3 sigma:3':
        (_UNCHECKED, 'error'),
    '_sample_uniform|high:3 low:2x3':
        (_UNCHECKED, 'error'),
    '_sample_uniform|shape=(2,)|high:3 low:2x3':
        (_UNCHECKED, 'error'),
    '_sample_unique_zipfian|range_max=100,shape=(0, 5)|':
        (_ZERO_SIZE, [[], [[0, 5], [0]], []]),
    'stack|axis=-1,num_args=2|a:2x3 b:2x4':
        (_UNCHECKED, 'error'),
    'stack|axis=1,num_args=2|a:2x3 b:2x4':
        (_UNCHECKED, 'error'),
    'stack|num_args=2|a:2x3 b:2x4':
        (_UNCHECKED, 'error'),
    'where|condition:2x3 x:2x4':
        (_UNCHECKED, 'error'),

}

# Operators whose dtype inference (the 'types' records only) deliberately differs, and why.
_TYPE_UNKNOWN = ('MXNet fails while the (first or index) input\'s dtype is unknown; mxmod infers '
                 'nothing then, because its simple_bind infers from the given dtypes before it '
                 'gives the untyped variables float32 (MXNet\'s gives them float32 first)')
_FLOAT32_ONLY = ('MXNet\'s legacy operator takes float32 only (and gives unknown dtypes '
                 'float32); mxmod computes other dtypes too')
_LINALG_TYPES = ('MXNet infers any dtype and fails when computing; mxmod refuses other than '
                 'float32/float64 at inference')
_UPDATE_GROUPS = ('MXNet lists the updated states as auxiliary states, types every input of the '
                  'group alike and wants float16 weights for the mixed-precision updates')
TYPE_DEVIATIONS = dict(
    [(op, _TYPE_UNKNOWN) for op in (
        'BatchNorm_v1', 'BilinearSampler', 'CTCLoss', 'Dropout', 'Embedding', 'GridGenerator',
        'LRN', 'MakeLoss', 'RNN', 'ROIPooling', 'SVMOutput', 'SequenceLast', 'SequenceMask',
        'SequenceReverse', 'SpatialTransformer', 'SwapAxis', 'UpSampling',
        '_contrib_DeformableConvolution', '_contrib_ModulatedDeformableConvolution',
        '_contrib_PSROIPooling', '_contrib_ROIAlign', '_contrib_RROIAlign',
        '_contrib_SparseEmbedding', '_contrib_SyncBatchNorm', '_contrib_dequantize',
        '_sparse_retain', '_split_v2', 'one_hot', 'pick', 'take')]
    + [(op, _FLOAT32_ONLY) for op in (
        'Crop', 'InstanceNorm', '_contrib_MultiBoxDetection', '_contrib_MultiBoxPrior',
        '_contrib_MultiBoxTarget', '_contrib_MultiProposal', '_contrib_Proposal')]
    + [('_linalg_' + op, _LINALG_TYPES) for op in (
        'extractdiag', 'extracttrian', 'gelqf', 'inverse', 'makediag', 'maketrian', 'potrf',
        'potri', 'sumlogdiag', 'syevd', 'syrk', 'trmm', 'trsm')]
    + [(op, _UPDATE_GROUPS) for op in (
        'mp_lamb_update_phase1', 'multi_mp_sgd_mom_update', 'multi_mp_sgd_update',
        'multi_sgd_mom_update', 'multi_sgd_update')])


def _type_deviation(key):
    """True for a type case of an operator in TYPE_DEVIATIONS."""
    return '|types:' in key and key.split('|')[0] in TYPE_DEVIATIONS


def _shapes(group):
    return None if group is None else [list(s) for s in group]


def _error(result):
    return isinstance(result, dict) and 'error' in result


def by_name(result, names):
    """An inference result (arg, out, aux shapes) as {input name: shape} and the output shapes,
    so that inputs compare whether they are arguments or auxiliary states."""
    if result is None or _error(result):
        return result
    args, outs, aux = result
    return {'inputs': dict(zip(names[0] + names[1], args + aux)), 'outputs': outs}


def mxmod_result(rec):
    """mxmod's results on one recorded case, in the fixture's form, and the names of its
    arguments and auxiliary states."""
    try:
        sym = mx.sym.load_json(GRAPHS[rec['graph']])
    except MXNetError as err:       # an attribute mxmod refuses when the graph is loaded
        refused = {'error': 'loading the graph: %s' % err}
        return {'partial': refused, 'full': refused, 'types': refused}, rec['names']
    shapes = {k: tuple(v) for k, v in rec['shapes'].items()}
    out = {}
    try:
        out['partial'] = [_shapes(g) for g in sym.infer_shape_partial(**shapes)]
    except MXNetError as err:
        out['partial'] = {'error': str(err)}
    try:
        full = sym.infer_shape(**shapes)
        out['full'] = None if full[0] is None else [_shapes(g) for g in full]
    except MXNetError as err:
        out['full'] = {'error': str(err)}
    if 'dtypes' in rec:
        try:
            got = sym.infer_type_partial(**rec['dtypes'])
            out['types'] = [[None if t is None else np.dtype(t).name for t in g] for g in got]
        except MXNetError as err:
            out['types'] = {'error': str(err)}
    return out, [sym.list_arguments(), sym.list_auxiliary_states()]


def compare(rec, got, names):
    """The differences between MXNet's record and mxmod's results (an empty list when none)."""
    diffs = []
    for key in ('partial', 'full', 'types'):
        if key not in rec:
            continue
        want, have = rec[key], got[key]
        if want == 'partial':       # complete, and the same shapes as infer_shape_partial's
            want = rec['partial']
        if _error(want) or _error(have):
            if _error(want) != _error(have):
                diffs.append('%s: MXNet %s, mxmod %s' % (key, want, have))
        elif by_name(want, rec['names']) != by_name(have, names):
            diffs.append('%s: MXNet %s, mxmod %s' % (key, want, have))
    return diffs


def test_fixture_holds_every_case():
    ids = [case_id(c) for c in CASES] + ['graph:' + name for name in WHOLE_GRAPHS]
    assert len(set(ids)) == len(ids)
    assert sorted(RECORD) == sorted(ids), 'run fixtures/make_partial_shape_fixture.py'


def test_every_registered_operator_is_covered():
    covered = {OPS[c['op']].op_name for c in CASES}
    missing = sorted({cls.op_name for cls in OPS.values()} - covered - set(NOT_COVERED))
    assert not missing, 'operators without partial-shape cases: %s' % missing


def test_cases_match_mxnet():
    failures = []
    for key, rec in sorted(RECORD.items()):
        got, names = mxmod_result(rec)
        if key in DEVIATIONS:
            partial = 'error' if _error(got['partial']) else got['partial']
            if partial != DEVIATIONS[key][1]:
                failures.append('%s\n    deviation changed: mxmod %s' % (key, got['partial']))
            continue
        diffs = compare(rec, got, names)
        if diffs and not _type_deviation(key):
            failures.append('%s\n    %s' % (key, '\n    '.join(diffs)))
    assert not failures, '%d of %d cases differ:\n%s' % (len(failures), len(RECORD),
                                                          '\n'.join(failures))


def test_deviations_still_differ_from_mxnet():
    """A deviation that now matches MXNet belongs out of DEVIATIONS (TYPE_DEVIATIONS: each
    operator still differs in one of its type cases)."""
    for key in DEVIATIONS:
        assert compare(RECORD[key], *mxmod_result(RECORD[key])), key
    differing = {key.split('|')[0] for key, rec in RECORD.items()
                 if _type_deviation(key) and compare(rec, *mxmod_result(rec))}
    assert sorted(set(TYPE_DEVIATIONS) - differing) == []


@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle venv')
def test_fixture_is_mxnet_current(tmp_path):
    out = str(tmp_path / 'record.json')
    subprocess.run([ORACLE_PYTHON, GENERATOR, out], check=True, timeout=600,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=''))
    with open(out) as handle:
        assert json.load(handle) == _FIXTURE


if __name__ == '__main__':
    # python -m mxmod_tests.ops.test_partial_shapes [substring]: list the differing cases
    pattern = sys.argv[1] if len(sys.argv) > 1 else ''
    count = 0
    for key, rec in sorted(RECORD.items()):
        if pattern in key:
            diffs = compare(rec, *mxmod_result(rec))
            if diffs:
                count += 1
                print(key, '\n    ' + '\n    '.join(diffs))
    print(count, 'differ')
