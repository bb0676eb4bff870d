"""convert_to_tensor and the table of conversion functions (constants, variables, …)."""

from dtfnb.base import dtypes as _dtypes
from dtfnb.framework.operation import Operation
from dtfnb.framework.tensor import Tensor

_CONVERSIONS = []  # (priority, base_type, fn), lowest priority first


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """`conversion_func(value, dtype=None, name=None, as_ref=False)` returns a Tensor."""
    _CONVERSIONS.append((priority, base_type, conversion_func))
    _CONVERSIONS.sort(key=lambda row: row[0])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """Converts the given `value` to a `Tensor`: a Tensor is returned as it is (its dtype
    checked), a Python or numpy value becomes a constant, a Variable its value.
    """
    dtype = None if dtype is None else _dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            prefix = f"{name}: " if name else ""  # TensorFlow names the conversion it refused
            raise ValueError(f"{prefix}Tensor conversion requested dtype {dtype.name} for "
                             f"Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    if isinstance(value, Operation):
        raise TypeError(f"can't convert Operation '{value.name}' to Tensor")
    for _, base_type, fn in _CONVERSIONS:
        if isinstance(value, base_type):
            if dtype is None and preferred_dtype is not None:
                try:
                    return fn(value, dtype=_dtypes.as_dtype(preferred_dtype), name=name,
                              as_ref=as_ref)
                except (TypeError, ValueError):
                    pass
            tensor = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if dtype is not None and not dtype.is_compatible_with(tensor.dtype):
                raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                                 f"with dtype {tensor.dtype.name}: {tensor!r}")
            return tensor
    raise TypeError(f"Failed to convert object of type {type(value)} to Tensor. "
                    f"Contents: {value!r}. Consider casting elements to a supported type.")


def convert_n_to_tensor(values, dtype=None, name=None):
    """Converts `values` to a list of Tensors (each as `convert_to_tensor`)."""
    return [convert_to_tensor(v, dtype=dtype) for v in values]
