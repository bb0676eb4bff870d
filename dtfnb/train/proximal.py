"""The proximal optimizers (FOBOS): a gradient step, then an L1 shrinkage toward zero and
an L2 scaling, at a fixed rate (ProximalGradientDescentOptimizer) or Adagrad's
(ProximalAdagradOptimizer)."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import constant_op, training_ops
from dtfnb.train.optimizer import Optimizer


class _Proximal(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength,
                 l2_regularization_strength, use_locking, name):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._learning_rate,
                                                       name="learning_rate")
        self._l1_regularization_strength_tensor = convert_to_tensor(
            self._l1_regularization_strength, name="l1_regularization_strength")
        self._l2_regularization_strength_tensor = convert_to_tensor(
            self._l2_regularization_strength, name="l2_regularization_strength")

    def _hyperparameters(self):
        return (self._learning_rate_tensor, self._l1_regularization_strength_tensor,
                self._l2_regularization_strength_tensor)


class ProximalGradientDescentOptimizer(_Proximal):
    """var = shrink(var - lr * grad) with L1 and L2 regularization strengths."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(learning_rate, l1_regularization_strength,
                         l2_regularization_strength, use_locking, name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_gradient_descent(
            var, *self._hyperparameters(), grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_gradient_descent(
            var, *self._hyperparameters(), grad.values, grad.indices,
            use_locking=self._use_locking).op


class ProximalAdagradOptimizer(_Proximal):
    """Adagrad's rate (slot "accumulator", `<var>/ProximalAdagrad`, starting at
    `initial_accumulator_value`), then the proximal shrinkage."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(learning_rate, l1_regularization_strength,
                         l2_regularization_strength, use_locking, name)
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for var in var_list:
            with var.graph.colocate_with(var.op):
                value = constant_op.constant(self._initial_accumulator_value,
                                             shape=var.get_shape(),
                                             dtype=var.dtype.base_dtype)
            self._get_or_make_slot(var, value, "accumulator", self._name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyperparameters(), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyperparameters(), grad.values,
            grad.indices, use_locking=self._use_locking)
