"""RMSPropOptimizer, plain and centered, with TensorFlow's update order.

ms = decay * ms + (1 - decay) * g^2          (centered: mg = decay * mg + (1 - decay) * g)
mom = momentum * mom + lr * g / sqrt(ms + epsilon)   (centered: ms - mg^2 + epsilon)
var -= mom
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import init_ops, training_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class RMSPropOptimizer(Optimizer):
    """RMSProp, with slots "rms" (`<var>/RMSProp`, starting at ones), "mg" when centered,
    and "momentum", named `<var>/RMSProp_1`, `<var>/RMSProp_2` in creation order."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for var in var_list:
            dtype = var.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                var, init_ops.ones_initializer(dtype=dtype), var.get_shape(), dtype, "rms",
                self._name)
            if self._centered:
                self._zeros_slot(var, "mg", self._name)
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self):
        call = self._call_if_callable
        self._learning_rate_tensor = convert_to_tensor(call(self._learning_rate),
                                                       name="learning_rate")
        self._decay_tensor = convert_to_tensor(call(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(call(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(call(self._epsilon), name="epsilon")

    def _hyper(self, var):
        dtype = var.dtype.base_dtype
        return [cast_to(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                            self._momentum_tensor, self._epsilon_tensor)]

    def _apply_dense(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *self._hyper(var), grad,
                use_locking=self._use_locking).op
        return training_ops.apply_rms_prop(var, rms, mom, *self._hyper(var), grad,
                                           use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.sparse_apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *self._hyper(var), grad.values,
                grad.indices, use_locking=self._use_locking).op
        return training_ops.sparse_apply_rms_prop(var, rms, mom, *self._hyper(var),
                                                  grad.values, grad.indices,
                                                  use_locking=self._use_locking).op
