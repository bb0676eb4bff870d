"""Reductions TensorFlow builds from other ops in Python: reduce_logsumexp,
count_nonzero and norm, each op for op as TensorFlow 2.21's compat.v1 builds it."""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import UnimplementedError
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.ops import array_ops, math_ops, unary_ops
from dtfnb.ops.building import graph_of, renamed_argument


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None,
                     reduction_indices=None, keep_dims=None):
    """log(sum(exp(input_tensor), axis)), computed without overflow: the maximum (where it
    is finite) taken out of the exponentials and added back."""
    axis = renamed_argument("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(renamed_argument("keepdims", keepdims, "keep_dims", keep_dims))
    with graph_of(input_tensor).name_scope(name or "ReduceLogSumExp") as scope:
        raw_max = math_ops.reduce_max(input_tensor, axis=axis, keepdims=True)
        top = array_ops.stop_gradient(
            array_ops.where_v2(unary_ops.is_finite(raw_max), raw_max, 0))
        result = unary_ops.log(math_ops.reduce_sum(
            unary_ops.exp(math_ops.subtract(input_tensor, top)), axis=axis,
            keepdims=keepdims))
        if not keepdims:
            top = array_ops.reshape(top, array_ops.shape(result, optimize=False))
        result = math_ops.add(result, top, name=scope)
        if not (keepdims or axis is not None or result.shape.is_fully_defined()):
            result.set_shape(())
        return result


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64,
                  name=None, reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """The number of elements of `input_tensor` that are not zero (true), over `axis`."""
    keepdims = bool(renamed_argument("keepdims", keepdims, "keep_dims", keep_dims))
    input_tensor = renamed_argument("input", input, "input_tensor", input_tensor)
    axis = renamed_argument("axis", axis, "reduction_indices", reduction_indices)
    with graph_of(input_tensor).name_scope(name or "count_nonzero"):
        input_tensor = convert_to_tensor(input_tensor, name="input")
        predicate = input_tensor
        if input_tensor.dtype.base_dtype != dtypes.bool_:
            zero = array_ops.zeros([], dtype=input_tensor.dtype.base_dtype)
            predicate = math_ops.not_equal(input_tensor, zero)
        counts = math_ops.reduce_sum(math_ops.cast(predicate, dtypes.int64), axis=axis,
                                     keepdims=keepdims)
        return math_ops.cast(counts, dtype=dtype)


_VECTOR_NORMS = ["euclidean", 1, 2, np.inf]
_MATRIX_NORMS = ["euclidean", "fro", 1, 2, np.inf]


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """The vector norm of `tensor` (over all of it, or along the int `axis`), or the
    matrix norm over the two axes of a pair: euclidean (Frobenius), 1, inf, or for
    vectors any p > 0. (dtfnb has no SVD: the matrix 2-norm raises UnimplementedError.)"""
    keepdims = bool(renamed_argument("keepdims", keepdims, "keep_dims", keep_dims))
    matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if matrix:
        axis = tuple(axis)
        if not all(isinstance(a, int) for a in axis) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in {_MATRIX_NORMS}, "
                             f"got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if (not np.isreal(ord) or ord <= 0) and ord not in _VECTOR_NORMS:
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (axis,)
    with graph_of(tensor).name_scope(name or "norm"):
        tensor = convert_to_tensor(tensor)
        if tensor.dtype.is_complex:
            raise TypeError(f"dtfnb's norm takes real tensors, not {tensor.dtype.base_dtype.name}")
        if ord in ("fro", "euclidean", 2, 2.0):
            if matrix and ord in (2, 2.0):
                raise UnimplementedError(None, None, "dtfnb has no SVD for the matrix 2-norm")
            result = unary_ops.sqrt(math_ops.reduce_sum(tensor * tensor, axis, keepdims=True))
        else:
            result = unary_ops.abs(tensor)
            if ord == 1:
                result = math_ops.reduce_sum(result, None if axis is None else axis[0],
                                             keepdims=True)
                if matrix:
                    result = math_ops.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if matrix:
                    result = math_ops.reduce_sum(result, axis[1], keepdims=True)
                result = math_ops.reduce_max(result, None if axis is None else axis[0],
                                             keepdims=True)
            else:
                result = math_ops.pow(math_ops.reduce_sum(math_ops.pow(result, ord), axis,
                                                          keepdims=True), 1.0 / ord)
        if not keepdims:
            result = array_ops.squeeze(result, axis)
        return result
