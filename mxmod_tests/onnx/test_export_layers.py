"""Every conversion on small networks: the exported model passes onnx.checker and onnxruntime
gives mxmod's outputs within float32 tolerance."""
import pytest

from .common import export_and_compare
from .layer_cases import CASES
from .tensor_cases import MATH_CASES, SHAPE_CASES

ALL_CASES = dict(CASES, **SHAPE_CASES, **MATH_CASES)


@pytest.mark.parametrize('case', sorted(ALL_CASES))
def test_layer(case, tmp_path):
    net, inputs = ALL_CASES[case]()
    export_and_compare(net, inputs, tmp_path)


@pytest.mark.parametrize('opset', [13, 17])
@pytest.mark.parametrize('case', ['layer_norm', 'reduce_axes', 'split', 'gelu', 'squeeze'])
def test_older_opsets(case, opset, tmp_path):
    net, inputs = ALL_CASES[case]()
    export_and_compare(net, inputs, tmp_path, opset_version=opset)
