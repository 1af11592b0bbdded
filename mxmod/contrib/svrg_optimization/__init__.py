"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient (SVRG) training as
MXNet 1.9.1's contrib package offers it (``SVRGModule``, and the two optimizers it installs)."""
from . import svrg_module  # noqa: F401
from . import svrg_optimizer  # noqa: F401
