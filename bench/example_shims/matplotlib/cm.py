"""Stand-in for matplotlib.pyplot: every attribute is a callable that does nothing."""


class _Anything:
    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        return _Anything()

    def __iter__(self):
        return iter((_Anything(), _Anything()))


def __getattr__(name):
    return _Anything()
