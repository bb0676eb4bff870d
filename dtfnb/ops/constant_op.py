"""Const: tf.constant, and conversion of Python and numpy values to tensors."""

import numbers

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.object_arrays import object_vector
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
    if array is None or array.dtype.kind in "SU":
        return dtypes.string
    if array.dtype.kind == "O":
        if all(isinstance(v, (str, bytes)) for v in array.reshape(-1)):
            return dtypes.string
        raise TypeError(f"Failed to convert elements of {value} to Tensor. Consider casting "
                        "elements to a supported type. See "
                        "https://www.tensorflow.org/api_docs/python/tf/dtypes for supported "
                        "TF dtypes.")
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
    """A numpy array of `value` with TensorFlow's dtype rules (strings become bytes objects).

    As TensorFlow, Python values must each be of the dtype's kind (an int for int32, a
    number for float32 ...) and are then cast, integers wrapping around; numpy values are
    cast as they are."""
    if value is None:
        raise ValueError("None values not supported.")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else _infer_dtype(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        _check_kind(value, dtype)
    if dtype.base_dtype is dtypes.string:
        array = np.asarray(value, dtype=object)
        return object_vector([v.encode() if isinstance(v, str) else v
                              for v in array.reshape(-1)]).reshape(array.shape)
    return np.asarray(value).astype(dtype.as_numpy_dtype)


def _kind_check(dtype):
    """Whether a Python scalar may be converted to `dtype`, TensorFlow's rule."""
    if dtype is dtypes.string:
        return lambda v: isinstance(v, (str, bytes))
    if dtype is dtypes.bool_:
        return lambda v: isinstance(v, (bool, np.bool_))
    if dtype.is_integer:
        return lambda v: isinstance(v, (numbers.Integral, np.integer))
    if dtype.is_complex:
        return lambda v: isinstance(v, (numbers.Number, np.number))
    return lambda v: isinstance(v, (numbers.Real, np.integer, np.floating))


def _check_kind(value, dtype):
    fits = _kind_check(dtype.base_dtype)

    def first_misfit(v):
        if isinstance(v, (list, tuple)):
            return next((m for m in map(first_misfit, v) if m is not None), None)
        return None if fits(v) else v

    misfit = first_misfit(value)
    if misfit is not None:
        raise TypeError(f"Expected {dtype.name}, but got {misfit} of type "
                        f"'{type(misfit).__name__}'.")


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A tensor holding `value`; a scalar is broadcast to `shape` if one is given."""
    if shape is not None and not isinstance(value, np.ndarray) \
            and TensorShape(shape).num_elements() == 0:
        # as TensorFlow: a Python value for an empty shape is not read (float32 by default)
        value = np.empty(TensorShape(shape).as_list(),
                         dtypes.as_dtype(dtype or dtypes.float32).as_numpy_dtype)
    array = to_array(value, dtype)
    if shape is not None:
        shape = tuple(TensorShape(shape).as_list())
        if verify_shape and array.shape != shape:
            raise TypeError(f"Expected Tensor's shape: {shape}, but got {array.shape}.")
        size = int(np.prod(shape))
        if array.size > size:
            raise ValueError(f"Too many elements provided. Takes at most {size}, but got "
                             f"{array.size}.")
        # as TensorFlow, too few values are padded with the last one (zeros if none)
        flat = array.reshape(-1)
        fill = flat[-1] if flat.size else b"" if array.dtype == object else 0
        array = np.concatenate([flat, np.full(size - flat.size, fill, array.dtype)])
        array = array.reshape(shape)
    return make_tensor("Const", [], dtypes.as_dtype(array.dtype) if array.dtype != object
                       else dtypes.string, name=name,
                       attrs={"value": array, "dtype": _infer_dtype(array)})


def _convert(value, dtype=None, name=None, as_ref=False):
    return constant(value, dtype=dtype, name=name or "Const")


for _type in (numbers.Number, np.ndarray, np.generic, list, tuple, str, bytes, bool,
              type(None)):
    register_tensor_conversion_function(_type, _convert, priority=200)


def _convert_shape(shape, dtype=None, name=None, as_ref=False):
    """A fully known TensorShape as an int32 vector (int64 for a dimension >= 2**31), as
    TensorFlow converts one (a reshape to a FixedLenFeature's shape)."""
    if not shape.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
    dims = shape.as_list()
    large = any(d >= 2 ** 31 for d in dims)
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"Cannot convert TensorShape {shape} to dtype {dtype}. Allowed "
                            f"dtypes are tf.int32 and tf.int64.")
        if dtype == dtypes.int32 and large:
            raise ValueError(f"Cannot convert TensorShape {shape} to dtype int32; a dimension "
                             f"is too large. Consider using tf.int64.")
    else:
        dtype = dtypes.int64 if large else dtypes.int32
    return constant(dims, dtype=dtype, name=name or "shape_as_tensor")


register_tensor_conversion_function(TensorShape, _convert_shape, priority=200)
