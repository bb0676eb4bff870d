"""Const: tf.constant, and conversion of Python and numpy values to tensors."""

import numbers

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.convert import register_tensor_conversion_function
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_tensor

define_op("Const", lambda op: [TensorShape(op._raw_attr("value").shape)])
NotDifferentiable("Const")


def _infer_dtype(value):
    """TensorFlow's inference: Python floats are float32, ints int32 (int64 if too big);
    numpy arrays and scalars keep their dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return dtypes.as_dtype(value.dtype)
    array = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if array is None or array.dtype.kind in "SUO":
        return dtypes.string
    if array.dtype.kind == "f":
        return dtypes.float32
    if array.dtype.kind in "iu":
        if array.size and (array.max() > np.iinfo(np.int32).max
                           or array.min() < np.iinfo(np.int32).min):
            return dtypes.int64
        return dtypes.int32
    if array.dtype.kind == "c":
        return dtypes.complex128
    return dtypes.as_dtype(array.dtype)


def to_array(value, dtype=None):
    """A numpy array of `value` with TensorFlow's dtype rules (strings become bytes objects)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else _infer_dtype(value)
    if dtype.base_dtype is dtypes.string:
        array = np.asarray(value, dtype=object)
        flat = [v.encode() if isinstance(v, str) else v for v in array.reshape(-1)]
        result = np.empty(len(flat), dtype=object)
        result[:] = flat
        return result.reshape(array.shape)
    array = np.asarray(value)
    if array.dtype.kind in "SUO" and array.size:
        raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.")
    target = dtype.as_numpy_dtype
    converted = array.astype(target)
    if dtype.is_integer and array.dtype.kind == "f" and np.any(converted != array):
        raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.")
    if dtype.is_integer and array.dtype.kind in "iu" and np.any(converted != array):
        raise ValueError(f"Value {value!r} does not fit in {dtype.name}")
    return converted


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A tensor holding `value`; a scalar is broadcast to `shape` if one is given."""
    array = to_array(value, dtype)
    if shape is not None:
        shape = tuple(TensorShape(shape).as_list())
        if verify_shape and array.shape != shape:
            raise TypeError(f"Expected Tensor's shape: {shape}, got {array.shape}.")
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(f"Expected Tensor's shape: {shape}, got {array.shape}.")
    return make_tensor("Const", [], dtypes.as_dtype(array.dtype) if array.dtype != object
                       else dtypes.string, name=name,
                       attrs={"value": array, "dtype": _infer_dtype(array)})


def _convert(value, dtype=None, name=None, as_ref=False):
    return constant(value, dtype=dtype, name=name or "Const")


for _type in (numbers.Number, np.ndarray, np.generic, list, tuple, str, bytes, bool):
    register_tensor_conversion_function(_type, _convert, priority=200)
