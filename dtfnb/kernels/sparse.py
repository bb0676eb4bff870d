"""SparseTensorsMap kernels: add SparseTensors to a map, take a batch of them back.

The map is a resource of the device's ResourceMgr named by the op's shared_name; an
op that adds without one names the map after itself (the take then names it so), as
TensorFlow's. A take without a shared_name has a map of its own, which is empty.
"""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.object_arrays import object_scalar, object_vector
from dtfnb.kernels.handles import resource_of
from dtfnb.kernels.registry import register_kernel
from dtfnb.resources.queues import shape_string
from dtfnb.resources.sparse_tensors_map import SparseTensorsMap


def _invalid(message):
    return InvalidArgumentError(None, None, message)


def _tensors_map(ctx, adding):
    if adding and not ctx.attrs.get("shared_name"):
        return ctx.resource_mgr.lookup_or_create(ctx.attrs.get("container", ""), ctx.name,
                                                 lambda: SparseTensorsMap(ctx.name))
    return resource_of(ctx, lambda ctx, name: SparseTensorsMap(name), SparseTensorsMap,
                       "SparseTensorsMap")


def _check_components(indices, values, shape):
    for what, array, ndim, kind in (("indices", indices, 2, "a matrix"),
                                    ("values", values, 1, "a vector"),
                                    ("shape", shape, 1, "a vector")):
        if array.ndim != ndim:
            raise _invalid(f"Input {what} should be {kind} but received shape "
                           f"{shape_string(array.shape)}")


def check_indices(indices, shape):
    """TensorFlow's SparseTensor::IndicesValid: each index within `shape`, after the one
    before it in row-major order."""
    if not len(indices):
        return
    outside = ((indices < 0) | (indices >= shape)).any(axis=1)
    steps = np.diff(indices, axis=0)
    moved = steps != 0
    first_move = steps[np.arange(len(steps)), moved.argmax(axis=1)]
    backwards = np.concatenate([[False], moved.any(axis=1) & (first_move < 0)])
    repeated = np.concatenate([[False], ~moved.any(axis=1)])
    bad = outside | backwards | repeated
    if bad.any():
        n = int(bad.argmax())
        index = f"indices[{n}] = [{','.join(str(i) for i in indices[n])}]"
        if outside[n]:
            raise _invalid(f"{index} is out of bounds: need 0 <= index < "
                           f"[{','.join(str(d) for d in shape)}]")
        if backwards[n]:
            raise _invalid(f"{index} is out of order. Many sparse ops require sorted indices."
                           "\n    Use `tf.sparse.reorder` to create a correctly ordered copy."
                           "\n\n")
        raise _invalid(f"{index} is repeated")


@register_kernel("AddSparseToTensorsMap", device="CPU")
def _add_sparse_to_tensors_map(ctx, step, indices, values, shape):
    tensors_map = _tensors_map(ctx, adding=True)
    _check_components(indices, values, shape)
    for d in shape:
        if d < 0:
            raise _invalid(f"Dimension {d} must be >= 0")
    if len(indices) != len(values):
        raise _invalid(f"indices and values rows (indexing dimension) must match. "
                       f"(indices = {len(indices)}, values = {len(values)})")
    if indices.shape[1] != len(shape):
        raise _invalid("Order length must be SparseTensor rank.")
    return np.array(tensors_map.add(indices.copy(), values.copy(), shape), np.int64)


@register_kernel("AddManySparseToTensorsMap", device="CPU")
def _add_many_sparse_to_tensors_map(ctx, step, indices, values, shape):
    """Row i of a batch (dimension 0) of SparseTensors goes in as handles[i]: the rows in
    the order of the indices, then the rows with no value."""
    tensors_map = _tensors_map(ctx, adding=True)
    _check_components(indices, values, shape)
    if len(values) != len(indices):
        raise _invalid(f"Number of values must match first dimension of indices. Got "
                       f"{len(values)} values, indices shape: {shape_string(indices.shape)}")
    if len(shape) != indices.shape[1]:
        raise _invalid(f"Number of dimensions must match second dimension of indices. Got "
                       f"{len(shape)} dimensions, indices shape: "
                       f"{shape_string(indices.shape)}")
    if len(shape) <= 1:
        raise _invalid(f"Rank of input SparseTensor should be > 1, but saw rank: {len(shape)}")
    for d in shape:
        if d < 0:
            raise _invalid(f"Expected shape dimensions to be non-negative, got {d}")
    check_indices(indices, shape)
    handles = np.empty(shape[0], np.int64)
    rows, starts = np.unique(indices[:, 0], return_index=True)
    for row, start, end in zip(rows, starts, [*starts[1:], len(indices)]):
        handles[row] = tensors_map.add(indices[start:end, 1:].copy(), values[start:end].copy(),
                                       shape[1:])
    for row in np.setdiff1d(np.arange(shape[0]), rows):
        handles[row] = tensors_map.add(indices[:0, 1:], values[:0], shape[1:])
    return handles


@register_kernel("TakeManySparseFromTensorsMap", device="CPU")
def _take_many_sparse_from_tensors_map(ctx, step, handles):
    tensors_map = _tensors_map(ctx, adding=False)
    if handles.ndim != 1:
        raise _invalid(f"sparse_handles should be a vector but received shape "
                       f"{shape_string(handles.shape)}")
    return tensors_map.take_many(handles, ctx.attrs["dtype"])


@register_kernel("SparseToDense")
def _sparse_to_dense(ctx, step, indices, shape, values, default_value):
    indices = np.asarray(indices)
    if indices.ndim < 2:   # the indices of a vector
        indices = indices.reshape(-1, 1)
    shape = np.asarray(shape).reshape(-1)
    if ctx.attrs.get("validate_indices", True):
        check_indices(indices, shape)
    values = np.asarray(values)
    out = np.full([int(d) for d in shape], default_value, dtype=values.dtype)
    out[tuple(indices.T)] = values
    return out if out.dtype == object else ctx.xp.asarray(out)


# -- a SparseTensor as one dataset component (a variant) ---------------------------------

class SparseValue:
    """A SparseTensor's arrays, held whole in one element of an object array (a variant),
    as a dataset carries a sparse component; not a sequence, so that numpy keeps it
    whole."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape


@register_kernel("SerializeSparse", device="CPU")
def _serialize_sparse(ctx, step, indices, values, shape):
    return object_scalar(SparseValue(np.asarray(indices), np.asarray(values),
                                     np.asarray(shape)))


@register_kernel("SerializeManySparse", device="CPU")
def _serialize_many_sparse(ctx, step, indices, values, shape):
    indices, values, shape = np.asarray(indices), np.asarray(values), np.asarray(shape)
    rows = indices[:, 0] if len(indices) else np.zeros(0, np.int64)
    return object_vector([SparseValue(indices[rows == r, 1:], values[rows == r], shape[1:])
                          for r in range(int(shape[0]))])


@register_kernel("DeserializeSparse", device="CPU")
def _deserialize_sparse(ctx, step, serialized):
    """One SparseTensor, or a batch of them as one with the batch's leading dimensions
    and, after them, each dimension's largest size."""
    serialized = np.asarray(serialized, dtype=object)
    if serialized.ndim == 0:
        sparse = serialized[()]
        return sparse.indices, sparse.values, sparse.dense_shape
    parts = list(serialized.reshape(-1))
    ranks = [len(p.dense_shape) for p in parts]
    for i, rank in enumerate(ranks[1:], 1):
        if rank != ranks[0]:
            raise _invalid(f"Inconsistent shape across SparseTensors: rank prior to "
                           f"SparseTensor[{i}] was: {ranks[0]} but rank of SparseTensor[{i}] "
                           f"is: {rank}")
    rank = ranks[0] if parts else 0
    lead = np.array(serialized.shape, dtype=np.int64)
    dims = (np.max([p.dense_shape for p in parts], axis=0) if parts
            else np.zeros(rank, np.int64))
    indices = [np.hstack([np.tile(np.unravel_index(i, serialized.shape), (len(p.indices), 1)),
                          p.indices]) for i, p in enumerate(parts)]
    width = serialized.ndim + rank
    values = [p.values for p in parts]
    return (np.concatenate(indices).astype(np.int64) if indices else
            np.zeros((0, width), np.int64),
            np.concatenate(values) if values else
            np.zeros(0, dtype=ctx.output_types[1].as_numpy_dtype),
            np.concatenate([lead, dims]).astype(np.int64))
