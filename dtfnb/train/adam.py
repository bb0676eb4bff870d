"""AdamOptimizer (Kingma and Ba), with TensorFlow's epsilon-hat formulation.

lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
var -= lr_t * m / (sqrt(v) + epsilon)
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.ops import control_flow_ops, state_ops, training_ops, unary_ops
from dtfnb.train.optimizer import Optimizer, cast_to


class AdamOptimizer(Optimizer):
    """Adam, with slots "m" (`<var>/Adam`) and "v" (`<var>/Adam_1`) and the non-slot
    variables `beta1_power` and `beta2_power`, colocated with the first variable by name.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        graph = get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph),
                self._get_non_slot_variable("beta2_power", graph))

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for var in var_list:
            self._zeros_slot(var, "m", self._name)
            self._zeros_slot(var, "v", self._name)

    def _prepare(self):
        call = self._call_if_callable
        self._lr_t = convert_to_tensor(call(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(call(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(call(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(call(self._epsilon), name="epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        return training_ops.apply_adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"),
            cast_to(beta1_power.value(), dtype), cast_to(beta2_power.value(), dtype),
            cast_to(self._lr_t, dtype), cast_to(self._beta1_t, dtype),
            cast_to(self._beta2_t, dtype), cast_to(self._epsilon_t, dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        # As TensorFlow 1: the moments decay whole, the gradient's rows are scattered into
        # them, and the variable is updated whole.
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        beta1_power, beta2_power = cast_to(beta1_power, dtype), cast_to(beta2_power, dtype)
        lr_t, beta1_t, beta2_t, epsilon_t = (cast_to(t, dtype) for t in (
            self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        lr = lr_t * unary_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        graph = get_default_graph()
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_scaled_g_values = grad.values * (1 - beta1_t)
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, grad.indices, m_scaled_g_values,
                                        use_locking=self._use_locking)
        v_scaled_g_values = (grad.values * grad.values) * (1 - beta2_t)
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, grad.indices, v_scaled_g_values,
                                        use_locking=self._use_locking)
        v_sqrt = unary_ops.sqrt(v_t)
        var_update = state_ops.assign_sub(var, lr * m_t / (v_sqrt + epsilon_t),
                                          use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops, name_scope):
        # The powers advance only after every variable has used this step's values.
        graph = get_default_graph()
        with graph.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph.colocate_with(beta1_power.op):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                                  use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                                  use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2,
                                      name=name_scope)
