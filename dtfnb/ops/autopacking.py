"""Lists that hold Tensors convert to Pack ops (TensorFlow's autopacking), others to constants.

`tf.constant`-like conversion of `[a, 2.0]` with `a` a Tensor packs the items in one
Pack per level of nesting, in the dtype of the first tensor found.
"""

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtfnb.ops import constant_op
from dtfnb.ops.building import contains_tensor, is_tensor, make_tensor


def _graph_of_nested(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            if contains_tensor(item):
                return _graph_of_nested(item)
    return value.graph


def _first_dtype(value):
    if is_tensor(value):
        return value.dtype.base_dtype
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _first_dtype(item)
            if found is not None:
                return found
    return None


def _pack_nested(value, dtype, name):
    if not isinstance(value, (list, tuple)) or not contains_tensor(value):
        return convert_to_tensor(value, dtype=dtype)
    with _graph_of_nested(value).name_scope(name) as scope:
        items = [_pack_nested(v, dtype, "packed") for v in value]
        return make_tensor("Pack", items, dtype, name=scope,
                           attrs={"T": dtype, "N": len(items), "axis": 0})


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Lists that hold Tensors become Pack ops; other lists become constants."""
    if not contains_tensor(value):
        return constant_op.constant(value, dtype=dtype, name=name or "Const")
    inner = _first_dtype(value)
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != inner:
        raise TypeError(f"Cannot convert a list containing a tensor of dtype {inner.name} to "
                        f"{dtypes.as_dtype(dtype).name} (Tensor is: {value!r})")
    return _pack_nested(value, inner, name or "packed")


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)
