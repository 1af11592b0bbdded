"""The scaling model: profile one process's training step, predict step time and scaling
efficiency on 1 to 1024 workers for ring all-reduce, hierarchical all-reduce and parameter
servers, and recommend a fusion bucket size. Command line: ``python -m mxmod.tools.scaling``."""
from .model import Network, predict, recommend_bucket  # noqa: F401
from .profile import profile_module, save_profile, load_profile  # noqa: F401
