"""Executors: symbols bound to devices, with their forward and backward passes."""
from .executor import Executor  # noqa: F401
