"""GradientDescentOptimizer: var -= learning_rate * grad."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import state_ops, training_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent; `learning_rate` may be a float, a tensor or a callable."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.apply_gradient_descent(
            var, cast_to(self._learning_rate_tensor, dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        # ScatterSub adds up repeated rows itself: no need to sum them first.
        rows = grad.values * cast_to(self._learning_rate_tensor, var.dtype.base_dtype)
        return state_ops.scatter_sub(var, grad.indices, rows, use_locking=self._use_locking)
