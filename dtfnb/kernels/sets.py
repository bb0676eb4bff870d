"""Set kernels (tf.sets): the size of each set of a SparseTensor, and the intersection,
difference or union of the sets of two inputs, dense or sparse.

A set is a group: the values along the last dimension at one index of the leading ones.
As TensorFlow's kernels read a SparseTensor, its groups are its runs of entries with the
same leading indices, taken in the order they come (sorted, unless validate_indices is
false; then a group may come twice, or be skipped). A result holds each non-empty group's
values sorted, as TensorFlow's ordered sets do, in row-major order; its dense_shape is
the inputs' leading dimensions and the size of the largest group. CPU only, as
TensorFlow's.
"""

import numpy as np

from dtfnb.base.errors import InternalError, InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.kernels.registry import register_kernel
from dtfnb.kernels.sparse import check_indices

_OPERATIONS = {
    "a-b": np.setdiff1d,
    "b-a": lambda set1, set2: np.setdiff1d(set2, set1),
    "intersection": np.intersect1d,
    "union": np.union1d,
}


def _invalid(message):
    return InvalidArgumentError(None, None, message)


def _sparse_input(indices, values, shape, validate_indices):
    """A SparseTensor input's parts, checked in the order TensorFlow's set kernels check
    them; its shape as a tuple of ints."""
    if shape.ndim != 1:
        raise _invalid("Shape must be a 1D tensor.")
    for d in shape:
        if d < 0:
            raise _invalid(f"Expected shape dimensions to be non-negative, got {d}")
    if len(shape) < 2:
        raise _invalid(f"Invalid rank {len(shape)}.")
    if values.ndim != 1:
        raise _invalid(f"vals must be a vec, but got: {dims_string(values.shape)}")
    if len(indices) != len(values):
        raise _invalid(f"indices and values rows (indexing dimension) must match. "
                       f"(indices = {len(indices)}, values = {len(values)})")
    if indices.ndim != 2:
        raise _invalid(f"indices must be a matrix, but got: {dims_string(indices.shape)}")
    if indices.shape[1] != len(shape):
        raise _invalid("Order length must be SparseTensor rank.")
    if validate_indices:
        check_indices(indices, shape)
    return indices, values, tuple(int(d) for d in shape)


def _runs(indices):
    """(leading indices, rows) of each run of entries with the same leading indices."""
    if not len(indices):
        return []
    keys = indices[:, :-1]
    starts = [0, *(np.flatnonzero((keys[1:] != keys[:-1]).any(axis=1)) + 1), len(keys)]
    return [(tuple(keys[start].tolist()), slice(start, end))
            for start, end in zip(starts, starts[1:])]


def _group_values(indices, values, shape, rows):
    """The values of one group, after TensorFlow's sanity check of its indices (which
    only unvalidated indices can fail)."""
    group = indices[rows]
    for j, size in enumerate(shape):
        if size <= 0:
            raise InternalError(None, None, f"Invalid dim_size[{j}] = {size}.")
        outside = np.flatnonzero(group[:, j] >= size)
        if len(outside):
            i = outside[0]
            raise InternalError(None, None,
                                f"indices[{i}, {j}] expected < {size}, got {group[i, j]}.")
    return values[rows]


def _group_shape(shape1, shape2):
    """The leading dimensions both inputs share (TensorFlow's GroupShapeFromInputs)."""
    for shape in (shape1, shape2):
        if len(shape) < 2:
            raise _invalid(f"Shape {dims_string(shape)} has rank {len(shape)} < 2")
    if tuple(shape1[:-1]) != tuple(shape2[:-1]):
        raise _invalid(f"Mismatched shapes {dims_string(shape1[:-1])} vs "
                       f"{dims_string(shape2[:-1])}")
    return tuple(shape1[:-1])


def _sparse_result(ctx, group_shape, sets):
    """The result's indices, values and dense_shape from (group index, set values) pairs."""
    sets = [(group, values) for group, values in sets if len(values)]
    rank = len(group_shape) + 1
    indices = np.zeros((sum(len(values) for _, values in sets), rank), np.int64)
    at = 0
    for group, values in sets:
        indices[at:at + len(values), :-1] = group
        indices[at:at + len(values), -1] = np.arange(len(values))
        at += len(values)
    values = np.concatenate([np.empty(0, ctx.output_types[1].as_numpy_dtype),
                             *(values for _, values in sets)])
    largest = max((len(values) for _, values in sets), default=0)
    return indices, values, np.array([*group_shape, largest], np.int64)


def _validates(ctx):
    """The validate_indices attr; true where a GraphDef leaves out its default."""
    return ctx.attrs.get("validate_indices", True)


def _operation(ctx):
    name = ctx.attrs["set_operation"]
    try:
        return _OPERATIONS[name.lower()]
    except KeyError:
        raise _invalid(f"Invalid set_operation {name.lower()}.") from None


@register_kernel("SetSize", device="CPU")
def _set_size(ctx, step, indices, values, shape):
    indices, values, shape = _sparse_input(indices, values, shape, _validates(ctx))
    sizes = np.zeros(shape[:-1], np.int32)
    for group, rows in _runs(indices):
        sizes[group] = len(np.unique(_group_values(indices, values, shape, rows)))
    return sizes


@register_kernel("DenseToDenseSetOperation", device="CPU")
def _dense_to_dense(ctx, step, set1, set2):
    operation = _operation(ctx)
    group_shape = _group_shape(set1.shape, set2.shape)
    sets = [(group, operation(set1[group], set2[group])) for group in np.ndindex(group_shape)]
    return _sparse_result(ctx, group_shape, sets)


@register_kernel("DenseToSparseSetOperation", device="CPU")
def _dense_to_sparse(ctx, step, set1, indices, values, shape):
    """Each group of the dense `set1`, in row-major order, meets the sparse input's next
    run if that run is the same group (else an empty set)."""
    operation = _operation(ctx)
    indices, values, shape = _sparse_input(indices, values, shape, _validates(ctx))
    group_shape = _group_shape(set1.shape, shape)
    runs, sets = iter(_runs(indices)), []
    run = next(runs, None)
    for group in np.ndindex(group_shape):
        set2 = values[:0]
        if run is not None and run[0] == group:
            set2 = _group_values(indices, values, shape, run[1])
            run = next(runs, None)
        sets.append((group, operation(set1[group], set2)))
    return _sparse_result(ctx, group_shape, sets)


@register_kernel("SparseToSparseSetOperation", device="CPU")
def _sparse_to_sparse(ctx, step, indices1, values1, shape1, indices2, values2, shape2):
    """The two inputs' runs, merged by group in row-major order: a group in only one input
    meets an empty set."""
    operation = _operation(ctx)
    validate = _validates(ctx)
    set1 = _sparse_input(indices1, values1, shape1, validate)
    set2 = _sparse_input(indices2, values2, shape2, validate)
    group_shape = _group_shape(set1[2], set2[2])
    runs1, runs2 = _runs(set1[0]), _runs(set2[0])
    i1 = i2 = 0
    sets = []
    while i1 < len(runs1) or i2 < len(runs2):
        group1 = runs1[i1][0] if i1 < len(runs1) else None
        group2 = runs2[i2][0] if i2 < len(runs2) else None
        from1 = group2 is None or (group1 is not None and group1 <= group2)
        from2 = group1 is None or (group2 is not None and group2 <= group1)
        values_of_1, values_of_2 = set1[1][:0], set2[1][:0]
        if from1:
            values_of_1 = _group_values(*set1, runs1[i1][1])
            i1 += 1
        if from2:
            values_of_2 = _group_values(*set2, runs2[i2][1])
            i2 += 1
        sets.append((group1 if from1 else group2, operation(values_of_1, values_of_2)))
    return _sparse_result(ctx, group_shape, sets)
