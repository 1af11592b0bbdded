"""Stand-in for matplotlib.cm: every attribute is a callable that does nothing (as pyplot)."""
from .pyplot import __getattr__  # noqa: F401  (module attributes come from it)
