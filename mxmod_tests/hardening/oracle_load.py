"""Run by the MXNet 1.9.1 oracle: load checkpoints that mxmod wrote, as an MXNet user would, and
save what MXNet made of them (parameters and optimizer states) to an npz for the test to compare.
    /tmp/mxnet-ref/bin/python oracle_load.py SPEC.json OUT.npz
SPEC: a list of {"prefix", "epoch", "ndev", "optimizer", "data_shape"}."""
import json
import sys
import warnings

import numpy as np


def states_of(mod):
    """Every optimizer state array of a module (MXNet's or mxmod's) by "key:leaf"."""
    updater = mod._kvstore._updater if mod._update_on_kvstore else mod._updater
    out = {}
    for key, state in updater.states.items():
        leaves = state if isinstance(state, (tuple, list)) else [state]
        for i, leaf in enumerate(leaves):
            if leaf is not None:
                out['%s:%d' % (key, i)] = leaf.asnumpy()
    return out


def main(spec_file, out_file):
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    warnings.simplefilter('ignore')
    arrays = {}
    for case, spec in enumerate(json.load(open(spec_file))):
        context = [mx.cpu(i) for i in range(spec['ndev'])]
        mod = mx.mod.Module.load(spec['prefix'], spec['epoch'], load_optimizer_states=True,
                                 context=context)
        batch = spec['data_shape'][0]
        mod.bind(data_shapes=[('data', tuple(spec['data_shape']))],
                 label_shapes=[('softmax_label', (batch,))])
        mod.init_optimizer(kvstore='local', optimizer=spec['optimizer'])
        for name, value in mod.get_params()[0].items():
            arrays['%d:param:%s' % (case, name)] = value.asnumpy()
        for key, value in states_of(mod).items():
            arrays['%d:state:%s' % (case, key)] = value
        sym, args, _ = mx.model.load_checkpoint(spec['prefix'], spec['epoch'])
        arrays['%d:outputs' % case] = np.array(sym.list_outputs())
        assert sorted(args) == sorted(mod.get_params()[0])
    np.savez(out_file, **arrays)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
