"""Every conversion on small networks: the exported model passes onnx.checker and onnxruntime
gives mxmod's outputs within float32 tolerance."""
import pytest

from .common import export_and_compare, import_and_compare
from .layer_cases import CASES
from .tensor_cases import MATH_CASES, SEQUENCE_CASES, SHAPE_CASES

ALL_CASES = dict(CASES, **SHAPE_CASES, **MATH_CASES, **SEQUENCE_CASES)
# exported with ONNX operators that have no MXNet counterpart to import into
NOT_IMPORTED = set()


@pytest.mark.parametrize('case', sorted(ALL_CASES))
def test_layer(case, tmp_path):
    net, inputs = ALL_CASES[case]()
    path, expected, _, _ = export_and_compare(net, inputs, tmp_path)
    if case not in NOT_IMPORTED:
        import_and_compare(path, inputs, expected)


@pytest.mark.parametrize('opset', [13, 17])
@pytest.mark.parametrize('case', ['layer_norm', 'reduce_axes', 'split', 'gelu', 'squeeze'])
def test_older_opsets(case, opset, tmp_path):
    net, inputs = ALL_CASES[case]()
    export_and_compare(net, inputs, tmp_path, opset_version=opset)
