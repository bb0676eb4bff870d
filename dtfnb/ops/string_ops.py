"""String ops: ReduceJoin (tf.strings.reduce_join, and tf.reduce_join)."""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops import array_ops, constant_op, math_ops
from dtfnb.ops.building import graph_of, int_tensor, make_tensor, renamed_argument
from dtfnb.ops.shape_util import constant_value, shape_error


def _reduce_join_shape(op):
    """The input's shape without the reduced dimensions (1s with keep_dims); unknown
    where the axes are."""
    shape, keep = op.inputs[0].shape, op.get_attr("keep_dims")
    axes = constant_value(op.inputs[1])
    if shape.ndims is None:
        return [unknown_shape()]
    if axes is None:
        return [TensorShape([None] * shape.ndims) if keep else unknown_shape()]
    rank = shape.ndims
    reduced = set()
    for axis in np.reshape(axes, -1).tolist():
        if not -rank <= axis < rank:
            raise shape_error(op, f"Invalid reduction dimension {axis} for input with {rank} "
                                  f"dimensions.", computed={1: axes})
        reduced.add(axis % rank)
    dims = shape.as_list()
    return [TensorShape([1 if i in reduced else d for i, d in enumerate(dims)] if keep
                        else [d for i, d in enumerate(dims) if i not in reduced])]


define_op("ReduceJoin", _reduce_join_shape)
NotDifferentiable("ReduceJoin")


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """The strings of `inputs` joined with `separator` along `axis` (all axes if None),
    the first axis listed varying fastest; TensorFlow 1's signature."""
    keepdims = renamed_argument("keepdims", keepdims, "keep_dims", keep_dims)
    axis = renamed_argument("axis", axis, "reduction_indices", reduction_indices)
    return reduce_join_v2(inputs, axis, keepdims, separator, name)


def reduce_join_v2(inputs, axis=None, keepdims=False, separator="", name=None):
    """tf.strings.reduce_join: the strings of `inputs` joined along `axis`."""
    graph = graph_of(inputs, axis)
    with graph.as_default(), graph.name_scope("ReduceJoin"):
        inputs = convert_to_tensor(inputs)
        if axis is None:   # every axis, the last varying fastest: row-major order
            ndims = inputs.shape.ndims
            axis = (constant_op.constant(np.arange(ndims - 1, -1, -1), dtype=dtypes.int32)
                    if ndims is not None else
                    math_ops.range(array_ops.rank(inputs) - 1, -1, -1))
        with graph.name_scope(name or "ReduceJoin") as scope:
            axis = int_tensor(axis, name="reduction_indices")
            return make_tensor("ReduceJoin", [inputs, axis], dtypes.string, name=scope,
                               attrs={"keep_dims": bool(keepdims), "separator": separator})
