"""tf.layers (TensorFlow 1's functional layers): dense, dropout, flatten.

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

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import array_ops, constant_op, init_ops, linalg_ops, math_ops, nn_ops, slicing_ops
from dtfnb.ops.building import graph_of
from dtfnb.ops.cond import smart_cond
from dtfnb.ops.variable_scope import get_variable, variable_scope

_OBJECT_NAMES = weakref.WeakKeyDictionary()   # graph -> Counter of unnamed layers by kind
_ZEROS = init_ops.zeros_initializer()   # dense's bias default (None: get_variable's default)


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

