"""``mx.viz.print_summary``: the same text as MXNet 1.9.1 prints for the model-zoo networks
(fixtures made by make_fixtures.py from MXNet's example/image-classification/symbols), for the
networks loaded from MXNet's JSON and, where MXNet's source is present, built by mxmod from the
same Python files."""
import gzip
import json
import os

import pytest

import mxmod as mx

from . import zoo_models

HERE = os.path.dirname(os.path.abspath(__file__))


def _fixture(name):
    with gzip.open(os.path.join(HERE, 'fixtures', name + '.json.gz'), 'rt') as src:
        return json.load(src)


@pytest.mark.parametrize('name', sorted(zoo_models.MODELS))
def test_summary_of_mxnet_json_matches_mxnet(name):
    record = _fixture(name)
    symbol = mx.sym.load_json(record['symbol'])
    ours = zoo_models.summaries(mx, symbol, tuple(record['data_shape']))
    for label, text in record['summary'].items():
        assert ours[label] == text, (name, label)


@pytest.mark.skipif(not os.path.isdir(zoo_models.SYMBOLS_DIR),
                    reason="MXNet's example/image-classification/symbols not present")
@pytest.mark.parametrize('name', sorted(zoo_models.MODELS))
def test_summary_of_networks_built_by_mxmod(name):
    ours = zoo_models.summaries(mx, zoo_models.build(mx, name), zoo_models.MODELS[name][2])
    assert ours == _fixture(name)['summary']
