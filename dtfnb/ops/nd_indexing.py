"""gather_nd and scatter_nd: slices of a tensor taken, or placed, at index tuples (the
last dimension of `indices` indexes the first dimensions of the tensor)."""

from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops.array_ops import shape, squeeze
from dtfnb.ops.building import make_tensor, op_scope
from dtfnb.ops.shape_util import format_shape, shape_error, shape_value


def _gather_nd_shape(op):
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims is not None and indices.ndims < 1:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    depth = None if indices.ndims is None else indices.as_list()[-1]
    if params.ndims is None or depth is None:
        return [unknown_shape()]
    if depth > params.ndims:
        raise shape_error(op, "indices.shape[-1] must be <= params.rank, but saw indices "
                          f"shape: {format_shape(indices)} and params shape: "
                          f"{format_shape(params)}")
    return [TensorShape(indices.as_list()[:-1] + params.as_list()[depth:])]


def _scatter_nd_shape(op):
    indices, updates = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims is not None and updates.ndims is not None:
        outer = indices.ndims - 1
        a, b = indices.as_list()[:outer], updates.as_list()[:outer]
        for i, (x, y) in enumerate(zip(a, b)):
            if x is not None and y is not None and x != y:
                raise shape_error(
                    op, f"Dimensions [0,{outer}) of indices[shape={format_shape(indices)}] = "
                    f"{format_shape(TensorShape(a))} must match dimensions [0,{outer}) of "
                    f"updates[shape={format_shape(updates)}] = {format_shape(TensorShape(b))}: "
                    f"Dimension {i} in both shapes must be equal, but are {x} and {y}. Shapes "
                    f"are {format_shape(TensorShape(a))} and {format_shape(TensorShape(b))}.")
    dims = shape_value(op.inputs[2])
    return [unknown_shape() if dims is None else TensorShape(dims)]


define_op("GatherNd", _gather_nd_shape)
define_op("ScatterNd", _scatter_nd_shape)


def gather_nd(params, indices, name=None, batch_dims=0):
    """params[indices[..., 0], ..., indices[..., d - 1]] for each index tuple: shape
    indices.shape[:-1] + params.shape[d:]."""
    with op_scope("GatherNd", name, params, indices) as scope:
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        return make_tensor("GatherNd", [params, indices], params.dtype.base_dtype,
                           name=scope, attrs={"Tparams": params.dtype.base_dtype,
                                              "Tindices": indices.dtype.base_dtype,
                                              "bad_indices_policy": ""})


def scatter_nd(indices, updates, shape, name=None):  # noqa: A002 - TensorFlow's name
    """Zeros of `shape` with `updates` added at the index tuples (repeats add up)."""
    with op_scope("ScatterNd", name, indices, updates, shape) as scope:
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, name="updates")
        shape = convert_to_tensor(shape, dtype=indices.dtype.base_dtype, name="shape")
        return make_tensor("ScatterNd", [indices, updates, shape], updates.dtype.base_dtype,
                           name=scope, attrs={"T": updates.dtype.base_dtype,
                                              "Tindices": indices.dtype.base_dtype,
                                              "bad_indices_policy": ""})


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    ref, indices = op.inputs
    ref_shape = shape(ref, out_type=indices.dtype)
    if indices.shape.ndims == 2 and indices.shape.as_list()[-1] == 1:
        return [IndexedSlices(grad, squeeze(indices, axis=-1), ref_shape), None]
    return [scatter_nd(indices, grad, ref_shape), None]


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None]
