"""AdagradOptimizer: accum += g^2; var -= lr * g / sqrt(accum)."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import init_ops, training_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class AdagradOptimizer(Optimizer):
    """Adagrad, with slot "accumulator" (`<var>/Adagrad`) starting at
    `initial_accumulator_value`."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for var in var_list:
            dtype = var.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(var, init, var.get_shape(), dtype,
                                                    "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast_to(self._learning_rate_tensor, var.dtype.base_dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast_to(self._learning_rate_tensor, var.dtype.base_dtype), grad.values,
            grad.indices, use_locking=self._use_locking).op
