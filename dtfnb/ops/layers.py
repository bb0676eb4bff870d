"""tf.layers (TensorFlow 1's functional layers): dense, dropout, flatten.

A layer is a variable scope (named `dense`, `dense_1`, … unless given a name)
whose variables come from get_variable, so `reuse=True` with the same name
shares them, as in TensorFlow 1.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import (
    array_ops,
    init_ops,
    joining_ops,
    linalg_ops,
    math_ops,
    nn_ops,
    slicing_ops,
)
from dtfnb.ops.variable_scope import get_variable, variable_scope


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """activation(inputs @ kernel + bias), with variables `<name>/kernel` and `<name>/bias`.

    Args:
      inputs: a tensor of rank >= 2 whose last dimension is known.
      units: the size of the last dimension of the output.
      kernel_initializer: default: the scope's initializer, else glorot uniform.
      bias_initializer: default: zeros.
      name: the variable scope; default `dense`, made unique.
      reuse: True (or tf.AUTO_REUSE) to share the variables of an earlier layer `name`.
    Returns:
      the output tensor, of shape inputs.shape[:-1] + [units].
    """
    units = int(units)
    if units <= 0:
        raise ValueError(f"Received an invalid value for `units`, expected a positive "
                         f"integer, got {units}.")
    with variable_scope(name, default_name="dense", values=[inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_complex):
            dtype = dtypes.float32
            inputs = math_ops.cast(inputs, dtype)
        shape = inputs.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"Input 0 of layer dense is incompatible with the layer: expected "
                             f"min_ndim=2, found ndim={shape.ndims}. Full shape received: "
                             f"{shape.as_list()}")
        in_dim = shape[-1].value if shape.ndims is not None else None
        if in_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        kernel = get_variable("kernel", [in_dim, units], dtype=dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable, constraint=kernel_constraint)
        bias = None
        if use_bias:
            bias = get_variable("bias", [units], dtype=dtype,
                                initializer=bias_initializer or init_ops.zeros_initializer(),
                                regularizer=bias_regularizer, trainable=trainable,
                                constraint=bias_constraint)
        if shape.ndims == 2:
            outputs = linalg_ops.matmul(inputs, kernel)
        else:
            # Rank > 2: multiply along the last axis, keeping the leading dimensions.
            flat = array_ops.reshape(inputs, [-1, in_dim])
            outputs = linalg_ops.matmul(flat, kernel)
            lead = array_ops.shape(inputs)[:-1]
            outputs = array_ops.reshape(outputs, joining_ops.concat([lead, [units]], 0))
            outputs.set_shape(TensorShape(shape.as_list()[:-1] + [units]))
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        if activity_regularizer is not None:
            loss = activity_regularizer(outputs)
            if loss is not None:
                outputs.graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return outputs


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Drops each unit with probability `rate` when `training` (a Python bool) is true."""
    if not isinstance(training, bool):
        raise TypeError("dtfnb's tf.layers.dropout needs `training` as a Python bool "
                        "(tf.cond is not available to choose at run time).")
    with variable_scope(name, default_name="dropout", values=[inputs]):
        inputs = convert_to_tensor(inputs)
        if not training or rate == 0:
            return array_ops.identity(inputs)
        return nn_ops.dropout(inputs, noise_shape=noise_shape, seed=seed, rate=rate)


def flatten(inputs, name=None, data_format="channels_last"):
    """Reshapes to (batch, everything else)."""
    with variable_scope(name, default_name="flatten", values=[inputs]):
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        if data_format == "channels_first" and shape.ndims is not None and shape.ndims > 2:
            inputs = slicing_ops.transpose(inputs, [0] + list(range(2, shape.ndims)) + [1])
            shape = inputs.shape
        rest = shape[1:].num_elements() if shape.ndims is not None else None
        if rest is not None:
            return array_ops.reshape(inputs, [-1, rest])
        if shape.ndims is not None and shape[0].value is not None:
            return array_ops.reshape(inputs, [shape[0].value, -1])
        raise ValueError("dtfnb's tf.layers.flatten needs either the batch size or all "
                         f"other dimensions known, got shape {shape}")
