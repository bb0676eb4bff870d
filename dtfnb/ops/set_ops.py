"""Sets: setdiff1d of a vector's values (TensorFlow's ListDiff op), and tf.sets: the size,
intersection, difference and union of the sets along the last dimension of dense tensors
and SparseTensors (ops SetSize, DenseToDenseSetOperation, DenseToSparseSetOperation and
SparseToSparseSetOperation; their kernels are in kernels/sets.py)."""

import collections

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.framework.sparse_tensor import (
    SparseTensor,
    convert_to_tensor_or_sparse_tensor,
)
from dtfnb.ops.building import make_op, op_scope
from dtfnb.ops.shape_util import merge_shapes, shape_error


def _list_diff_shape(op):
    for t in op.inputs:
        if t.shape.ndims not in (None, 1):
            raise shape_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")
    return [TensorShape([None]), TensorShape([None])]


define_op("ListDiff", _list_diff_shape)
ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])   # as TensorFlow names it
NotDifferentiable("ListDiff")


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The values of the vector `x` that are not in `y`, in their order in `x`, and their
    indices in `x`: (out, idx)."""
    with op_scope("ListDiff", name, x, y) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        index_dtype = dtypes.as_dtype(index_dtype)
        op = make_op("ListDiff", [x, y], [x.dtype.base_dtype, index_dtype], name=scope,
                     attrs={"T": x.dtype.base_dtype, "out_idx": index_dtype})
        return ListDiffOutput(*op.outputs)


# -- tf.sets ----------------------------------------------------------------------------

# Built in TensorFlow's order, so that the set prints as TensorFlow's does in errors.
_VALID_DTYPES = frozenset([dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                           dtypes.uint8, dtypes.uint16, dtypes.string])


def _at_least_rank_2(op, shape):
    if shape.ndims is not None and shape.ndims < 2:
        raise shape_error(op, f"Shape must be at least rank 2 but is rank {shape.ndims}")


def _sparse_rank(dense_shape):
    """The rank of the SparseTensor whose dense_shape is `dense_shape` (None: unknown)."""
    return dense_shape.shape[0].value if dense_shape.shape.ndims else None


def _with_rank_value(op, rank, expected):
    if rank not in (None, expected):
        raise shape_error(op, f"Dimension must be {expected} but is {rank}")


def _set_result_shapes(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _dense_to_dense_shape(op):
    """Ranks of at least 2, equal, and all but the last dimension compatible."""
    a, b = (t.shape for t in op.inputs)
    _at_least_rank_2(op, a)
    if a.ndims is None:
        _at_least_rank_2(op, b)
        return _set_result_shapes(b.ndims)
    if b.ndims not in (None, a.ndims):
        raise shape_error(op, f"Shape must be rank {a.ndims} but is rank {b.ndims}")
    if b.ndims is not None:
        merge_shapes(op, a[:-1], b[:-1])
    return _set_result_shapes(a.ndims)


def _dense_to_sparse_shape(op):
    dense, sparse_rank = op.inputs[0].shape, _sparse_rank(op.inputs[3])
    _at_least_rank_2(op, dense)
    if dense.ndims is None:
        return _set_result_shapes(sparse_rank)
    _with_rank_value(op, sparse_rank, dense.ndims)
    return _set_result_shapes(dense.ndims)


def _sparse_to_sparse_shape(op):
    ranks = _sparse_rank(op.inputs[2]), _sparse_rank(op.inputs[5])
    known = next((i for i, rank in enumerate(ranks) if rank is not None), None)
    if known is None:
        return _set_result_shapes(None)
    if ranks[known] < 2:
        raise shape_error(op, f"Input {known}, expected rank >= 2, got {ranks[known]}.")
    _with_rank_value(op, ranks[1], ranks[known])
    return _set_result_shapes(ranks[known])


define_op("SetSize")   # TensorFlow knows no shape of its result either
define_op("DenseToDenseSetOperation", _dense_to_dense_shape)
define_op("DenseToSparseSetOperation", _dense_to_sparse_shape)
define_op("SparseToSparseSetOperation", _sparse_to_sparse_shape)
for _op in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
            "SparseToSparseSetOperation"):
    NotDifferentiable(_op)


def _sparse_parts(sp):
    return [sp.indices, sp.values, sp.dense_shape]


def _validate_indices_attr(validate_indices):
    """The attr's value as TensorFlow's generated op wrappers take it: a bool, or None for
    its default (true)."""
    if validate_indices is None:
        return True
    if not isinstance(validate_indices, bool):
        raise TypeError(f"Expected bool for argument 'validate_indices' not "
                        f"{validate_indices!r}.")
    return validate_indices


def set_size(a, validate_indices=True):
    """The number of distinct values along the last dimension of the SparseTensor `a`
    (indices in row-major order): an int32 tensor of `a`'s shape without its last
    dimension. `validate_indices=False` skips the check of `a`'s indices' order and range;
    results from unordered indices are then undefined."""
    a = convert_to_tensor_or_sparse_tensor(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"Invalid dtype `{a.values.dtype}` not in supported dtypes: "
                        f"`{_VALID_DTYPES}`.")
    parts = _sparse_parts(a)
    with op_scope("SetSize", None, *parts) as scope:
        return make_op("SetSize", parts, [dtypes.int32], name=scope, attrs={
            "validate_indices": _validate_indices_attr(validate_indices),
            "T": a.dtype.base_dtype}).outputs[0]


def _set_operands(a, b):
    """`a` and `b` as tensors or SparseTensors of one valid dtype, swapped when only `a` is
    sparse (the ops take dense, sparse); whether they were swapped."""
    a = convert_to_tensor_or_sparse_tensor(a, "a")
    if a.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"'a' has invalid dtype `{a.dtype}` not in supported dtypes: "
                        f"`{_VALID_DTYPES}`.")
    b = convert_to_tensor_or_sparse_tensor(b, "b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a, b, set_operation, validate_indices):
    """The SparseTensor of `set_operation` ("a-b", "b-a", "intersection" or "union") of the
    sets of `a` and `b`, by the op for their kinds (dense, dense; dense, sparse; or sparse,
    sparse: `_set_operands` swaps a sparse, dense pair)."""
    if isinstance(a, SparseTensor):
        op_type, inputs = "SparseToSparseSetOperation", _sparse_parts(a) + _sparse_parts(b)
    elif isinstance(b, SparseTensor):
        op_type, inputs = "DenseToSparseSetOperation", [a] + _sparse_parts(b)
    else:
        op_type, inputs = "DenseToDenseSetOperation", [a, b]
    dtype = a.dtype.base_dtype
    with op_scope(op_type, None, *inputs) as scope:
        op = make_op(op_type, inputs, [dtypes.int64, dtype, dtypes.int64], name=scope, attrs={
            "set_operation": set_operation,
            "validate_indices": _validate_indices_attr(validate_indices), "T": dtype})
    return SparseTensor(*op.outputs)


def set_intersection(a, b, validate_indices=True):
    """The values in both `a` and `b` along their last dimension, all but which must match.

    `a` and `b` are tensors or SparseTensors (indices in row-major order) of one dtype. The
    result is a SparseTensor of their rank: each group of the leading dimensions holds its
    values sorted, and its dense_shape's last dimension is the size of the largest group.
    `validate_indices=False` skips the check of sparse indices' order and range. A sparse
    `a` with a dense `b` is swapped, as the ops take dense, sparse.
    """
    a, b, _ = _set_operands(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """The values of `a` not in `b` (of `b` not in `a` when `aminusb` is false) along their
    last dimension, all but which must match; as `set_intersection` otherwise. A sparse
    `a` with a dense `b` is swapped (and `aminusb` flipped), as the ops take dense, sparse.

    Raises TypeError for mismatched or unsupported dtypes, and InvalidArgumentError at run
    time for mismatched leading dimensions.
    """
    a, b, flipped = _set_operands(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_union(a, b, validate_indices=True):
    """The values in `a` or `b` along their last dimension, all but which must match; as
    `set_intersection` otherwise."""
    a, b, _ = _set_operands(a, b)
    return _set_operation(a, b, "union", validate_indices)
