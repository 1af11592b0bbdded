"""KVStore.is_capable answers on the class as on an instance (MXNet's test_kvstore_custom calls
``type(kv).is_capable('optimizer')`` on its 'teststore'), and custom stores may still define
it as an instance method."""
import pytest

import mxmod as mx


@pytest.mark.parametrize('name, capable', [('teststore', False), ('local', True),
                                           ('device', True)])
def test_class_and_instance_answer_alike(name, capable):
    kv = mx.kv.create(name)
    assert type(kv).is_capable('optimizer') is capable
    assert kv.is_capable('optimizer') is capable
    assert kv.is_capable('OPTIMIZER') is capable
    with pytest.raises(ValueError, match='sparsity'):
        type(kv).is_capable('sparsity')


def test_base_class_is_abstract_but_static():
    assert isinstance(mx.kv.KVStoreBase.__dict__['is_capable'], staticmethod)
    with pytest.raises(NotImplementedError):
        mx.kv.KVStoreBase.is_capable('optimizer')


def test_custom_store_with_an_instance_method():
    @mx.kv.KVStoreBase.register
    class CapabilityProbeStore(mx.kv.KVStoreBase):     # pylint: disable=abstract-method
        """A store whose answer depends on the instance."""
        def __init__(self):
            self.allow = True

        def is_capable(self, capability):
            return self.allow and capability == 'optimizer'

    kv = mx.kv.create('capabilityprobestore')
    assert kv.is_capable('optimizer')
    kv.allow = False
    assert not kv.is_capable('optimizer')
