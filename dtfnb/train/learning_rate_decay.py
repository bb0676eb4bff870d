"""Learning rate schedules of TensorFlow 1 (tf.train.exponential_decay and its kin, the
cosine decays), built as TensorFlow 2.21's compat.v1 builds them: ops of the global
step, evaluated each step."""

import math

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import math_ops, random_ops, unary_ops
from dtfnb.ops.array_ops import where_v2
from dtfnb.ops.building import graph_of
from dtfnb.ops.case import case
from dtfnb.ops.cond import cond
from dtfnb.ops.constant_op import constant


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
        learning_rate, decay_rate, p = _decay_terms(learning_rate, global_step, decay_steps,
                                                    decay_rate, staircase)
        return math_ops.multiply(learning_rate, math_ops.pow(decay_rate, p), name=scope)


def _decay_terms(learning_rate, global_step, decay_steps, decay_rate, staircase):
    """The learning rate, the decay rate in its dtype, and global_step / decay_steps
    (rounded down when `staircase`), built in this order, as TensorFlow's schedules
    build them."""
    learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = learning_rate.dtype.base_dtype
    decay_steps = math_ops.cast(decay_steps, dtype)
    decay_rate = math_ops.cast(decay_rate, dtype)
    p = math_ops.cast(global_step, dtype) / decay_steps
    return learning_rate, decay_rate, unary_ops.floor(p) if staircase else p


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps): exponential_decay of
    the rate exp(-decay_rate), which is worked out before the schedule's scope."""
    rate = unary_ops.exp(unary_ops.negative(decay_rate))
    return exponential_decay(learning_rate, global_step, decay_steps, rate, staircase, name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps), the quotient of the
    steps rounded down when `staircase`."""
    with graph_of(learning_rate, global_step).name_scope(name or "InverseTimeDecay") as scope:
        learning_rate, decay_rate, p = _decay_terms(learning_rate, global_step, decay_steps,
                                                    decay_rate, staircase)
        one = math_ops.cast(constant(1), learning_rate.dtype.base_dtype)
        return math_ops.divide(learning_rate,
                               math_ops.add(one, math_ops.multiply(decay_rate, p)), name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """From learning_rate to end_learning_rate along (1 - step / decay_steps) ** power,
    then end_learning_rate; with `cycle`, again over each next multiple of decay_steps."""
    with graph_of(learning_rate, global_step).name_scope(name or "PolynomialDecay") as scope:
        learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = learning_rate.dtype.base_dtype
        end_learning_rate = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        step = math_ops.cast(global_step, dtype)
        steps = math_ops.cast(decay_steps, dtype)
        if cycle:   # the first multiple of decay_steps past the step (1 at step 0)
            multiplier = where_v2(math_ops.equal(step, 0), 1.0,
                                  unary_ops.ceil(step / decay_steps))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.divide(step, steps)
        return math_ops.add(math_ops.multiply(learning_rate - end_learning_rate,
                                              math_ops.pow(1 - p, power)),
                            end_learning_rate, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i - 1] < x <=
    boundaries[i], values[-1] past the last boundary (a tf.case of the intervals)."""
    boundaries = [convert_to_tensor(b) for b in _flat(boundaries)]
    values = [convert_to_tensor(v) for v in _flat(values)]
    x = convert_to_tensor(x)
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype != x.dtype.base_dtype:
            if b.dtype.base_dtype != dtypes.int32 or x.dtype.base_dtype != dtypes.int64:
                raise ValueError(f"Boundaries ({b.dtype.base_dtype}) must have the same "
                                 f"dtype as x ({x.dtype.base_dtype}).")
            boundaries[i] = math_ops.cast(b, x.dtype.base_dtype)
    for v in values[1:]:
        if v.dtype.base_dtype != values[0].dtype.base_dtype:
            raise ValueError("Values must have elements all with the same dtype "
                             f"({values[0].dtype.base_dtype} vs {v.dtype.base_dtype}).")
    with x.graph.name_scope(name or "PiecewiseConstant"):
        pairs = [(x <= boundaries[0], lambda: values[0]),
                 (x > boundaries[-1], lambda: values[-1])]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            pairs.append(((x > low) & (x <= high), lambda v=v: v))
        return case(pairs, lambda: values[0], exclusive=True)


def _flat(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _half_cosine(fraction):
    """0.5 * (1 + cos(pi * fraction))."""
    return 0.5 * (1.0 + unary_ops.cos(constant(math.pi) * fraction))


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate times a half cosine from 1 down to `alpha` over `decay_steps`, then
    `alpha`."""
    with graph_of(learning_rate, global_step).name_scope(name or "CosineDecay"):
        learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = learning_rate.dtype.base_dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps)
        decayed = (1 - alpha) * _half_cosine(step / decay_steps) + alpha
        return math_ops.multiply(learning_rate, decayed)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0,
                          m_mul=1.0, alpha=0.0, name=None):
    """cosine_decay restarting each period (SGDR): the i-th period lasts
    first_decay_steps * t_mul**i steps and starts at learning_rate * m_mul**i."""
    with graph_of(learning_rate, global_step).name_scope(name or "SGDRDecay") as scope:
        learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = learning_rate.dtype.base_dtype
        first_decay_steps, alpha, t_mul, m_mul = (
            math_ops.cast(v, dtype) for v in (first_decay_steps, alpha, t_mul, m_mul))
        completed_fraction = math_ops.cast(global_step, dtype) / first_decay_steps

        def restarts(geometric):
            if geometric:
                restart = unary_ops.floor(
                    unary_ops.log(1.0 - completed_fraction * (1.0 - t_mul))
                    / unary_ops.log(t_mul))
                done = (1.0 - t_mul ** restart) / (1.0 - t_mul)
                return restart, (completed_fraction - done) / t_mul ** restart
            restart = unary_ops.floor(completed_fraction)
            return restart, completed_fraction - restart

        restart, fraction = cond(math_ops.equal(t_mul, 1.0), lambda: restarts(False),
                                 lambda: restarts(True))
        cosine_decayed = 0.5 * m_mul ** restart * (
            1.0 + unary_ops.cos(constant(math.pi) * fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return math_ops.multiply(learning_rate, decayed, name=scope)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """learning_rate * ((alpha + linear) * cosine + beta): a linear decay to 0 over
    `decay_steps` times `num_periods` periods of a cosine."""
    with graph_of(learning_rate, global_step).name_scope(name or "LinearCosineDecay") \
            as scope:
        return _linear_cosine(scope, learning_rate, global_step, decay_steps, num_periods,
                              alpha, beta)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with Gaussian noise on the linear term, of variance
    initial_variance / (1 + global_step) ** variance_decay."""
    with graph_of(learning_rate, global_step).name_scope(name or "NoisyLinearCosineDecay") \
            as scope:
        return _linear_cosine(scope, learning_rate, global_step, decay_steps, num_periods,
                              alpha, beta, noise=(initial_variance, variance_decay))


def _linear_cosine(scope, learning_rate, global_step, decay_steps, num_periods, alpha, beta,
                   noise=None):
    """The linear cosine decays, built in TensorFlow's order (which names their ops);
    `noise`: (initial variance, variance decay)."""
    learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = learning_rate.dtype.base_dtype
    decay_steps = math_ops.cast(decay_steps, dtype)
    if noise is not None:
        initial_variance, variance_decay = (math_ops.cast(v, dtype) for v in noise)
    num_periods, alpha, beta = (math_ops.cast(v, dtype) for v in (num_periods, alpha, beta))
    step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps)
    linear = (decay_steps - step) / decay_steps
    if noise is not None:
        variance = initial_variance / math_ops.pow(1.0 + step, variance_decay)
        linear = linear + random_ops.random_normal(linear.shape,
                                                   stddev=unary_ops.sqrt(variance))
    completed_fraction = step / decay_steps
    cosine = _half_cosine(2.0 * num_periods * completed_fraction)
    return math_ops.multiply(learning_rate, (alpha + linear) * cosine + beta, name=scope)
