"""The short names MXNet 1.9.1's mxnet/__init__.py gives its packages (``from . import random as
rnd`` and the like) are the same modules in mxmod: example/neural-style calls mx.rnd.uniform."""
import os
import subprocess

import pytest

import mxmod as mx

# alias -> package, as mxnet/__init__.py of MXNet 1.9.1 imports them (torch/th: the Torch
# plugin, outside mxmod's scope)
ALIASES = {'nd': 'ndarray', 'sym': 'symbol', 'rnd': 'random', 'init': 'initializer',
           'viz': 'visualization', 'mon': 'monitor', 'mod': 'module', 'img': 'image',
           'kv': 'kvstore'}
MXNET = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')


@pytest.mark.parametrize('alias,package', sorted(ALIASES.items()))
def test_alias_is_the_package(alias, package):
    assert getattr(mx, alias) is getattr(mx, package)


def test_rnd_draws_as_random():
    mx.rnd.seed(3)
    first = mx.rnd.uniform(-0.1, 0.1, (2, 3)).asnumpy()
    mx.random.seed(3)
    again = mx.random.uniform(-0.1, 0.1, (2, 3)).asnumpy()
    assert (first == again).all() and abs(first).max() <= 0.1


@pytest.mark.skipif(not os.path.exists(MXNET), reason='needs MXNet 1.9.1 (the oracle)')
def test_mxnet_has_the_same_aliases():
    code = ('import mxnet as mx\nprint(all(getattr(mx, a) is getattr(mx, p) for a, p in %r))'
            % (sorted(ALIASES.items()),))
    out = subprocess.run([MXNET, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == 'True'
