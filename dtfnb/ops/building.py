"""What every op builder needs: the graph of its inputs, its name scope, its operands
converted, a one-call create. Every op family uses these, so they import none."""

from contextlib import contextmanager

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.func_graph import FuncGraph
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.tensor import Tensor


def is_tensor(value):
    """Whether `value` is a Tensor or a Variable (which converts to its value)."""
    return isinstance(value, Tensor) or hasattr(value, "_variable")


def contains_tensor(value):
    """Whether `value` is, or a list or tuple in it holds, a Tensor or a Variable."""
    if is_tensor(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(v) for v in value)
    return False


def graph_of(*values):
    """The graph of the first Tensor (or Variable) among `values`, else the default graph.

    While a function is traced every op goes to its body, which captures outer tensors.
    """
    default = get_default_graph()
    if isinstance(default, FuncGraph):
        return default
    for value in values:
        if isinstance(value, (list, tuple)):
            for item in value:
                if is_tensor(item):
                    return item.graph
        elif is_tensor(value):
            return value.graph
    return default


@contextmanager
def op_scope(op_type, name, *values):
    """The name scope TensorFlow's generated op wrappers build in, named `name` or the op's
    type: each Python value given for an input is converted in it under the input's name
    (`Sum/reduction_indices`, `Tile/multiples`), and the op takes the scope's name. The
    scope is in the graph of `values`, made the default while it is open, so that those
    conversions land there too."""
    graph = graph_of(*values)
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        yield scope


def convert_operands(x, y, names=("x", "y")):
    """Converts both operands as TensorFlow's operators do: a Python value beside a tensor
    gets the tensor's dtype if it can (the right operand falls back to its own dtype)."""
    if is_tensor(x) or not is_tensor(y):
        x = convert_to_tensor(x, name=names[0])
        y = convert_to_tensor(y, preferred_dtype=x.dtype.base_dtype, name=names[1])
    else:
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name=names[0])
    return x, y


def binary_inputs(x, y, op_type="op", names=("x", "y")):
    """Both operands of an `op_type` op, converted; their types must match."""
    x, y = convert_operands(x, y, names)
    if x.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError(f"Input '{names[1]}' of '{op_type}' Op has type "
                        f"{y.dtype.base_dtype.name} that does not match type "
                        f"{x.dtype.base_dtype.name} of argument '{names[0]}'.")
    return x, y


def renamed_argument(new_name, new_value, old_name, old_value):
    """TensorFlow's lookup of an argument given under its new name or its deprecated one
    (`dim` for `axis`, `keep_dims` for `keepdims`): ValueError if both are."""
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
    return old_value if new_value is None else new_value


def check_type(dtype, allowed, parameter):
    """`dtype`'s base type, if it is one of the types `allowed` for the op's `parameter`:
    else the TypeError TensorFlow's op wrappers raise."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in allowed:
        raise TypeError(f"Value passed to parameter '{parameter}' has DataType {dtype.name} not "
                        f"in list of allowed values: {', '.join(t.name for t in allowed)}")
    return dtype


def int_tensor(value, name=None, dtype=dtypes.int32):
    """An index tensor: int32 unless `value` holds tensors, whose dtype (int64 too) it keeps."""
    if contains_tensor(value):  # a list of them packs, named as the input (TensorFlow's)
        return convert_to_tensor(value, name=name)
    return convert_to_tensor(value, dtype=dtype, name=name)


def attr_typed_index(value, name):
    """An index input whose dtype is an attr defaulting to int32 (Reshape's shape, Tile's
    multiples, Sum's axes), from `value` as TensorFlow's op helper converts it: an empty
    list first becomes a float32 constant, which the op refuses and which stays in the
    graph beside the int32 one that replaces it (`shape`, then `shape_1`)."""
    if isinstance(value, (list, tuple)) and not value:
        convert_to_tensor(value, name=name)
    return int_tensor(value, name=name)


def one_input_op(op_type, value, name, input_name="x", attrs=None):
    """The output of a one-input op whose type is its input's (`T`), built as TensorFlow's
    generated wrappers build it: a Python value converted in the op's scope under the
    input's name ("Exp/x", "Relu/features", "Identity/input")."""
    with op_scope(op_type, name, value) as scope:
        value = convert_to_tensor(value, name=input_name)
        dtype = value.dtype.base_dtype
        return make_tensor(op_type, [value], dtype, name=scope,
                           attrs={"T": dtype, **(attrs or {})})


def make_op(op_type, inputs, dtypes, name=None, attrs=None, graph=None):
    """Creates an op and returns it (the Operation)."""
    graph = graph or graph_of(*inputs)
    return graph.create_op(op_type, inputs, dtypes, name=name, attrs=attrs)


def make_tensor(op_type, inputs, dtype, name=None, attrs=None, graph=None):
    """Creates a single-output op and returns its output Tensor."""
    return make_op(op_type, inputs, [dtype], name, attrs, graph).outputs[0]
