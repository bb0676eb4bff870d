"""Static shapes for shape functions: what a tensor's value is at graph build, how
TensorFlow prints shapes in its errors, axes, and the broadcast of two shapes.

Every op family reads these, so they sit below all of them and import none.
"""

import numpy as np

from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.node_summary import summarize_node


def constant_value(tensor):
    """`tensor`'s value as a numpy array when it is known at graph build, else None."""
    op = tensor.op
    kind = op.type
    if kind == "Const":
        return op._raw_attr("value")
    if kind in ("Shape", "Size", "Rank"):
        shape = op.inputs[0].shape
        out = op.get_attr("out_type").as_numpy_dtype if kind != "Rank" else np.int32
        if kind == "Rank":
            return None if shape.ndims is None else np.array(shape.ndims, out)
        if not shape.is_fully_defined():
            return None
        value = shape.as_list() if kind == "Shape" else shape.num_elements()
        return np.array(value, out)
    if kind in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if kind in ("Range", "Equal", "NotEqual"):
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        if kind == "Range":
            return np.arange(*values, dtype=op.get_attr("Tidx").as_numpy_dtype)
        return (np.equal if kind == "Equal" else np.not_equal)(*values)
    if kind == "Fill":
        value = constant_value(op.inputs[1])
        if value is None or not tensor.shape.is_fully_defined():
            return None
        return np.full(tensor.shape.as_list(), value, dtype=value.dtype)
    if kind == "Unpack" and op.get_attr("axis") == 0:
        value = constant_value(op.inputs[0])
        return None if value is None else value[tensor.value_index]
    if kind == "Split":
        axis, value = constant_value(op.inputs[0]), constant_value(op.inputs[1])
        if axis is None or value is None:
            return None
        return np.split(value, op.get_attr("num_split"), int(axis))[tensor.value_index]
    if kind == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(op.get_attr("DstT").as_numpy_dtype)
    if kind == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op.get_attr("axis"))
    if kind == "ConcatV2":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.concatenate(values[:-1], axis=int(values[-1]))
    if kind == "StridedSlice" and _is_plain_range(op, shrink=True):
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        vector, (begin,), (end,), (stride,) = values
        if op.get_attr("shrink_axis_mask") & 1:
            return vector[begin] if -len(vector) <= begin < len(vector) else None
        return vector[slice(None if op.get_attr("begin_mask") & 1 else begin,
                            None if op.get_attr("end_mask") & 1 else end, stride)]
    return None


def shape_value(tensor):
    """A 1-D shape tensor as a list of ints (-1 kept) and None for unknown entries.

    None when even its length is unknown; this is what Reshape, Fill and friends
    use to type their outputs.
    """
    value = constant_value(tensor)
    if value is not None:
        return [int(v) for v in np.reshape(value, -1)]
    op = tensor.op
    if op.type == "Shape":
        shape = op.inputs[0].shape
        return None if shape.ndims is None else shape.as_list()
    if op.type == "Pack" and op.get_attr("axis") == 0:
        out = []
        for item in op.inputs:
            v = constant_value(item)
            out.append(None if v is None else int(v))
        return out
    if op.type == "ConcatV2":
        parts = [shape_value(t) for t in op.inputs[:-1]]
        if any(p is None for p in parts):
            return None
        return [d for p in parts for d in p]
    if op.type == "ExpandDims" and op.inputs[0].shape.ndims == 0:
        v = constant_value(op.inputs[0])
        return [None if v is None else int(v)]
    if op.type == "StridedSlice" and _is_plain_range(op):
        dims = shape_value(op.inputs[0])
        bounds = [constant_value(t) for t in op.inputs[1:]]
        if dims is not None and all(b is not None for b in bounds):
            begin, end, stride = (int(np.reshape(b, -1)[0]) for b in bounds)
            return dims[slice(None if op.get_attr("begin_mask") & 1 else begin,
                              None if op.get_attr("end_mask") & 1 else end, stride)]
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return None if n is None else [None] * n


def _is_plain_range(op, shrink=False):
    """Whether a StridedSlice is `x[begin:end:stride]` of a vector (as `shape[1:]`), or
    with `shrink`, also `x[i]`."""
    masks = ("ellipsis_mask", "new_axis_mask") + (() if shrink else ("shrink_axis_mask",))
    return (op.inputs[0].shape.ndims == 1 and op.inputs[1].shape.as_list() == [1]
            and not any(op.get_attr(mask) for mask in masks))


def format_shape(shape):
    """A shape as TensorFlow's shape errors print it: [2,3], [?,3] or ?."""
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def shape_error(op, message, partial_shapes=None, computed=None):
    """The ValueError TensorFlow raises for a shape function's `message` about `op`;
    `partial_shapes` maps an input's index to the shape the function read from its value
    (as Reshape reads its target), `computed` to the value itself (as a reduction reads
    its axes), which TensorFlow lists too."""
    shapes = ", ".join(format_shape(t.shape) for t in op.inputs)
    read = ""
    if computed:
        read = " and with computed input tensors: " + ", ".join(
            f"input[{i}] = <{_summary(value)}>" for i, value in sorted(computed.items()))
    if partial_shapes:
        read += " and with input tensors computed as partial shapes: " + ", ".join(
            f"input[{i}] = {format_shape(shape)}" for i, shape in sorted(partial_shapes.items()))
    return ValueError(f"{message} for '{summarize_node(op)}' with input shapes: {shapes}{read}.")


def _summary(value):
    """A value as TensorFlow's SummarizeValue writes it: its first 10 elements, spaced."""
    flat = np.reshape(value, -1).tolist()
    return " ".join(str(v) for v in flat[:10]) + ("..." if len(flat) > 10 else "")


def merge_shapes(op, a, b, computed=None):
    """TensorShapes `a` and `b` merged, or the error TensorFlow's shape functions raise
    where they differ (`computed`: as for shape_error)."""
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise shape_error(op, f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}",
                              computed=computed)
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise shape_error(op, f"Dimension {i} in both shapes must be equal, but are "
                                      f"{x} and {y}. Shapes are {format_shape(a)} and "
                                      f"{format_shape(b)}.", computed=computed)
    return a.merge_with(b)


def normalize_axis(op, axis, rank):
    """`axis` counted from 0, after checking it is in range for `rank` (None: unknown)."""
    if rank is not None and not -rank <= axis < max(rank, 1):
        raise shape_error(op, f"Expected axis in range [{-rank}, {rank}), but got {axis}")
    return axis + rank if axis < 0 and rank is not None else axis


def broadcast_shape(a, b):
    """The static broadcast of two TensorShapes; raises ValueError when incompatible."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    rank = max(a.ndims, b.ndims)
    # leading 1s align the shapes; the first mismatch from the left is the one reported
    x = [1] * (rank - a.ndims) + a.as_list()
    y = [1] * (rank - b.ndims) + b.as_list()
    out = []
    for dx, dy in zip(x, y):
        if dx == 1:
            out.append(dy)
        elif dy == 1:
            out.append(dx)
        elif dx is None or dy is None:
            out.append(dx if dy is None else dy)
        elif dx == dy:
            out.append(dx)
        else:
            raise ValueError(f"Dimensions must be equal, but are {dx} and {dy}")
    return TensorShape(out)
