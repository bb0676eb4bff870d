"""tf.layers (TensorFlow 1's functional layers): dense, dropout, flatten,
batch_normalization.

They build what TensorFlow 2.21 builds for them (its legacy Keras layers): a layer is a
variable scope (named `dense`, `dense_1`, … unless given a name) whose variables come
from get_variable, so `reuse=True` with the same name shares them. Each call also makes
a layer object, whose name (`dense_1` for the first unnamed dense of a graph, Keras
counting from 1) only TensorFlow's error messages show.
"""

import collections
import functools
import numbers
import operator
import weakref

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import (
    array_ops,
    constant_op,
    init_ops,
    linalg_ops,
    math_ops,
    nn_ops,
    slicing_ops,
    state_ops,
)
from dtfnb.ops.building import graph_of, is_tensor
from dtfnb.ops.cond import smart_cond
from dtfnb.ops.shape_util import constant_value
from dtfnb.ops.variable_scope import get_variable, variable_scope

_OBJECT_NAMES = weakref.WeakKeyDictionary()   # graph -> Counter of unnamed layers by kind
# The layers' defaults for initializers (None would mean get_variable's default).
_ZEROS, _ONES = init_ops.zeros_initializer(), init_ops.ones_initializer()


def _layer_name(kind, name):
    """The layer object's name: `name`, or `<kind>_<n>`, n counting that graph's unnamed
    layers of the kind from 1."""
    if name:
        return name
    counts = _OBJECT_NAMES.setdefault(get_default_graph(), collections.Counter())
    counts[kind] += 1
    return f"{kind}_{counts[kind]}"


def _check_min_ndim(inputs, min_ndim, layer_name):
    ndim = inputs.shape.ndims
    if ndim is not None and ndim < min_ndim:
        raise ValueError(f'Input 0 of layer "{layer_name}" is incompatible with the layer: '
                         f"expected min_ndim={min_ndim}, found ndim={ndim}. Full shape "
                         f"received: {tuple(inputs.shape)}")


def _weight(name, shape, dtype, initializer, regularizer, constraint, trainable):
    """A layer's variable; its regularization loss, if new, under `<name>/Regularizer`
    beside it (not colocated with it, as get_variable's own regularizer would be)."""
    graph = get_default_graph()
    known = {v.name for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
    variable = get_variable(name, shape, dtype=dtype, initializer=initializer,
                            trainable=trainable, constraint=constraint)
    if regularizer is not None and variable.name not in known:
        with graph.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return variable


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=_ZEROS, kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """activation(inputs @ kernel + bias), with variables `<name>/kernel` and `<name>/bias`
    of the inputs' floating dtype.

    Args:
      inputs: a tensor of rank >= 2 whose last dimension is known.
      units: the size of the last dimension of the output.
      kernel_initializer: default: the scope's initializer, else glorot uniform.
      activity_regularizer: its loss of the output, divided by the batch size, joins
        REGULARIZATION_LOSSES.
      name: the variable scope; default `dense`, made unique.
      reuse: True (or tf.AUTO_REUSE) to share the variables of an earlier layer `name`.
    Returns:
      the output tensor, of shape inputs.shape[:-1] + [units].
    """
    units = units if isinstance(units, int) else int(units)
    if units < 0:
        raise ValueError(f"Received an invalid value for `units`, expected a positive "
                         f"integer. Received: units={units}")
    layer_name = _layer_name("dense", name)
    with variable_scope(name, default_name="dense", values=[inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        _check_min_ndim(inputs, 2, layer_name)
        dtype = inputs.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"A Dense layer can only be built with a floating-point dtype. "
                            f"Received: dtype={dtype}")
        shape = inputs.shape
        if shape[-1].value is None:
            raise ValueError(f"The last dimension of the inputs to a Dense layer should be "
                             f"defined. Found None. Full input shape received: {shape}")
        kernel = _weight("kernel", [shape[-1].value, units], dtype, kernel_initializer,
                         kernel_regularizer, kernel_constraint, trainable)
        bias = (_weight("bias", [units], dtype, bias_initializer, bias_regularizer,
                        bias_constraint, trainable) if use_bias else None)
        if shape.ndims == 2:
            outputs = linalg_ops.matmul(inputs, kernel)
        else:   # along the last axis, keeping the leading ones
            outputs = linalg_ops.tensordot(inputs, kernel, [[shape.ndims - 1], [0]])
            outputs.set_shape(shape.as_list()[:-1] + [units])
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        if activity_regularizer is not None:
            _regularize_activity(outputs, activity_regularizer)
        return outputs


def _regularize_activity(outputs, regularizer):
    """The regularizer's loss of `outputs` per example of the batch."""
    with graph_of(outputs).name_scope("ActivityRegularizer"):
        loss = convert_to_tensor(regularizer(outputs))
        batch_size = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
        outputs.graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss / batch_size)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Each unit dropped with probability `rate` (the others scaled by 1 / (1 - rate))
    when `training`: a Python bool, or a boolean tensor such as the placeholder a
    training loop feeds True, which makes a tf.cond of the two."""
    if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
        raise ValueError(f"Invalid value {rate} received for `rate`, expected a value "
                         f"between 0 and 1.")
    with variable_scope(name, default_name="dropout", values=[inputs]):
        inputs = convert_to_tensor(inputs)
        if isinstance(rate, numbers.Real) and rate == 0:
            return array_ops.identity(inputs)

        def dropped():
            shape = None
            if noise_shape is not None:
                shape = convert_to_tensor([array_ops.shape(inputs)[i] if size is None else size
                                           for i, size in enumerate(noise_shape)])
            return nn_ops.dropout(inputs, rate=rate, noise_shape=shape, seed=seed)

        # None: TensorFlow's cond on Keras's learning phase, a placeholder that defaults
        # to false and that dtfnb does not have (docs/differences.md)
        return smart_cond(False if training is None else training, dropped,
                          lambda: array_ops.identity(inputs))


def flatten(inputs, name=None, data_format="channels_last"):
    """Reshaped to (batch, everything else); a vector becomes a column. With
    `channels_first` the channels (axis 1) go last first, as channels_last data has them."""
    data_format = _data_format(data_format)
    layer_name = _layer_name("flatten", name)
    with variable_scope(name, default_name="flatten", values=[inputs]):
        inputs = convert_to_tensor(inputs)
        _check_min_ndim(inputs, 1, layer_name)
        rank = inputs.shape.ndims
        if data_format == "channels_first" and rank and rank > 1:
            inputs = slicing_ops.transpose(inputs, [0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, axis=1)
        batch, rest = inputs.shape[0].value, inputs.shape[1:]
        if rest.is_fully_defined():
            target = constant_op.constant([-1, functools.reduce(operator.mul, rest.as_list(), 1)])
        elif batch is not None:
            target = constant_op.constant([batch, -1])
        else:
            target = [array_ops.shape(inputs)[0], -1]
        return array_ops.reshape(inputs, target)


def _data_format(value):
    data_format = value.lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         f'"channels_last". Received: {value}')
    return data_format


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=_ZEROS, gamma_initializer=_ONES,
                        moving_mean_initializer=_ZEROS, moving_variance_initializer=_ONES,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Inputs normalized over every axis but `axis` (the features), then scaled by `gamma`
    and shifted by `beta`: by the batch's own moments when `training` (a Python bool or
    a boolean tensor such as the book's training placeholder), else by the moving
    averages `moving_mean` and `moving_variance`, which a training step updates
    (mean += (1 - momentum) * (batch mean - mean)) through the ops it adds to
    `tf.GraphKeys.UPDATE_OPS`: run them with the training op, e.g. under
    `tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`.

    TensorFlow's non-fused graph, node for node. TensorFlow computes 4D and 5D inputs
    with its fused kernel (FusedBatchNormV3), which dtfnb does not have: pass
    fused=False for them. renorm, virtual_batch_size and adjustment are not supported.
    """
    for option, value, default in (("renorm", renorm, False),
                                   ("virtual_batch_size", virtual_batch_size, None),
                                   ("adjustment", adjustment, None)):
        if value != default:
            raise NotImplementedError(f"dtfnb's tf.layers.batch_normalization does not "
                                      f"support {option}")
    if not isinstance(axis, (int, list, tuple)):
        raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                        f"but received: {axis!r}")
    with variable_scope(name, default_name="batch_normalization", values=[inputs],
                        reuse=reuse):
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        axes = _validate_axis(axis, shape)
        rank = shape.ndims
        if fused is not False and rank in (4, 5):
            raise NotImplementedError(
                "TensorFlow normalizes 4D and 5D inputs with its fused kernel "
                "(FusedBatchNormV3), which dtfnb does not have: pass fused=False")
        sizes = {a: shape[a].value for a in axes}
        if None in sizes.values():
            raise ValueError(f"Input has undefined `axis` dimension. Received input with "
                             f"shape {tuple(shape)} and axis={tuple(axes)}")
        param_shape = ([sizes[axes[0]]] if len(axes) == 1
                       else [sizes.get(i, 1) for i in range(rank)])
        dtype = inputs.dtype.base_dtype
        param_dtype = dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype
        gamma = (_weight("gamma", param_shape, param_dtype, gamma_initializer,
                         gamma_regularizer, gamma_constraint, trainable) if scale else None)
        beta = (_weight("beta", param_shape, param_dtype, beta_initializer, beta_regularizer,
                        beta_constraint, trainable) if center else None)
        moving_mean = get_variable("moving_mean", param_shape, dtype=param_dtype,
                                   initializer=moving_mean_initializer, trainable=False)
        moving_variance = get_variable("moving_variance", param_shape, dtype=param_dtype,
                                       initializer=moving_variance_initializer,
                                       trainable=False)
        return _normalize(inputs, axes, training, momentum, epsilon, gamma, beta,
                          moving_mean, moving_variance)


def _validate_axis(axis, shape):
    rank = shape.ndims
    if not rank:
        raise ValueError(f"Input has undefined rank. Received: input_shape={shape}")
    axes = [a + rank if a < 0 else a for a in ([axis] if isinstance(axis, int) else axis)]
    if any(not 0 <= a < rank for a in axes):
        raise ValueError(f"Invalid value for `axis` argument. Expected 0 <= axis < "
                         f"inputs.rank (with inputs.rank={rank}). Received: "
                         f"axis={tuple(axes)}")
    if len(axes) != len(set(axes)):
        raise ValueError(f"Duplicate axis: {tuple(axes)}")
    return axes


def _normalize(inputs, axes, training, momentum, epsilon, gamma, beta, moving_mean,
               moving_variance):
    """The layer's call: the moments (batch or moving) chosen by `training`, the moving
    averages' updates, and tf.nn.batch_normalization, as Keras's BatchNormalization."""
    graph = get_default_graph()
    training_value = _static_bool(training)
    input_dtype = inputs.dtype.base_dtype
    if input_dtype in (dtypes.float16, dtypes.bfloat16):
        inputs = math_ops.cast(inputs, dtypes.float32)
    shape = inputs.shape
    ndims = shape.ndims
    reduction_axes = [i for i in range(ndims) if i not in axes]
    broadcast_shape = [1] * ndims
    broadcast_shape[axes[0]] = shape[axes[0]].value

    def broadcast(v):
        if (v is not None and len(v.shape) != ndims
                and reduction_axes != list(range(ndims - 1))):
            return array_ops.reshape(v, broadcast_shape)
        return v

    gamma, beta = broadcast(gamma), broadcast(beta)
    if training_value is False:
        mean, variance = moving_mean, moving_variance
    else:
        batch_mean, batch_variance = nn_ops.moments(
            math_ops.cast(inputs, moving_mean.dtype.base_dtype), reduction_axes,
            keepdims=len(axes) > 1)
        mean = smart_cond(training, lambda: batch_mean,
                          lambda: convert_to_tensor(moving_mean))
        variance = smart_cond(training, lambda: batch_variance,
                              lambda: convert_to_tensor(moving_variance))
        for variable, value in ((moving_mean, mean), (moving_variance, variance)):
            update = smart_cond(
                training,
                lambda variable=variable, value=value: _assign_moving_average(
                    variable, value, momentum),
                lambda variable=variable: variable)
            graph.add_to_collection(GraphKeys.UPDATE_OPS, update.op)
    mean = math_ops.cast(mean, inputs.dtype)
    variance = math_ops.cast(variance, inputs.dtype)
    if beta is not None:
        beta = math_ops.cast(beta, inputs.dtype)
    if gamma is not None:
        gamma = math_ops.cast(gamma, inputs.dtype)
    outputs = nn_ops.batch_normalization(inputs, broadcast(mean), broadcast(variance), beta,
                                         gamma, epsilon)
    if input_dtype in (dtypes.float16, dtypes.bfloat16):
        outputs = math_ops.cast(outputs, input_dtype)
    outputs.set_shape(shape)
    return outputs


def _static_bool(pred):
    """`pred`'s value where it is known at build (a Python bool, 1, 0, a constant)."""
    if is_tensor(pred):
        value = constant_value(pred)
        return None if value is None else bool(value)
    if pred in {0, 1}:
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Received: "
                    f"{type(pred)}")


def _assign_moving_average(variable, value, momentum):
    """variable -= (variable - value) * (1 - momentum), beside the variable."""
    graph = get_default_graph()
    with graph.name_scope("AssignMovingAvg") as scope, graph.colocate_with(variable.op):
        decay = convert_to_tensor(1.0 - momentum, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
        return state_ops.assign_sub(variable, delta, name=scope)
