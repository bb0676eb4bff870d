"""Joining and splitting: stack and unstack (Pack, Unpack), concat (ConcatV2, with the
ConcatOffset and ShapeN its gradient builds), split (Split, SplitV).

Above array_ops, whose shapes, reshapes and identities these builders and gradients use;
below unary_ops and math_ops (see ops/__init__.py).
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.framework.tensor import Tensor
from dtfnb.ops.array_ops import identity, rank, shape, squeeze
from dtfnb.ops.building import int_tensor, make_op, make_tensor, op_scope
from dtfnb.ops.shape_util import (
    constant_value,
    format_shape,
    merge_shapes,
    normalize_axis,
    shape_error,
)


def _merge_all(op, shapes):
    merged = unknown_shape()
    for i, s in enumerate(shapes):
        try:
            merged = merged.merge_with(s)
        except ValueError:
            if merged.ndims != s.ndims:
                raise shape_error(op, f"Shapes must be equal rank, but are {s.ndims} and "
                                      f"{merged.ndims}\n\tFrom merging shape {i} with other "
                                      "shapes.") from None
            raise shape_error(op, f"Shapes {format_shape(merged)} and {format_shape(s)} are "
                                  "not compatible") from None
    return merged


def _pack_shape(op):
    merged = _merge_all(op, [t.shape for t in op.inputs])
    if merged.ndims is None:
        return [unknown_shape()]
    axis = normalize_axis(op, op.get_attr("axis"), merged.ndims + 1)
    dims = merged.as_list()
    return [TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:])]


define_op("Pack", _pack_shape)


def stack(values, axis=0, name="stack"):
    """Packs tensors of one shape into one tensor of rank + 1, as TensorFlow's stack builds
    it: along axis 0, the list converted as a whole where it converts (a constant, or
    autopacking's Pack); else a Pack of the values, each converted in its scope."""
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass   # values that do not convert as one list (numpy arrays, say)
    values = list(values)
    # TensorFlow converts the first value on its own, for its rank (a value: a Const left
    # unused, which takes the name).
    shape = convert_to_tensor(values[0], name=name).shape
    if shape.ndims is not None and not -shape.ndims - 1 <= axis <= shape.ndims:
        raise ValueError(f"Argument `axis` = {axis} not in range "
                         f"[{-shape.ndims - 1}, {shape.ndims + 1})")
    tensors = [v for v in values if isinstance(v, Tensor) or hasattr(v, "_variable")]
    dtype = convert_to_tensor(tensors[0]).dtype.base_dtype if tensors else None
    with op_scope("Pack", name, values) as scope:
        values = [convert_to_tensor(v, dtype=dtype, name=f"values_{i}")
                  for i, v in enumerate(values)]
        dtype = values[0].dtype.base_dtype
        return make_tensor("Pack", values, dtype, name=scope,
                           attrs={"T": dtype, "N": len(values), "axis": int(axis)})


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def _unpack_shape(op):
    x = op.inputs[0].shape
    num = op.get_attr("num")
    if x.ndims is None:
        return [unknown_shape()] * num
    axis = normalize_axis(op, op.get_attr("axis"), x.ndims)
    dims = x.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise shape_error(op, f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * num


define_op("Unpack", _unpack_shape)


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks a rank-R tensor into `num` rank-(R-1) tensors along `axis`."""
    value = convert_to_tensor(value)
    if num is None:
        s = value.shape
        if s.ndims is None:
            raise ValueError(f"Cannot infer num from shape {s}")
        num = s[axis].value
        if num is None:
            raise ValueError(f"Cannot infer num from shape {s}")
    op = make_op("Unpack", [value], [value.dtype.base_dtype] * num, name=name,
                 attrs={"T": value.dtype.base_dtype, "num": int(num), "axis": int(axis)})
    return op.outputs


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return stack(grads, axis=op.get_attr("axis"))


def _concat_shape(op):
    """As TensorFlow's: every input of the first's rank; the dims before the axis, and
    those after, merged across the inputs; the axis's dims summed."""
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    shapes = [t.shape for t in values]
    known = [s for s in shapes if s.ndims is not None]
    axis = constant_value(axis_t)
    computed = None if axis is None else {len(values): axis}
    if not known:
        return [unknown_shape()]
    ndims = known[0].ndims
    for s in known:
        if s.ndims != ndims:
            raise shape_error(op, f"Shape must be rank {ndims} but is rank {s.ndims}")
    if axis is None:
        return [unknown_shape(ndims)]
    axis = normalize_axis(op, int(axis), ndims)
    before = after = None
    total = 0
    for s in shapes:
        dims = s.as_list() if s.ndims is not None else [None] * ndims
        total = None if total is None or dims[axis] is None else total + dims[axis]
        parts = TensorShape(dims[:axis]), TensorShape(dims[axis + 1:])
        if before is None:
            before, after = parts
            continue
        before, after = (merge_shapes(op, merged, part, computed)
                         for merged, part in ((before, parts[0]), (after, parts[1])))
    return [TensorShape(before.as_list() + [total] + after.as_list())]



define_op("ConcatV2", _concat_shape)


def concat(values, axis, name="concat"):
    """Concatenates `values` along dimension `axis`."""
    values = list(values)
    if len(values) == 1:  # TensorFlow checks the axis and returns an identity of the input
        with op_scope("concat", name, values) as scope:
            int_tensor(axis, name="concat_dim")
            return identity(values[0], name=name)
    first = next((v for v in values if isinstance(v, Tensor) or hasattr(v, "_variable")), None)
    dtype = None if first is None else convert_to_tensor(first).dtype.base_dtype
    with op_scope("ConcatV2", name, values) as scope:
        values = [convert_to_tensor(v, dtype=dtype, name=f"values_{i}")
                  for i, v in enumerate(values)]
        dtype = values[0].dtype.base_dtype
        axis = int_tensor(axis, name="axis")
        return make_tensor("ConcatV2", values + [axis], dtype, name=scope,
                           attrs={"T": dtype, "N": len(values), "Tidx": axis.dtype})


define_op("ConcatOffset", lambda op: [s.shape for s in op.inputs[1:]])
define_op("ShapeN", lambda op: [TensorShape([v.shape.ndims]) for v in op.inputs])
for _op in ("ConcatOffset", "ShapeN"):
    NotDifferentiable(_op)


def concat_offset(axis, shapes, name="ConcatOffset"):
    """Where each of `shapes` begins in their concatenation along `axis` (a vector each)."""
    return make_op("ConcatOffset", [axis, *shapes], [shapes[0].dtype.base_dtype] * len(shapes),
                   name=name, attrs={"N": len(shapes),
                                     "shape_type": shapes[0].dtype.base_dtype}).outputs


def shape_n(input, out_type=dtypes.int32, name="ShapeN"):  # noqa: A002 - TensorFlow's name
    """The shapes of the tensors `input`, one 1-D tensor each, from one op."""
    inputs = [convert_to_tensor(v) for v in input]
    return make_op("ShapeN", inputs, [dtypes.as_dtype(out_type)] * len(inputs), name=name,
                   attrs={"N": len(inputs), "T": inputs[0].dtype.base_dtype,
                          "out_type": dtypes.as_dtype(out_type)}).outputs


def _input_shapes(values):
    """TensorFlow's: a constant Shape per input while they are known, else one ShapeN
    (the Shape made for the first unknown one stays in the graph, as in TensorFlow)."""
    sizes = []
    for value in values:
        value_shape = shape(value)
        if value_shape.op.type != "Const":
            return shape_n(values)
        sizes.append(value_shape)
    return sizes


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    """As TensorFlow's: each input's gradient is its Slice of `grad`, where ConcatOffset
    says it begins (a SplitV over more than 16 inputs; an IndexedSlices `grad` is split
    densely, where TensorFlow keeps it sparse along axis 0)."""
    from dtfnb.ops import math_ops, slicing_ops  # higher families: see ops/__init__.py

    values, axis = op.inputs[:-1], op.inputs[-1]
    if isinstance(grad, Tensor) and len(values) > 1:
        axis = math_ops.floormod(axis, rank(values[0]), name="mod")
        sizes = _input_shapes(values)
        if len(sizes) <= 16:
            return [slicing_ops.slice(grad, begin, size)
                    for begin, size in zip(concat_offset(axis, sizes), sizes)] + [None]
        sizes = squeeze(slicing_ops.slice(stack(sizes, axis=1), [axis, 0], [1, -1]))
        # (TensorFlow infers the count from the sizes' shape; dtfnb's Slice knows less)
        return split(grad, sizes, axis, num=len(values)) + [None]
    static_axis = constant_value(axis)
    ndims = next((v.shape.ndims for v in values if v.shape.ndims is not None), None)
    if static_axis is not None and ndims is not None:
        axis = int(static_axis) % ndims
        sizes = [v.shape[axis].value for v in values]
    else:
        sizes = [None]
    if None in sizes:
        if not isinstance(axis, int):
            axis = math_ops.floormod(axis, rank(values[0]))
        sizes = stack([slicing_ops.gather(shape(v), axis) for v in values])
    return split(grad, sizes, axis=axis) + [None]


def _split_shape(op):
    axis_t, x = op.inputs
    num = op.get_attr("num_split")
    axis = constant_value(axis_t)
    s = x.shape
    if s.ndims is None or axis is None:
        return [unknown_shape(s.ndims)] * num
    axis = normalize_axis(op, int(axis), s.ndims)
    dims = s.as_list()
    if dims[axis] is not None:
        if dims[axis] % num:
            raise shape_error(op, f"Dimension size must be evenly divisible by {num} but is "
                                  f"{dims[axis]}\n\tNumber of ways to split should evenly "
                                  "divide the split dimension",
                              computed={0: constant_value(axis_t)})
        dims[axis] //= num
    return [TensorShape(dims)] * num


def _split_v_shape(op):
    x, sizes_t, axis_t = op.inputs
    num = op.get_attr("num_split")
    s = x.shape
    axis = constant_value(axis_t)
    sizes = constant_value(sizes_t)
    if s.ndims is None or axis is None:
        return [unknown_shape(s.ndims)] * num
    axis = normalize_axis(op, int(axis), s.ndims)
    dims = s.as_list()
    if sizes is None:
        return [TensorShape(dims[:axis] + [None] + dims[axis + 1:])] * num
    sizes = [int(v) for v in sizes]
    if sizes.count(-1) == 1 and dims[axis] is not None:
        sizes[sizes.index(-1)] = dims[axis] - (sum(sizes) + 1)
    if dims[axis] is not None and -1 not in sizes and sum(sizes) != dims[axis]:
        raise shape_error(op, "Determined shape must either match input shape along "
                              f"split_dim exactly if fully specified, or be less than the size "
                              f"of the input along split_dim if not fully specified.  Got: "
                              f"{sum(sizes)}")
    return [TensorShape(dims[:axis] + [None if d == -1 else d] + dims[axis + 1:])
            for d in sizes]


define_op("Split", _split_shape)
define_op("SplitV", _split_v_shape)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits into `num_or_size_splits` equal parts (an int) or parts of the given sizes."""
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
            num_or_size_splits, bool):
        n = int(num_or_size_splits)
        with op_scope("Split", name, value) as scope:
            axis = int_tensor(axis, name="split_dim")
            value = convert_to_tensor(value, name="value")
            dtype = value.dtype.base_dtype
            return make_op("Split", [axis, value], [dtype] * n, name=scope,
                           attrs={"T": dtype, "num_split": n}).outputs
    sizes = int_tensor(num_or_size_splits)
    if num is None:
        n = sizes.shape[0].value if sizes.shape.ndims == 1 else None
        if n is None:
            raise ValueError(f"Cannot infer num from shape {sizes.shape}")
        num = n
    with op_scope("SplitV", name, value) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = value.dtype.base_dtype
        axis = int_tensor(axis, name="split_dim")
        return make_op("SplitV", [value, sizes, axis], [dtype] * int(num), name=scope,
                       attrs={"T": dtype, "num_split": int(num), "Tlen": sizes.dtype}).outputs


@RegisterGradient("Split")
def _split_grad(op, *grads):
    return None, concat(list(grads), op.inputs[0])


@RegisterGradient("SplitV")
def _split_v_grad(op, *grads):
    return concat(list(grads), op.inputs[2]), None, None
