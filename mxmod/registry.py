"""One registry mechanism for every pluggable family (optimizers, metrics, initializers, ...).

A family is created with :func:`Registry` and gives ``register`` (a class decorator, with
optional aliases), ``alias`` and ``create(name | instance | dict | (name, kwargs))``."""
import json

from .base import MXNetError


class Registry(object):
    """A name -> class table for one family of objects.

    Parameters
    ----------
    base_class : type
        Instances of this class are passed through ``create`` unchanged.
    kind : str
        Human-readable family name used in error messages ("optimizer", "metric", ...).
    """

    def __init__(self, base_class, kind):
        self.base_class = base_class
        self.kind = kind
        self.table = {}

    def register(self, klass=None, *aliases):
        """Register ``klass`` under its lower-cased class name (and any aliases)."""
        if klass is None or isinstance(klass, str):
            names = ((klass,) if klass else ()) + aliases

            def deco(k):
                self.register(k)
                for n in names:
                    self.table[n.lower()] = k
                return k
            return deco
        self.table[klass.__name__.lower()] = klass
        for n in aliases:
            self.table[n.lower()] = klass
        return klass

    def alias(self, *names):
        """Decorator registering a class under extra names."""
        def deco(klass):
            for n in names:
                self.table[n.lower()] = klass
            return klass
        return deco

    def get(self, name):
        """Return the class registered as ``name`` (case-insensitive)."""
        key = name.lower()
        if key not in self.table:
            raise ValueError('unknown %s %r; valid names are: %s'
                             % (self.kind, name, ', '.join(sorted(self.table))))
        return self.table[key]

    def create(self, spec, *args, **kwargs):
        """Create an instance from a name, an instance, a dict/JSON config or a ``[name, kwargs]`` pair."""
        if isinstance(spec, self.base_class):
            if args or kwargs:
                raise MXNetError('%s instance given together with extra arguments %r %r'
                                 % (self.kind, args, kwargs))
            return spec
        if isinstance(spec, dict):
            spec = dict(spec)
            for key in (self.kind, 'name', 'type'):
                if key in spec:
                    return self.create(spec.pop(key), *args, **dict(spec, **kwargs))
            raise ValueError('a %s config dict needs the key %r; got keys %s'
                             % (self.kind, self.kind, sorted(spec)))
        if isinstance(spec, str):
            if spec.startswith('{'):
                return self.create(json.loads(spec), *args, **kwargs)
            if spec.startswith('['):
                name, kw = json.loads(spec)
                kw = dict(kw)
                kw.update(kwargs)
                return self.get(name)(*args, **kw)
            return self.get(spec)(*args, **kwargs)
        if isinstance(spec, (list, tuple)) and len(spec) == 2 and isinstance(spec[0], str):
            kw = dict(spec[1])
            kw.update(kwargs)
            return self.get(spec[0])(*args, **kw)
        raise TypeError('cannot create a %s from %r: expected a name, a %s instance or a config dict'
                        % (self.kind, spec, self.base_class.__name__))


_FAMILIES = {}


def family(base_class, kind):
    """Return the one Registry for ``base_class``, creating it on first use."""
    if base_class not in _FAMILIES:
        _FAMILIES[base_class] = Registry(base_class, kind)
    return _FAMILIES[base_class]


def get_register_func(base_class, nickname):
    """MXNet-compatible helper returning a ``register`` function for ``base_class``."""
    return family(base_class, nickname).register


def get_alias_func(base_class, nickname):
    """MXNet-compatible helper returning an ``alias`` decorator factory for ``base_class``."""
    return family(base_class, nickname).alias


def get_create_func(base_class, nickname):
    """MXNet-compatible helper returning a ``create`` function for ``base_class``."""
    return family(base_class, nickname).create
