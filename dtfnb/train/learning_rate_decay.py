"""Learning rate schedules of TensorFlow 1 (tf.train.exponential_decay), built as
TensorFlow 2.21's compat.v1 builds them: ops of the global step, evaluated each step."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import math_ops, unary_ops
from dtfnb.ops.building import graph_of


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ** (global_step / decay_steps), the exponent rounded down
    when `staircase` (the rate then drops every decay_steps steps).

    ```python
    import dtfnb as tf
    global_step = tf.train.get_or_create_global_step()
    rate = tf.train.exponential_decay(0.1, global_step, 10000, 0.1, staircase=True)
    ```
    """
    with graph_of(learning_rate, global_step).name_scope(name or "ExponentialDecay") as scope:
        learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = learning_rate.dtype.base_dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(global_step, dtype) / decay_steps
        if staircase:
            p = unary_ops.floor(p)
        return math_ops.multiply(learning_rate, math_ops.pow(decay_rate, p), name=scope)
