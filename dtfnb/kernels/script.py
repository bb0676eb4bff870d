"""PyFunc and PyFuncStateless: the Python function registered in this process under the
op's token, called on numpy arrays; its results checked against the op's output types,
its exceptions turned into the errors TensorFlow's kernel makes of them."""

import traceback

import numpy as np

from dtfnb.base import dtypes, py_funcs
from dtfnb.base.errors import (
    InvalidArgumentError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnimplementedError,
    UnknownError,
)
from dtfnb.kernels.math import host
from dtfnb.kernels.registry import register_kernel

# What TensorFlow's kernel makes of an exception the function raised (others: Unknown).
_ERRORS = ((ValueError, InvalidArgumentError), (TypeError, InvalidArgumentError),
           (StopIteration, OutOfRangeError), (MemoryError, ResourceExhaustedError),
           (NotImplementedError, UnimplementedError))


def _error(err):
    """The step's error for the function's exception, its traceback (from the function
    on) as the message."""
    frames = err.__traceback__.tb_next   # past this kernel's own frame
    message = "".join(traceback.format_exception(type(err), err, frames))
    for exception, error in _ERRORS:
        if isinstance(err, exception):
            return error(None, None, message)
    return UnknownError(None, None, message)


def _as_array(value):
    """A returned value as TensorFlow's registry converts it: text becomes bytes, which
    become an object array."""
    array = np.asarray(value, order="C")
    if array.dtype.kind == "U":
        array = np.vectorize(lambda s: s.encode("utf8"), otypes=[object])(array)
    elif array.dtype.kind == "S":
        array = array.astype(object)
    return array


def _returned(result):
    """The function's result as the list of its values: a list or tuple is one value a
    piece, None none, anything else (bytes too) one."""
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return [_as_array(v) for v in result]
    return [_as_array(result)]


def _dtype_of(array):
    if array.dtype == object:
        return dtypes.string if all(isinstance(v, bytes) for v in array.flat) else None
    return dtypes.as_dtype(array.dtype)


@register_kernel("PyFunc", device="CPU", blocking=True)
@register_kernel("PyFuncStateless", device="CPU", blocking=True)
def _py_func(ctx, step, *inputs):
    token = ctx.attrs["token"]
    token = token.decode() if isinstance(token, bytes) else token
    func = py_funcs.get(token)
    try:
        if func is None:   # a graph built by another process (or a function gone)
            raise ValueError(f"Could not find callback with key={token} in the registry.")
        values = _returned(func(*[host(x) for x in inputs]))
    except Exception as err:
        raise _error(err) from None
    expected = ctx.output_types
    if len(values) != len(expected):
        raise InvalidArgumentError(None, None, f"{token} returns {len(values)} values, but "
                                               f"expects to see {len(expected)} values.")
    for i, (value, dtype) in enumerate(zip(values, expected)):
        actual = _dtype_of(value)
        if actual != dtype.base_dtype:
            shown = "an object" if actual is None else dtypes.c_type_name(actual)
            raise InvalidArgumentError(None, None, f"{i}-th value returned by {token} is "
                                                   f"{shown}, but expects "
                                                   f"{dtypes.c_type_name(dtype)}")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)
