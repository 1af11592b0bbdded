"""Command-line tools: ``python -m mxmod.tools.<name>``."""
