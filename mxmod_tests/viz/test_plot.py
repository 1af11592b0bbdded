"""``mx.viz.plot_network``: the same Graphviz graph as MXNet 1.9.1 draws (fixtures/plots.json.gz,
made by make_fixtures.py), the repeated-name warning, errors, and rendering where Graphviz's
``dot`` program is installed."""
import gzip
import json
import os
import shutil
import warnings

import pytest

import mxmod as mx

from . import plot_cases

pytest.importorskip('graphviz')
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope='module')
def mxnet_plots():
    with gzip.open(os.path.join(HERE, 'fixtures', 'plots.json.gz'), 'rt') as src:
        return json.load(src)


@pytest.mark.parametrize('case', sorted(plot_cases.CASES))
def test_graph_matches_mxnet(case, mxnet_plots):
    network, kwargs = plot_cases.CASES[case]
    symbol = mx.sym.load_json(mxnet_plots['symbols'][network])
    assert plot_cases.plot(mx, symbol, kwargs) == mxnet_plots['plots'][case]


def test_small_graph_built_by_mxmod(mxnet_plots):
    symbol = plot_cases.small_graph(mx)
    ours = plot_cases.plot(mx, symbol, plot_cases.CASES['small_shapes_types'][1])
    assert ours == mxnet_plots['plots']['small_shapes_types']


def test_repeated_names_warn():
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), name='fc', num_hidden=128)
    net = mx.sym.Activation(net, name='relu1', act_type='relu')
    net = mx.sym.FullyConnected(net, name='fc', num_hidden=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        mx.viz.plot_network(mx.sym.SoftmaxOutput(net, name='out'), shape={'data': (100, 200)})
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    assert 'Repeated names: fc' in str(caught[0].message)


def test_errors():
    with pytest.raises(TypeError, match='Symbol'):
        mx.viz.plot_network('not a symbol')
    with pytest.raises(TypeError, match='Symbol'):
        mx.viz.print_summary(None)
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    with pytest.raises(ValueError, match='incomplete'):
        mx.viz.print_summary(net, shape={})


@pytest.mark.skipif(shutil.which('dot') is None, reason="Graphviz's dot program not installed")
def test_render_png(tmp_path):
    graph = mx.viz.plot_network(plot_cases.small_graph(mx), shape={'data': (1, 3, 16, 16)},
                                save_format='png', title='small')
    path = graph.render(directory=str(tmp_path), cleanup=True)
    with open(path, 'rb') as src:
        assert src.read(8) == b'\x89PNG\r\n\x1a\n'
