"""The weights tf.losses accepts: a scalar, or a tensor of the values' rank whose every
dimension is 1 or the values' own. Checked statically where ranks and shapes are known,
else by an Assert that runs with the loss."""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import array_ops, joining_ops, math_ops, set_ops
from dtfnb.ops.building import graph_of
from dtfnb.ops.check_ops import Assert
from dtfnb.ops.cond import cond
from dtfnb.ops.control_flow_ops import no_op
from dtfnb.ops.shape_util import constant_value

_ERROR_PREFIX = "weights can not be broadcast to values."


def _has_valid_dims(weights_shape, values_shape):
    """Whether every weights dimension is 1 or the values' one: the set of (dimension,
    size) pairs of the weights, less the values' sizes and 1s, is empty."""
    with graph_of(weights_shape).name_scope("has_invalid_dims") as scope:
        values_shape_2d = array_ops.expand_dims(values_shape, -1)
        valid_dims = joining_ops.concat(
            (values_shape_2d, array_ops.ones_like(values_shape_2d)), axis=1)
        weights_shape_2d = array_ops.expand_dims(weights_shape, -1)
        invalid_dims = set_ops.set_difference(weights_shape_2d, valid_dims)
        num_invalid_dims = array_ops.size(invalid_dims.values, name="num_invalid_dims")
        return math_ops.equal(0, num_invalid_dims, name=scope)


def _has_valid_nonscalar_shape(weights_rank, weights_shape, values_rank, values_shape):
    with graph_of(weights_rank).name_scope("has_valid_nonscalar_shape") as scope:
        is_same_rank = math_ops.equal(values_rank, weights_rank, name="is_same_rank")
        return cond(is_same_rank, lambda: _has_valid_dims(weights_shape, values_shape),
                    lambda: is_same_rank, name=scope)


def assert_broadcastable(weights, values):
    """A NoOp where the shapes settle it at build (ValueError if they cannot broadcast),
    else an Assert that fails the step with the two shapes."""
    graph = graph_of(weights, values)
    with graph.name_scope("assert_broadcastable") as scope:
        with graph.name_scope("weights") as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        weights_rank_static = constant_value(weights_rank)
        with graph.name_scope("values") as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        values_rank_static = constant_value(values_rank)

        if weights_rank_static is not None and values_rank_static is not None:
            if weights_rank_static == 0:
                return no_op(name="static_scalar_check_success")
            if weights_rank_static != values_rank_static:
                raise ValueError(
                    f"{_ERROR_PREFIX} values.rank={values_rank_static}. "
                    f"weights.rank={weights_rank_static}. values.shape={values.shape}. "
                    f"weights.shape={weights.shape}. Received weights={weights}, "
                    f"values={values}")
            weights_shape_static = constant_value(weights_shape)
            values_shape_static = constant_value(values_shape)
            if weights_shape_static is not None and values_shape_static is not None:
                for i, (w, v) in enumerate(zip(weights_shape_static, values_shape_static)):
                    if w not in (1, v):
                        raise ValueError(
                            f"{_ERROR_PREFIX} Mismatch at dim {i}. "
                            f"values.shape={values_shape_static}, "
                            f"weights.shape={weights_shape_static}. Received "
                            f"weights={weights}, values={values}")
                return no_op(name="static_dims_check_success")

        is_scalar = math_ops.equal(0, weights_rank, name="is_scalar")
        data = (_ERROR_PREFIX, "weights.shape=", weights.name, weights_shape,
                "values.shape=", values.name, values_shape, "is_scalar=", is_scalar)
        is_valid_shape = cond(
            is_scalar, lambda: is_scalar,
            lambda: _has_valid_nonscalar_shape(weights_rank, weights_shape, values_rank,
                                               values_shape),
            name="is_valid_shape")
        return Assert(is_valid_shape, data, name=scope)


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (after assert_broadcastable's check):
    what a weighted mean divides by."""
    graph = graph_of(weights, values)
    with graph.name_scope("broadcast_weights") as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape.is_compatible_with(values.shape)):
            return weights
        with graph.control_dependencies((assert_broadcastable(weights, values),)):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)
