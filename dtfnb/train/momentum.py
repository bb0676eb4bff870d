"""MomentumOptimizer: accum = momentum * accum + grad; var -= lr * accum (or Nesterov)."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import training_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class MomentumOptimizer(Optimizer):
    """Momentum, with slot "momentum" (`<var>/Momentum`).

    With `use_nesterov`, var -= lr * grad + lr * momentum * accum.
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._momentum_tensor = convert_to_tensor(
            self._call_if_callable(self._momentum), name="momentum")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"), cast_to(self._learning_rate_tensor, dtype),
            grad, cast_to(self._momentum_tensor, dtype), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov).op

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.sparse_apply_momentum(
            var, self.get_slot(var, "momentum"), cast_to(self._learning_rate_tensor, dtype),
            grad.values, grad.indices, cast_to(self._momentum_tensor, dtype),
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op
