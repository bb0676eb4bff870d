"""tf.train.ExponentialMovingAverage: a shadow variable per variable (or tensor), moved
toward it by each run of the op `apply` returns, as TensorFlow builds it.

The shadow `<var>/ExponentialMovingAverage` starts at the variable's value (its
initialized value: a cond on whether it is initialized, which the initializer's guard
then copies, as TensorFlow's does), or at zeros for a tensor; each update is
shadow -= (1 - decay) * (shadow - value), with decay at most (1 + n) / (10 + n) after
n updates when `num_updates` is given. The average of a tensor is not debiased
(TensorFlow's zero_debias=True): dtfnb raises NotImplementedError for it."""

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import control_flow_ops, init_ops, math_ops, state_ops
from dtfnb.ops.variables import Variable, trainable_variables
from dtfnb.train.slot_creator import create_slot

_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def assign_moving_average(variable, value, decay, name=None):
    """variable -= (1 - decay) * (variable - value): the op that moves `variable` toward
    `value`."""
    graph = get_default_graph()
    with graph.name_scope(name or "AssignMovingAvg") as scope:
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


class ExponentialMovingAverage:
    """Keeps moving averages of variables (or tensors): `apply(var_list)` makes their
    shadow variables and returns the op that updates them; `average(var)` is the shadow.

    ```python
    ema = tf.train.ExponentialMovingAverage(decay=0.999)
    with tf.control_dependencies([train_op]):
        train_and_average = ema.apply(tf.trainable_variables())
    ```
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._zero_debias = zero_debias
        self._num_updates = num_updates
        self._name = name
        self._averages = {}

    @property
    def name(self):
        """The name of the shadow variables (after their variable's) and of the op."""
        return self._name

    def apply(self, var_list=None):
        """Makes the shadow variables of `var_list` (default: the trainable variables) and
        returns the op that moves each shadow toward its variable."""
        if var_list is None:
            var_list = trainable_variables()
        graph = get_default_graph()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var not in self._averages:
                with graph.control_dependencies(None):   # TensorFlow's init_scope
                    self._averages[var] = self._shadow(graph, var)
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32,
                                            name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[var], var, decay)
                       for var in var_list]
            return control_flow_ops.group(*updates, name=scope)

    def _shadow(self, graph, var):
        if isinstance(var, Variable):
            with graph.device(var.device):
                start = var.initialized_value()
            graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            return create_slot(var, start, None, None, self._name)
        if self._zero_debias:
            raise NotImplementedError("dtfnb's ExponentialMovingAverage does not debias the "
                                      "averages of tensors (zero_debias=True)")
        return create_slot(var, init_ops.zeros_initializer(), var.shape, var.dtype.base_dtype,
                           self._name, colocate_with_primary=var.op.type in (
                               "Variable", "VariableV2", "VarHandleOp"))

    def average(self, var):
        """The shadow variable of `var`, or None."""
        return self._averages.get(var)

    def average_name(self, var):
        """The name of `var`'s shadow (made or to be made)."""
        if var in self._averages:
            return self._averages[var].op.name
        return get_default_graph().unique_name(f"{var.op.name}/{self._name}",
                                               mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """{name in a checkpoint: variable} restoring each averaged variable from its
        shadow's value, and the other global variables as themselves."""
        if moving_avg_variables is None:
            moving_avg_variables = (trainable_variables()
                                    + get_default_graph().get_collection(
                                        GraphKeys.MOVING_AVERAGE_VARIABLES))
        averaged = set(moving_avg_variables)
        name_map = {self.average_name(v): v for v in averaged}
        names = {v.name for v in averaged}
        for v in set(get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)):
            if v.name not in names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map

