"""Block.save / Block.load (the block tree with its cached graphs in ``-model.json``, the
Parameters in ``-model.params``) and Block.summary."""
import json
from collections import OrderedDict

from ..ndarray import NDArray
from ..symbol import load_json

__all__ = ['save_block', 'load_block', 'print_summary']


def save_block(block, prefix):
    """Write ``prefix-model.json`` (structure and cached graphs) and ``prefix-model.params``."""
    from .hybrid_block import HybridBlock  # pylint: disable=import-outside-toplevel
    model = {}
    index = [0]

    def visit(blk, structure):
        entry = {'orig_name': blk.name}
        structure[type(blk).__name__.lower() + str(index[0])] = entry
        if isinstance(blk, HybridBlock):
            if blk._cached_graph:
                inputs, out = blk._cached_graph
                entry['in_format'] = blk._in_format
                entry['out_format'] = blk._out_format
                entry['inputs'] = [sym.tojson() for sym in inputs]
                entry['symbol'] = out.tojson()
                entry['hybridized'] = True
            else:
                entry['hybridized'] = False
        children = {}
        entry['children'] = children
        for name, child in blk._children.items():
            index[0] += 1
            children[child.name] = name
            visit(child, entry)

    visit(block, model)
    with open(prefix + '-model.json', 'w') as handle:
        json.dump(model, handle)
    block.save_parameters(prefix + '-model.params')


def load_block(block, prefix):
    """Restore what ``save_block(…, prefix)`` wrote into ``block`` (same structure)."""
    from .hybrid_block import HybridBlock  # pylint: disable=import-outside-toplevel
    with open(prefix + '-model.json') as handle:
        model = json.load(handle)
    index = [0]

    def visit(blk, structure):
        entry = structure[type(blk).__name__.lower() + str(index[0])]
        blk._name = entry['orig_name']
        if isinstance(blk, HybridBlock) and entry['hybridized']:
            blk._in_format = entry['in_format']
            blk._out_format = entry['out_format']
            blk._cached_graph = ([load_json(sym) for sym in entry['inputs']],
                                 load_json(entry['symbol']))
            blk._active = True
        params = blk.params._params
        for old in list(params.keys()):
            param = params.pop(old)
            params[blk.name + '_' + old[len(blk.params._prefix):]] = param
        for child in blk._children.values():
            index[0] += 1
            visit(child, entry)
        children = entry['children']
        for key in list(blk._children.keys()):
            child = blk._children.pop(key)
            blk._children[children[child.name]] = child

    visit(block, model)
    block.load_parameters(prefix + '-model.params')


def _shape_text(args):
    def shapes(value):
        if isinstance(value, (list, tuple)):
            return [shapes(item) for item in value]
        return value.shape if isinstance(value, NDArray) else value
    result = shapes(args)
    text = str(result)[1:-1] if isinstance(result, list) else str(result)
    return text.replace('L', '')


def print_summary(block, inputs):
    """Print the per-layer table of ``Block.summary``."""
    from .hybrid_block import HybridBlock  # pylint: disable=import-outside-toplevel
    from .nn.basic_layers import Sequential, HybridSequential  # pylint: disable=import-outside-toplevel
    summary = OrderedDict()
    seen = set()
    hooks = []

    def hook(blk, _, outputs):
        key = '%s-%i' % (type(blk).__name__, len(summary))
        row = summary[key] = OrderedDict()
        row['output_shape'] = _shape_text(outputs)
        row['trainable'] = row['shared'] = total = 0
        for param in blk.params.values():
            size = param.data().size
            total += size
            row['trainable'] += 0 if param.grad_req == 'null' else size
            if param in seen:
                row['shared'] += size
            else:
                seen.add(param)
        row['n_params'] = total

    def register(blk):
        if isinstance(blk, HybridBlock) and blk._active:
            raise AssertionError('"%s" must not be hybridized to print summary.' % blk.name)
        if not isinstance(blk, (Sequential, HybridSequential)):
            hooks.append(blk.register_forward_hook(hook))

    summary['Input'] = OrderedDict([('output_shape', _shape_text(inputs)), ('n_params', 0),
                                    ('trainable', 0), ('shared', 0)])
    try:
        block.apply(register)
        block(*inputs)
        line = '{:>20}  {:>42} {:>15}'
        print('-' * 80)
        print(line.format('Layer (type)', 'Output Shape', 'Param #'))
        print('=' * 80)
        total = trainable = shared = 0
        for name, row in summary.items():
            print(line.format(name, str(row['output_shape']), row['n_params']))
            total += row['n_params']
            trainable += row['trainable']
            shared += row['shared']
        print('=' * 80)
        print('Parameters in forward computation graph, duplicate included')
        print('   Total params: ' + str(total))
        print('   Trainable params: ' + str(trainable))
        print('   Non-trainable params: ' + str(total - trainable))
        print('Shared params in forward computation graph: ' + str(shared))
        print('Unique parameters in model: ' + str(total - shared))
        print('-' * 80)
    finally:
        for handle in hooks:
            handle.detach()
