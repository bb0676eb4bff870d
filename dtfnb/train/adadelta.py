"""AdadeltaOptimizer: a per-element rate from running averages of squared gradients and
squared updates (no learning rate needed; TensorFlow's default 0.001 scales it)."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import training_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class AdadeltaOptimizer(Optimizer):
    """Adadelta, with slots "accum" and "accum_update" (`<var>/Adadelta`,
    `<var>/Adadelta_1`), both starting at zeros."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "accum", self._name)
            self._zeros_slot(var, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="lr")
        self._rho_t = convert_to_tensor(self._call_if_callable(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon),
                                            name="epsilon")

    def _hyperparameters(self, var):
        dtype = var.dtype.base_dtype
        return [cast_to(t, dtype) for t in (self._lr_t, self._rho_t, self._epsilon_t)]

    def _apply_dense(self, grad, var):
        return training_ops.apply_adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            *self._hyperparameters(var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            *self._hyperparameters(var), grad.values, grad.indices,
            use_locking=self._use_locking)
