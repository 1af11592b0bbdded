"""The optimizers SVRGModule installs (registered under MXNet's names, for SVRGModule only):
``_AssignmentOptimizer`` makes a stored value the pushed one (the full gradients summed in a
kvstore), ``_SVRGOptimizer`` sends the ``<param>_full`` keys to it and every parameter to the
optimizer the user chose."""
from ...optimizer import Optimizer, create, register

__all__ = ['_AssignmentOptimizer', '_SVRGOptimizer']

# the keyword arguments of Optimizer itself: the wrapper keeps these, the wrapped optimizer gets
# every argument
_BASE_ARGUMENTS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate',
                   'lr_scheduler', 'sym', 'begin_num_update', 'multi_precision', 'param_dict')


@register
class _AssignmentOptimizer(Optimizer):
    """``weight[:] = grad``: accumulates full gradients in a kvstore (no rescaling)."""

    def update(self, index, weight, grad, state):
        """Overwrite ``weight`` with ``grad``."""
        weight[:] = grad


@register
class _SVRGOptimizer(Optimizer):
    """Routes each update by parameter name: names containing ``full`` to an
    ``_AssignmentOptimizer``, the others to ``default_optimizer``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The user's optimizer; a name is created with all of ``kwargs``.
    **kwargs
        Optimizer arguments (``param_idx2name`` must name every index, the ``_full`` keys
        included).
    """
    forwards_arguments = True       # create() passes the wrapped optimizer's keywords through

    def __init__(self, default_optimizer, **kwargs):
        base = {key: value for key, value in kwargs.items() if key in _BASE_ARGUMENTS}
        super(_SVRGOptimizer, self).__init__(**base)
        if isinstance(default_optimizer, str):
            self.default_opt = create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = create(_AssignmentOptimizer.__name__)

    def _target(self, index):
        return self.aux_opt if 'full' in self._check_index(index) else self.default_opt

    def update(self, index, weight, grad, state):
        """Update ``weight`` with the optimizer its name selects."""
        self._target(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        """The state of the optimizer the name selects."""
        return self._target(index).create_state(index, weight)

    def _check_index(self, index):
        """The parameter name of ``index`` (an int of ``idx2name``, or a name itself)."""
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise KeyError('_SVRGOptimizer: index %r is neither a key nor a name of '
                           'param_idx2name (%d entries)' % (index, len(self.idx2name)))
        return self.idx2name[index]
