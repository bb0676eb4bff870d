"""Array ops: placeholders, identity, shapes, reshaping, unique, filling, where.

The lowest op family: joining_ops (stack, concat, split) and math_ops build on it. Ops
that need math to be built, or whose gradients are slices (transpose, slice,
strided_slice, `tensor[...]`, gather, boolean_mask, pad, tile), live in
ops/slicing_ops.py; broadcast_to lives with the broadcasting of math_ops. Shape
functions read constant inputs (a Const, the Shape of a static shape, a Pack of those)
through `shape_util.constant_value`, so static shapes flow as far as they do in
TensorFlow."""

import collections
import math

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, as_shape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import constant_op
from dtfnb.ops.building import (
    attr_typed_index,
    binary_inputs,
    check_type,
    contains_tensor,
    graph_of,
    int_tensor,
    make_op,
    make_tensor,
    one_input_op,
    op_scope,
)
from dtfnb.ops.shape_util import (
    broadcast_shape,
    constant_value,
    format_shape,
    normalize_axis,
    shape_error,
    shape_value,
)

newaxis = None


def _same_shape(op):
    return [op.inputs[0].shape]


# -- placeholders and identity --------------------------------------------------------

define_op("Placeholder", lambda op: [op._attrs.get("shape") or unknown_shape()])
define_op("PlaceholderWithDefault", lambda op: [op._raw_attr("shape")])
define_op("Identity", _same_shape)
define_op("StopGradient", _same_shape)
NotDifferentiable("Placeholder")
NotDifferentiable("StopGradient")


def placeholder(dtype, shape=None, name=None):
    """A value that must be fed at run time; a fed value's shape is checked against `shape`."""
    dtype = dtypes.as_dtype(dtype)
    return make_tensor("Placeholder", [], dtype, name=name or "Placeholder",
                       attrs={"dtype": dtype, "shape": as_shape(shape)})


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TensorFlow's name
    """A placeholder op that passes through `input` when its output is not fed."""
    with op_scope("PlaceholderWithDefault", name, input) as scope:
        value = convert_to_tensor(input, name="input")
        return make_tensor("PlaceholderWithDefault", [value], value.dtype, name=scope,
                           attrs={"dtype": value.dtype, "shape": as_shape(shape)})


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor to be fed: placeholders for its values and indices, and for its dense
    shape one with `shape` (-1 or None for an unknown dimension) as its default."""
    scoped = (lambda part: f"{name}/{part}") if name is not None else (lambda part: None)
    if shape is None:
        rank = None
        dense_shape = placeholder(dtypes.int64, [None], name=scoped("shape"))
    else:
        rank = len(shape)
        known = [-1 if d is None else int(d) for d in as_shape(shape).as_list()]
        default = convert_to_tensor(known, dtype=dtypes.int64, name=scoped("shape_default"))
        dense_shape = placeholder_with_default(default, [rank], name=scoped("shape"))
    sparse = SparseTensor(
        values=placeholder(dtype, [None], name=scoped("values")),
        indices=placeholder(dtypes.int64, [None, rank], name=scoped("indices")),
        dense_shape=dense_shape)
    if shape is not None:
        sparse.set_shape(as_shape(shape))
    return sparse


def identity(input, name=None):  # noqa: A002 - TensorFlow's name
    """A tensor with the same shape and contents as `input` (a ref input is read)."""
    return one_input_op("Identity", input, name, "input")


def stop_gradient(input, name=None):  # noqa: A002 - TensorFlow's name
    """The same value, seen by tf.gradients as a constant."""
    return one_input_op("StopGradient", input, name, "input")


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad


# -- shape, size, rank ----------------------------------------------------------------

define_op("Shape", lambda op: [TensorShape([op.inputs[0].shape.ndims])])
define_op("Size", lambda op: [scalar()])
define_op("Rank", lambda op: [scalar()])
for _op in ("Shape", "Size", "Rank"):
    NotDifferentiable(_op)


def _shape_like(op_type, input, name, out_type, optimize):  # noqa: A002
    with op_scope(op_type, name, input) as scope:   # a value converts in it, as "Rank/Const"
        value = convert_to_tensor(input)
        static = value.shape
        if optimize:  # as TensorFlow 1 does: a static answer is a constant
            if op_type == "Shape" and static.is_fully_defined():
                return constant_op.constant(static.as_list(), out_type, name=scope)
            if op_type == "Size" and static.is_fully_defined():
                return constant_op.constant(static.num_elements(), out_type, name=scope)
            if op_type == "Rank" and static.ndims is not None:
                return constant_op.constant(static.ndims, dtypes.int32, name=scope)
        attrs = {"T": value.dtype.base_dtype}
        if op_type != "Rank":
            attrs["out_type"] = dtypes.as_dtype(out_type)
        return make_tensor(op_type, [value], dtypes.as_dtype(out_type), name=scope,
                           attrs=attrs)


def shape(input, name=None, out_type=dtypes.int32, optimize=True):  # noqa: A002
    """The shape of `input` as a 1-D tensor of `out_type` (a constant when it is known and
    `optimize`)."""
    if isinstance(input, SparseTensor):  # its dense_shape, as `out_type`
        with graph_of(input.dense_shape).name_scope(name or "Shape"):
            dense_shape = input.dense_shape
            return make_tensor("Cast", [dense_shape], dtypes.as_dtype(out_type), name="Cast",
                               attrs={"SrcT": dense_shape.dtype.base_dtype,
                                      "DstT": dtypes.as_dtype(out_type), "Truncate": False})
    return _shape_like("Shape", input, name, out_type, optimize)


def size(input, name=None, out_type=dtypes.int32, optimize=True):  # noqa: A002
    """The number of elements of `input`, as a scalar of `out_type`."""
    return _shape_like("Size", input, name, out_type, optimize)


def rank(input, name=None, optimize=True):  # noqa: A002
    """The number of dimensions of `input`, as a scalar int32."""
    return _shape_like("Rank", input, name, dtypes.int32, optimize)


# -- reshape, expand_dims, squeeze ----------------------------------------------------

def _known_product(dims):
    """(the product of the known dims, the index of the one unknown, or -1; None where
    more than one is unknown). As TensorFlow's shape inference counts elements, a known
    0 among the dims makes the count 0 and known whatever else is unknown."""
    if 0 in dims:
        return 0, -1
    unknown = [i for i, d in enumerate(dims) if d is None]
    if len(unknown) > 1:
        return None
    return math.prod(d for d in dims if d is not None), (unknown[0] if unknown else -1)


def _divided(op, dividend, divisor, target):
    if dividend % divisor:
        raise _reshape_error(op, f"Dimension size must be evenly divisible by {divisor} "
                                 f"but is {dividend}", target)
    return dividend // divisor


def _reshape_error(op, message, target):
    return shape_error(op, message, partial_shapes={1: TensorShape(target)})


def _reshape_shape(op):
    """TensorFlow's: -1 is an unknown dim, worked out where the input's count of elements
    is known (or both sides lack the same one dim); element counts that cannot match
    are refused, everything else is left unknown to run time."""
    x = op.inputs[0].shape
    target = shape_value(op.inputs[1])
    if target is None:
        return [unknown_shape()]
    target = [None if d == -1 else d for d in target]
    if x.ndims is None:
        return [TensorShape(target)]
    dims = x.as_list()
    out, into = _known_product(target), _known_product(dims)
    if out is None or into is None:
        return [TensorShape(target)]
    (out_elements, out_unknown), (in_elements, in_unknown) = out, into
    if in_unknown < 0 and out_unknown < 0:
        if in_elements != out_elements:
            raise _reshape_error(op, f"Cannot reshape a tensor with {in_elements} elements "
                                     f"to shape {format_shape(TensorShape(target))} "
                                     f"({out_elements} elements)", target)
    elif in_unknown < 0 and out_elements > 0:
        target[out_unknown] = _divided(op, in_elements, out_elements, target)
    elif out_unknown < 0 and in_elements != 0:
        _divided(op, out_elements, in_elements, target)   # the input's unknown dim must fit
    return [TensorShape(target)]


define_op("Reshape", _reshape_shape)


def reshape(tensor, shape, name=None):
    """Reshapes `tensor` to `shape`; one dimension of `shape` may be -1, to be inferred."""
    with op_scope("Reshape", name, tensor, shape) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        shape = attr_typed_index(shape, name="shape")
        return make_tensor("Reshape", [tensor, shape], tensor.dtype.base_dtype, name=scope,
                           attrs={"T": tensor.dtype.base_dtype, "Tshape": shape.dtype})


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    """TensorFlow's: where the input's static shape lacks one dim (and has no 0), that
    shape as a list with -1 for it, which ties in no Shape op; else the input's Shape."""
    dims = op.inputs[0].shape
    if dims.ndims is not None and not dims.is_fully_defined():
        dims = dims.as_list()
        if dims.count(None) == 1 and 0 not in dims:
            return reshape(grad, [-1 if d is None else d for d in dims]), None
    return reshape(grad, _shape_of(op.inputs[0])), None


def _shape_of(tensor):
    """The shape of `tensor` as a tensor, constant when static (for gradients)."""
    return shape(tensor)


def _expand_dims_shape(op):
    x = op.inputs[0].shape
    dim = constant_value(op.inputs[1])
    if x.ndims is None or dim is None:
        return [unknown_shape()]
    axis = int(np.reshape(dim, -1)[0])
    if not -x.ndims - 1 <= axis <= x.ndims:
        raise shape_error(op, f"Expected dim in range [{-x.ndims - 1}, {x.ndims}], "
                              f"but got {axis}")
    axis = axis + x.ndims + 1 if axis < 0 else axis
    dims = x.as_list()
    return [TensorShape(dims[:axis] + [1] + dims[axis:])]


define_op("ExpandDims", _expand_dims_shape)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 - TensorFlow's name
    """Inserts a dimension of size 1 at index `axis` (`dim` is its older spelling)."""
    if axis is None:
        axis = dim
    with op_scope("ExpandDims", name, input, axis) as scope:
        value = convert_to_tensor(input, name="input")
        axis = int_tensor(axis, name="dim")
        return make_tensor("ExpandDims", [value, axis], value.dtype.base_dtype, name=scope,
                           attrs={"T": value.dtype.base_dtype, "Tdim": axis.dtype})


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return reshape(grad, _shape_of(op.inputs[0])), None


def _squeeze_shape(op):
    x = op.inputs[0].shape
    axes = op.get_attr("squeeze_dims")
    if x.ndims is None:
        return [unknown_shape()]
    axes = [normalize_axis(op, a, x.ndims) for a in axes]
    dims = x.as_list()
    out = []
    for i, d in enumerate(dims):
        if axes and i in axes:
            if d is not None and d != 1:
                raise shape_error(op, f"Can not squeeze dim[{i}], expected a dimension of "
                                      f"1, got {d}")
            continue
        if not axes and d == 1:
            continue
        if not axes and d is None:
            return [unknown_shape()]
        out.append(d)
    return [TensorShape(out)]


define_op("Squeeze", _squeeze_shape)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """Removes dimensions of size 1: those in `axis`, else all (`squeeze_dims` is its older
    spelling)."""
    if axis is None:
        axis = squeeze_dims
    if isinstance(axis, int):
        axis = [axis]
    return one_input_op("Squeeze", input, name, "input",
                        {"squeeze_dims": [int(a) for a in axis or []]})


@RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return reshape(grad, _shape_of(op.inputs[0]))


# -- unique ---------------------------------------------------------------------------

def _unique_shape(op):
    x = op.inputs[0].shape
    if x.ndims not in (None, 1):
        raise shape_error(op, f"Shape must be rank 1 but is rank {x.ndims}")
    return [TensorShape([None]), TensorShape([x[0].value] if x.ndims else [None])]


define_op("Unique", _unique_shape)
UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])  # as TensorFlow names it


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of the vector `x` in order of first appearance (`y`), and for
    each element of `x` the position of its value in `y` (`idx`)."""
    x = convert_to_tensor(x, name="x")
    out_idx = dtypes.as_dtype(out_idx)
    op = make_op("Unique", [x], [x.dtype.base_dtype, out_idx], name=name or "Unique",
                 attrs={"T": x.dtype.base_dtype, "out_idx": out_idx})
    return UniqueOutput(*op.outputs)


# -- fill, zeros, ones, one_hot ---------------------------------------------------------

def _fill_shape(op):
    dims = shape_value(op.inputs[0])
    if dims is None:
        return [unknown_shape()]
    return [TensorShape([None if d is None or d < 0 else d for d in dims])]


define_op("Fill", _fill_shape)
define_op("ZerosLike", _same_shape)
define_op("OnesLike", _same_shape)
NotDifferentiable("ZerosLike")
NotDifferentiable("OnesLike")


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    with op_scope("Fill", name, dims, value) as scope:
        dims = attr_typed_index(dims, name="dims")
        value = convert_to_tensor(value, name="value")
        return make_tensor("Fill", [dims, value], value.dtype.base_dtype, name=scope,
                           attrs={"T": value.dtype.base_dtype, "index_type": dims.dtype})


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    from dtfnb.ops import math_ops  # a higher family: see ops/__init__.py

    return None, math_ops.reduce_sum(grad)


def _constant_or_fill(value, shape, dtype, name):
    """TensorFlow's zeros/ones: a Const for small static shapes, else a Fill."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    graph = graph_of(shape)
    with graph.name_scope(name) as scope:
        if not isinstance(shape, Tensor):
            try:
                dims = [int(d) for d in (shape.as_list() if isinstance(shape, TensorShape)
                                         else np.reshape(shape, -1))]
            except (TypeError, ValueError):
                dims = None
            if dims is not None and int(np.prod(dims)) < 1000:
                return constant_op.constant(value, dtype=dtype, shape=dims, name=scope)
        # A list holding tensors packs, as TensorFlow's conversion names it; a static
        # shape converts as a TensorShape does.
        shape = int_tensor(shape, name=None if contains_tensor(shape) else "shape_as_tensor")
        return fill(shape, constant_op.constant(value, dtype=dtype), name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of shape `shape` and `dtype` with every element zero ("" for strings)."""
    zero = "" if dtypes.as_dtype(dtype) is dtypes.string else False if dtype is dtypes.bool_ \
        else 0
    return _constant_or_fill(zero, shape, dtype, name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of shape `shape` and `dtype` with every element one."""
    return _constant_or_fill(True if dtype is dtypes.bool_ else 1, shape, dtype,
                             name or "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """A tensor of zeros with the shape of `tensor` (and its dtype, unless `dtype` is given)."""
    with op_scope("zeros_like", name, tensor) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = dtypes.as_dtype(dtype or tensor.dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined():
            return zeros(tensor.shape, dtype, name=scope)
        if dtype != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype, name=scope)
        return make_tensor("ZerosLike", [tensor], dtype, name=scope, attrs={"T": dtype})


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """As TensorFlow in a graph: a Fill of the tensor's shape, a constant when it is known."""
    with op_scope("ones_like", name, tensor) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = dtypes.as_dtype(dtype or tensor.dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined():
            with tensor.graph.name_scope("Shape"):
                dims = int_tensor(tensor.shape.as_list(), name="shape_as_tensor")
        else:
            dims = shape(tensor)
        one = True if dtype is dtypes.bool_ else 1   # as TensorFlow's ones
        return fill(dims, constant_op.constant(one, dtype=dtype), name=scope)



def _one_hot_shape(op):
    indices = op.inputs[0].shape
    depth = constant_value(op.inputs[1])
    if indices.ndims is None:
        return [unknown_shape()]
    dims = indices.as_list()
    axis = op.get_attr("axis")
    axis = len(dims) if axis == -1 else axis
    dims.insert(axis, None if depth is None else int(depth))
    return [TensorShape(dims)]


define_op("OneHot", _one_hot_shape)
NotDifferentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: `on_value` at the positions `indices` give along a new `depth`-long axis,
    `off_value` elsewhere."""
    with op_scope("one_hot", name, indices) as scope:
        # As TensorFlow: a given on_value or off_value is converted first and sets the
        # dtype (else float32); a missing one is made under its own name.
        given = [None if v is None else convert_to_tensor(v, dtype=dtype)
                 for v in (on_value, off_value)]
        if dtype is None:
            dtype = next((t.dtype for t in given if t is not None), dtypes.float32)
        dtype = dtypes.as_dtype(dtype).base_dtype
        on, off = (convert_to_tensor(default, dtype=dtype, name=arg) if t is None
                   else convert_to_tensor(t, dtype=dtype)
                   for t, default, arg in zip(given, (1, 0), ("on_value", "off_value")))
        indices = convert_to_tensor(indices, name="indices")
        check_type(indices.dtype, (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64),
                   "indices")
        depth = int_tensor(depth, name="depth")
        return make_tensor("OneHot", [indices, depth, on, off], dtype, name=scope,
                           attrs={"T": dtype, "TI": indices.dtype.base_dtype,
                                  "axis": -1 if axis is None else int(axis)})


# -- where, where_v2 --------------------------------------------------------------------

def _select_shape(op):
    cond, t, e = (x.shape for x in op.inputs)
    try:
        out = t.merge_with(e)
    except ValueError:
        raise shape_error(op, f"Shapes {t} and {e} are not compatible") from None
    if cond.ndims is not None and out.ndims is not None and cond.ndims != out.ndims:
        if cond.ndims != 1 or out.ndims == 0:
            raise shape_error(op, f"Shape must be rank {out.ndims} but is rank {cond.ndims}")
        if not cond[0].is_compatible_with(out[0]):
            raise shape_error(op, f"Dimensions must be equal, but are {cond[0]} and {out[0]}")
    elif cond.ndims is not None and out.ndims is not None and not cond.is_compatible_with(out):
        raise shape_error(op, f"Shapes {cond} and {out} are not compatible")
    return [out]


define_op("Where", lambda op: [TensorShape([None, op.inputs[0].shape.ndims])
                               if op.inputs[0].shape.ndims is not None else unknown_shape(2)])
define_op("Select", _select_shape)
NotDifferentiable("Where")


def where(condition, x=None, y=None, name=None):
    """Coordinates of true elements (one argument), or elementwise choice (three)."""
    if x is None and y is None:
        with op_scope("Where", name, condition) as scope:
            condition = convert_to_tensor(condition, dtype=dtypes.bool_, name="condition")
            return make_tensor("Where", [condition], dtypes.int64, name=scope,
                               attrs={"T": dtypes.bool_})
    return _choice("Select", condition, x, y, name)


def _choice(op_type, condition, x, y, name):
    """Select or SelectV2: `x` where `condition` holds, `y` elsewhere, values converted in
    the op's scope under TensorFlow's names ("Select/condition", "Select/t", "Select/e")."""
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with op_scope(op_type, name, condition, x, y) as scope:
        condition = convert_to_tensor(condition, dtype=dtypes.bool_, name="condition")
        x, y = binary_inputs(x, y, op_type, names=("t", "e"))
        return make_tensor(op_type, [condition, x, y], x.dtype.base_dtype, name=scope,
                           attrs={"T": x.dtype.base_dtype})


@RegisterGradient("Select")
def _select_grad(op, grad):
    cond = op.inputs[0]
    zeros = zeros_like(op.inputs[1])
    return None, where(cond, grad, zeros), where(cond, zeros, grad)


def _select_v2_shape(op):
    """As TensorFlow's: `then` broadcast with `else`, then with the condition."""
    condition, then, else_ = (t.shape for t in op.inputs)
    try:
        return [broadcast_shape(condition, broadcast_shape(then, else_))]
    except ValueError as err:
        raise shape_error(op, str(err)) from None


define_op("SelectV2", _select_v2_shape)


def where_v2(condition, x=None, y=None, name=None):
    """Coordinates of true elements (one argument), or elementwise choice of `x` where
    `condition` holds and `y` elsewhere, the three broadcast together (tf.where_v2)."""
    if x is None and y is None:
        return where(condition, name=name)
    return _choice("SelectV2", condition, x, y, name)


@RegisterGradient("SelectV2")
def _select_v2_grad(op, grad):
    from dtfnb.ops.math_ops import reduce_gradient_args  # a higher family: ops/__init__.py

    condition, x, y = op.inputs
    zero = zeros([], dtype=grad.dtype.base_dtype)
    gx, gy = where_v2(condition, grad, zero), where_v2(condition, zero, grad)
    gx, _ = reduce_gradient_args(x, op.outputs[0], gx, None)
    gy, _ = reduce_gradient_args(y, op.outputs[0], gy, None)
    return None, gx, gy
