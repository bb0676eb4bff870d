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


def _pack_nested(value, dtype, name, graph):
    """TensorFlow's autopacking: a Pack named `name` of the list's tensors, its lists
    packed in turn (under their index) and its other items constants named by their
    index; a list that holds no tensor comes back as it is (its name scope used, as in
    TensorFlow, so a constant in its place is named `<index>_1`)."""
    items, must_pack = [], False
    with graph.name_scope(name) as scope:
        for i, item in enumerate(value):
            if isinstance(item, (list, tuple)):
                item = _pack_nested(item, dtype, str(i), graph)
            must_pack = must_pack or is_tensor(item)
            items.append(item)
        if not must_pack:
            return items
        items = [convert_to_tensor(item) if is_tensor(item)  # a Variable reads its value
                 else constant_op.constant(item, dtype, name=str(i))
                 for i, item in enumerate(items)]
        return make_tensor("Pack", items, dtype, name=scope, graph=graph,
                           attrs={"T": dtype, "N": len(items), "axis": 0})


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Lists that hold Tensors become Pack ops; other lists become constants."""
    if not contains_tensor(value):
        return constant_op.constant(value, dtype=dtype, name=name or "Const")
    inner = _first_dtype(value)
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != inner:
        raise TypeError(f"Cannot convert a list containing a tensor of dtype {inner.name} to "
                        f"{dtypes.as_dtype(dtype).name} (Tensor is: {value!r})")
    return _pack_nested(value, inner, name or "packed", _graph_of_nested(value))


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)
