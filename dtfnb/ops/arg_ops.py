"""ArgMax and ArgMin: the index of the largest or smallest value along an axis."""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops import math_ops
from dtfnb.ops.building import int_tensor, make_tensor, op_scope
from dtfnb.ops.shape_util import constant_value


def _arg_shape(op):
    x = op.inputs[0].shape
    axis = constant_value(op.inputs[1])
    if x.ndims is None or axis is None:
        return [unknown_shape()]
    return [TensorShape(math_ops.reduced_dims(
        op, x.as_list(), axis, False,
        lambda a, rank: f"Dimension ({a}) must be in the range [{-rank}, {rank}), where "
                        f"{rank} is the number of dimensions in the input."))]


define_op("ArgMax", _arg_shape)
define_op("ArgMin", _arg_shape)
NotDifferentiable("ArgMax")
NotDifferentiable("ArgMin")


def _arg(op_type, input, axis, name, dimension, output_type):  # noqa: A002
    if axis is None:
        axis = 0 if dimension is None else dimension
    output_type = dtypes.as_dtype(output_type)
    with op_scope(op_type, name, input) as scope:
        x = convert_to_tensor(input, name="input")
        axis = int_tensor(axis, name="dimension")
        return make_tensor(op_type, [x, axis], output_type, name=scope,
                           attrs={"T": x.dtype.base_dtype, "Tidx": axis.dtype,
                                  "output_type": output_type})


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the largest value along `axis` (`dimension` is its older spelling)."""
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the smallest value along `axis` (`dimension` is its older spelling)."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)
