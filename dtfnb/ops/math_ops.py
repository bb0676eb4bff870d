"""Elementwise arithmetic of two tensors and comparisons with broadcasting, broadcast_to,
reductions, casts, add_n, range.

Built on array_ops and unary_ops (functions of one tensor); slicing_ops builds on this.
Each op's definition, builder and gradient sit together. The gradients build the ops
TensorFlow's build (the differential tier compares them): those of broadcasting ops sum
back to each input's shape (`reduce_gradient_args`) over axes read from the static shapes
when they settle which axes broadcasting stretched (a bias of [300] added to
[None, 300] needs one Sum), else with BroadcastGradientArgs on Shape tensors.
"""

import builtins

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, constant_op, joining_ops
from dtfnb.ops.building import (
    attr_typed_index,
    binary_inputs,
    check_type,
    convert_operands,
    graph_of,
    is_tensor,
    make_op,
    make_tensor,
    op_scope,
)
from dtfnb.ops.shape_util import (
    broadcast_shape,
    constant_value,
    format_shape,
    shape_error,
    shape_value,
)
from dtfnb.ops.unary_ops import log, negative


def _broadcast_shape_fn(op):
    a, b = op.inputs[:2]
    try:
        return [broadcast_shape(a.shape, b.shape)]
    except ValueError as err:
        raise shape_error(op, str(err)) from None


def binary_op(op_type, x, y, name, out_dtype=None, attrs=None):
    """Builds a two-input elementwise op of `op_type`, with `x` and `y` converted to one dtype."""
    # As TensorFlow's op helper: the op's name is a scope, so a converted operand
    # is named like "Mul/y".
    with op_scope(op_type, name, x, y) as scope:
        x, y = binary_inputs(x, y, op_type)
        dtype = out_dtype or x.dtype.base_dtype
        return make_tensor(op_type, [x, y], dtype, name=scope,
                           attrs={"T": x.dtype.base_dtype, **(attrs or {})})


def _binary(op_type, py_name):
    def build(x, y, name=None):
        return binary_op(op_type, x, y, name)

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"Elementwise {op_type} of x and y, with broadcasting."
    return build


def _comparison(op_type, py_name):
    # Equal and NotEqual have an attr saying whether shapes that do not broadcast fail
    attrs = {"incompatible_shape_error": True} if op_type in ("Equal", "NotEqual") else None

    def build(x, y, name=None):
        return binary_op(op_type, x, y, name, dtypes.bool_, attrs)

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"Elementwise {op_type} of x and y (a bool tensor), with broadcasting."
    return build


# -- broadcasting ---------------------------------------------------------------------

def _broadcast_to_shape(op):
    dims = shape_value(op.inputs[1])
    target = unknown_shape() if dims is None else TensorShape(
        [None if d is None or d < 0 else d for d in dims])
    try:
        out = broadcast_shape(op.inputs[0].shape, target)
    except ValueError as err:
        raise shape_error(op, str(err)) from None
    if out.ndims is not None and target.ndims is not None and out.ndims != target.ndims:
        raise shape_error(op, f"Rank of input ({op.inputs[0].shape.ndims}) must be no greater "
                              f"than rank of output shape ({target.ndims})")
    return [target.merge_with(out) if out.ndims is not None else target]


define_op("BroadcastTo", _broadcast_to_shape)


def broadcast_to(input, shape, name=None):  # noqa: A002 - TensorFlow's name
    """Broadcasts `input` to `shape`, as numpy does (tf.broadcast_to)."""
    with op_scope("BroadcastTo", name, input, shape) as scope:
        value = convert_to_tensor(input, name="input")
        shape = attr_typed_index(shape, name="shape")
        return make_tensor("BroadcastTo", [value, shape], value.dtype.base_dtype, name=scope,
                           attrs={"T": value.dtype.base_dtype, "Tidx": shape.dtype})


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    """As TensorFlow's: summed, keeping dims, over the axes broadcasting stretched (the
    target shape a constant where it is known) and reshaped to the input."""
    x, target = op.inputs
    shape = array_ops.shape(x, out_type=target.dtype)
    known = constant_value(target)
    if known is not None:
        target = constant_op.constant(known.tolist(), dtype=target.dtype)
    _, axes = broadcast_gradient_args(target, shape)
    return array_ops.reshape(reduce_sum(grad, axes, keepdims=True), shape), None


define_op("BroadcastGradientArgs", lambda op: [unknown_shape(1), unknown_shape(1)])
NotDifferentiable("BroadcastGradientArgs")


def broadcast_gradient_args(s0, s1, name=None):
    """The axes to sum a broadcast result's gradient over, for each of two input shapes."""
    op = make_op("BroadcastGradientArgs", [s0, s1], [s0.dtype, s0.dtype],
                 name=name or "BroadcastGradientArgs", attrs={"T": s0.dtype})
    return op.outputs


# -- reducing a broadcast gradient back to an input's shape ----------------------------

def _binary_grads(op, gx, gy):
    """The gradients of a broadcasting binary op reduced to its inputs' shapes."""
    return reduce_gradient_args(*op.inputs, gx, gy)


def reduce_gradient_args(x, y, gx, gy):
    """Gradients `gx` and `gy` of a broadcast of `x` and `y` reduced to their shapes, as
    TensorFlow's _ReduceGradientArgs builds them: both Shapes, then each gradient summed
    (keeping dims) over the axes its input was broadcast along and reshaped to it; those
    axes read from the static shapes where they settle it, else BroadcastGradientArgs."""
    if gx is None and gy is None:
        return gx, gy
    shape_x, shape_y = array_ops.shape(x), array_ops.shape(y)
    axes = _broadcast_axes(x.shape, y.shape)
    if axes is None:
        rx, ry = broadcast_gradient_args(shape_x, shape_y)
        reduce_x = reduce_y = True
    else:
        rx, ry = axes
        reduce_x = bool(rx) or x.shape.ndims < y.shape.ndims
        reduce_y = bool(ry) or y.shape.ndims < x.shape.ndims
    return _summed_to(gx, shape_x, rx, reduce_x), _summed_to(gy, shape_y, ry, reduce_y)


def _broadcast_axes(x, y):
    """The axes of the broadcast of static shapes `x` and `y` along which each was
    stretched from 1 or extended; None where an unknown dim leaves it to run time."""
    if x.ndims is None or y.ndims is None:
        return None
    rank = builtins.max(x.ndims, y.ndims)
    x_dims = [1] * (rank - x.ndims) + x.as_list()
    y_dims = [1] * (rank - y.ndims) + y.as_list()
    x_axes, y_axes = [], []
    for axis, (dx, dy) in enumerate(zip(x_dims, y_dims)):
        if dx == 1 and dy != 1:
            x_axes.append(axis)
        elif dy == 1 and dx != 1:
            y_axes.append(axis)
        elif dx is None or dy is None:
            return None
    return x_axes, y_axes


def _summed_to(grad, shape, axes, must):
    if grad is None or not must:
        return grad
    return array_ops.reshape(reduce_sum(grad, axes, keepdims=True), shape)


def _same_static_shapes(*tensors):
    """Whether the tensors have one fully known shape (a binary op's fast path)."""
    first = tensors[0].shape
    return first.is_fully_defined() and all(t.shape.is_fully_defined() and t.shape == first
                                            for t in tensors[1:])


# -- binary arithmetic ----------------------------------------------------------------

_BINARY = ("Add", "AddV2", "Sub", "Mul", "RealDiv", "DivNoNan", "FloorDiv", "FloorMod", "Pow",
           "Maximum", "Minimum", "SquaredDifference", "TruncateDiv", "TruncateMod")
for _op in _BINARY:
    define_op(_op, _broadcast_shape_fn)


def add(x, y, name=None):
    """x + y: AddV2, or Add (which also concatenates) for strings, as TensorFlow builds."""
    with graph_of(x, y).name_scope(name or "Add") as scope:
        x, y = binary_inputs(x, y, "AddV2")
        return binary_op("Add" if x.dtype.base_dtype is dtypes.string else "AddV2", x, y,
                         scope)


subtract = _binary("Sub", "subtract")
multiply = _binary("Mul", "multiply")
realdiv = _binary("RealDiv", "realdiv")


def div_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0; integers divide as floats, as in truediv."""
    with graph_of(x, y).name_scope(name or "div_no_nan") as scope:
        return _true_division("DivNoNan", x, y, scope, "tf.math.divide_no_nan")


# TensorFlow's _TRUEDIV_TABLE: the dtypes true division takes, integers cast to a float
# first (None: divided as they are).
_TRUEDIV_TABLE = {
    dtypes.uint8: dtypes.float32, dtypes.int8: dtypes.float32,
    dtypes.uint16: dtypes.float32, dtypes.int16: dtypes.float32,
    dtypes.uint32: dtypes.float64, dtypes.int32: dtypes.float64,
    dtypes.uint64: dtypes.float64, dtypes.int64: dtypes.float64,
    **dict.fromkeys((dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64,
                     dtypes.complex64, dtypes.complex128)),
}


def _true_division(op_type, x, y, scope, caller):
    x, y = convert_operands(x, y)
    dtype = x.dtype.base_dtype
    if dtype != y.dtype.base_dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {dtype!r} != "
                        f"{y.dtype.base_dtype!r}.")
    if dtype not in _TRUEDIV_TABLE:
        raise TypeError(f"Invalid dtype {dtype!r} in {caller}. Expected one of "
                        f"{{{', '.join(repr(t) for t in _TRUEDIV_TABLE)}}}.")
    target = _TRUEDIV_TABLE[dtype]
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return binary_op(op_type, x, y, scope)


def truediv(x, y, name=None):
    """Division that casts integers to floats first, as Python 3's `/`."""
    with graph_of(x, y).name_scope(name or "truediv") as scope:
        return _true_division("RealDiv", x, y, scope, "__truediv__")


def divide(x, y, name=None):
    """Computes Python-style division of `x` by `y` (true division)."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """Python 2 division: true for floats, floor for integers."""
    with op_scope("div", name, x, y) as scope:
        x, y = binary_inputs(x, y)
        op_type = "RealDiv" if x.dtype.is_floating or x.dtype.is_complex else "FloorDiv"
        return binary_op(op_type, x, y, scope)


def floordiv(x, y, name=None):
    """Divides `x` by `y`, rounding towards the most negative integer."""
    with graph_of(x, y).name_scope(name or "floordiv") as scope:
        return binary_op("FloorDiv", x, y, scope)


floormod = _binary("FloorMod", "floormod")
truncatediv = _binary("TruncateDiv", "truncatediv")
truncatemod = _binary("TruncateMod", "truncatemod")
mod = floormod


pow = _binary("Pow", "pow")  # noqa: A001 - TensorFlow's name
maximum = _binary("Maximum", "maximum")
minimum = _binary("Minimum", "minimum")
squared_difference = _binary("SquaredDifference", "squared_difference")


@RegisterGradient("Add")
@RegisterGradient("AddV2")
def _add_grad(op, grad):
    if isinstance(grad, Tensor) and _same_static_shapes(*op.inputs, grad):
        return grad, grad
    return _binary_grads(op, grad, grad)


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    if isinstance(grad, Tensor) and _same_static_shapes(*op.inputs, grad):
        return grad, negative(grad)
    return _binary_grads(op, grad, negative(grad))


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    if isinstance(grad, Tensor) and _same_static_shapes(x, y, grad) \
            and grad.dtype.base_dtype in (dtypes.int32, dtypes.float32):
        return binary_op("Mul", grad, y, "Mul"), binary_op("Mul", grad, x, "Mul")
    return _binary_grads(op, binary_op("Mul", grad, y, "Mul"), binary_op("Mul", x, grad, "Mul"))


@RegisterGradient("RealDiv")
def _real_div_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, realdiv(grad, y), grad * realdiv(realdiv(-x, y), y))


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, div_no_nan(grad, y), grad * div_no_nan(div_no_nan(-x, y), y))


@RegisterGradient("FloorDiv")
@RegisterGradient("TruncateDiv")
def _floor_div_grad(op, grad):
    return None, None


@RegisterGradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, grad, grad * negative(floordiv(x, y)))


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * y * pow(x, y - constant_op.constant(1, dtype=y.dtype.base_dtype))
    # d(x^y)/dy = z * log(x), taken as 0 where x <= 0 (TensorFlow does the same).
    safe_log = array_ops.where(greater(x, 0), log(x), array_ops.zeros_like(x))
    return _binary_grads(op, gx, grad * z * safe_log)


def _min_max_grad(op, grad, selector):
    x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    x_wins = selector(x, y)
    return _binary_grads(op, array_ops.where_v2(x_wins, grad, zeros),
                         array_ops.where_v2(x_wins, zeros, grad))


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    return _min_max_grad(op, grad, greater_equal)


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    return _min_max_grad(op, grad, less_equal)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    with grad.graph.control_dependencies([grad]):   # as TensorFlow's
        gx = scalar_mul(2.0, grad) * (x - y)
    if isinstance(grad, Tensor) and _same_static_shapes(x, y, grad):
        return gx, negative(gx)
    return _binary_grads(op, gx, negative(gx))


def scalar_mul(scalar, x, name=None):
    """`scalar` (converted to x's dtype) times `x`, a tensor or an IndexedSlices, whose
    values it scales."""
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape "
                         f"{scalar.shape}.")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(multiply(scalar, x.values, name), x.indices, x.dense_shape)
    return multiply(scalar, x, name)


# -- comparisons and logic ------------------------------------------------------------

_COMPARISONS = ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                "LogicalAnd", "LogicalOr")
for _op in _COMPARISONS:
    define_op(_op, _broadcast_shape_fn)
    NotDifferentiable(_op)
define_op("LogicalNot", lambda op: [op.inputs[0].shape])
NotDifferentiable("LogicalNot")


equal = _comparison("Equal", "equal")
not_equal = _comparison("NotEqual", "not_equal")
less = _comparison("Less", "less")
less_equal = _comparison("LessEqual", "less_equal")
greater = _comparison("Greater", "greater")
greater_equal = _comparison("GreaterEqual", "greater_equal")


def _logical(op_type, name, *operands):
    """A logical op on bool operands, each converted in its scope as "x" or "y"."""
    with op_scope(op_type, name, *operands) as scope:
        operands = [convert_to_tensor(v, dtype=dtypes.bool_, name=input_name)
                    for v, input_name in zip(operands, ("x", "y"))]
        return make_tensor(op_type, operands, dtypes.bool_, name=scope)


def logical_and(x, y, name=None):
    """Elementwise truth of `x AND y`, with broadcasting."""
    return _logical("LogicalAnd", name, x, y)


def logical_or(x, y, name=None):
    """Elementwise truth of `x OR y`, with broadcasting."""
    return _logical("LogicalOr", name, x, y)


def logical_not(x, name=None):
    """Elementwise truth of `NOT x`."""
    return _logical("LogicalNot", name, x)


def logical_xor(x, y, name="LogicalXor"):
    """x ^ y = (x | y) & ~(x & y), built from the three ops as TensorFlow does (a Python
    value converted by each op that takes it)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


# -- reductions -----------------------------------------------------------------------

def reduced_dims(op, dims, axes, keep, out_of_range):
    """`dims` less (or, kept, 1 for) those `axes` name; `out_of_range(axis, rank)` is the
    shape function's words for an axis the rank does not have."""
    rank = len(dims)
    named = np.reshape(axes, -1).tolist()
    for a in named:
        if not -rank <= a < max(rank, 1):
            raise shape_error(op, out_of_range(a, rank), computed={1: axes})
    axes = {a % max(rank, 1) for a in named}
    if keep:
        return [1 if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


def _reduction_shape(op):
    x = op.inputs[0].shape
    keep = op.get_attr("keep_dims")
    axes = constant_value(op.inputs[1])
    if x.ndims is None:
        return [unknown_shape()]
    if axes is None:
        return [unknown_shape(x.ndims) if keep else unknown_shape()]
    return [TensorShape(reduced_dims(
        op, x.as_list(), axes, keep,
        lambda a, rank: f"Invalid reduction dimension {a} for input with {rank} dimensions."))]


_REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod", "Any", "All")
for _op in _REDUCTIONS:
    define_op(_op, _reduction_shape)
NotDifferentiable("Any")
NotDifferentiable("All")


def _all_axes(x):
    """TensorFlow's _ReductionDims: a constant for a tensor or variable of known rank (but
    0), else a range to its Rank (a value, not yet a tensor, converts there first)."""
    rank = x.shape.ndims if isinstance(getattr(x, "shape", None), TensorShape) else None
    if rank:
        return constant_op.constant(np.arange(rank, dtype=np.int32))
    return _range(0, array_ops.rank(x), 1)


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    if keep_dims is not None:  # TensorFlow 1's spelling
        keepdims = keep_dims
    if axis is None:
        axis = reduction_indices
    all_axes = _all_axes(input_tensor) if axis is None else None  # outside the op's scope
    with op_scope(op_type, name, input_tensor) as scope:
        x = convert_to_tensor(input_tensor, name="input")
        if op_type in ("Any", "All"):
            check_type(x.dtype, (dtypes.bool_,), "input")
        axes = all_axes if axis is None else attr_typed_index(axis, name="reduction_indices")
        out = make_tensor(op_type, [x, axes], x.dtype.base_dtype, name=scope,
                          attrs={**({} if op_type in ("Any", "All")  # bool only, no T
                                    else {"T": x.dtype.base_dtype}),
                                 "Tidx": axes.dtype, "keep_dims": bool(keepdims)})
        if axis is None and not keepdims:
            out.set_shape(())   # all axes, whatever the rank: a scalar, as TensorFlow says
        return out


def _reduction(op_type, what):
    def reduce(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
        return _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices,
                       keep_dims)

    reduce.__name__ = reduce.__qualname__ = f"reduce_{op_type.lower()}"
    reduce.__doc__ = (f"{what} over `axis` (all axes if None). As in TensorFlow 1, "
                      "`reduction_indices` and `keep_dims` are older spellings of `axis` "
                      "and `keepdims`.")
    return reduce


reduce_sum = _reduction("Sum", "Sums the elements of a tensor")
reduce_mean = _reduction("Mean", "Averages the elements of a tensor")
reduce_max = _reduction("Max", "The maximum of the elements of a tensor")
reduce_min = _reduction("Min", "The minimum of the elements of a tensor")
reduce_prod = _reduction("Prod", "Multiplies the elements of a tensor")
reduce_any = _reduction("Any", "The logical OR of a bool tensor's elements")
reduce_all = _reduction("All", "The logical AND of a bool tensor's elements")


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    """As TensorFlow's: the gradient tiled over the input where the reduced axes are known
    at build, else reshaped with the reduced axes kept and broadcast back."""
    from dtfnb.ops import data_flow_ops, slicing_ops  # gradients may reach higher families
    x, axes = op.inputs
    static_axes = constant_value(axes)
    if x.shape.ndims is not None and static_axes is not None:
        rank = x.shape.ndims
        if np.array_equal(static_axes, np.arange(rank)):   # all of them
            grad = array_ops.reshape(grad, [1] * rank)
            shape = (constant_op.constant(x.shape.as_list(), dtype=dtypes.int32)
                     if x.shape.is_fully_defined() else array_ops.shape(x))
            return slicing_ops.tile(grad, shape), None
        if x.shape.is_fully_defined():
            kept, multiples = _kept_and_multiples(op.graph, tuple(x.shape.as_list()),
                                                  tuple(np.reshape(static_axes, -1).tolist()))
            return slicing_ops.tile(array_ops.reshape(grad, kept), multiples), None
    shape = array_ops.shape(x)
    if not op.get_attr("keep_dims"):
        with op.graph.colocate_with(shape.op):
            kept = _reduced_shape(shape, axes, data_flow_ops.dynamic_stitch)
        grad = array_ops.reshape(grad, kept)
    return broadcast_to(grad, shape), None


def _reduced_shape(shape, axes, dynamic_stitch):
    """A reduction's output shape with the reduced axes kept as 1, from the input's shape
    (a tensor) and the axes, as TensorFlow's reduced_shape: a constant where both are
    known at build, else the dims stitched with ones at the axes (data_flow_ops'
    `dynamic_stitch`, which a gradient body passes)."""
    known, known_axes = constant_value(shape), constant_value(axes)
    if known is not None and known_axes is not None:
        kept = np.array(known, np.int32)
        kept[np.array(known_axes, np.int32)] = 1
        return kept
    axes = convert_to_tensor(axes)
    rank = array_ops.size(shape, out_type=axes.dtype)
    axes = (axes + rank) % rank
    axes_shape = array_ops.shape(axes)
    return dynamic_stitch([_range(0, rank, 1), axes],
                          [shape, array_ops.ones(axes_shape, dtype=shape.dtype)])


def _kept_and_multiples(graph, shape, axes):
    """For a reduction of a static `shape` over static `axes`: its output shape with those
    axes kept as 1, and how many times to tile a gradient of that shape back. As
    TensorFlow, once per graph and (shape, axes), working out the multiples with ops of
    the graph (Maximum, floordiv) that it then evaluates and leaves unused."""
    cache = graph._reduced_shape_cache
    if (shape, axes) not in cache:
        kept = np.array(shape, np.int32)
        kept[list(axes)] = 1
        floordiv(shape, maximum(kept, 1))
        multiples = np.array(shape, np.int32) // np.maximum(kept, 1)
        cache[(shape, axes)] = tuple(kept.tolist()), tuple(multiples.tolist())
    return [list(v) for v in cache[(shape, axes)]]


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    """The Sum's gradient over the number of elements each output averages, as
    TensorFlow's: a constant where the shapes are known, else the product of the input's
    dims at the reduced axes."""
    from dtfnb.ops import slicing_ops
    summed = _sum_grad(op, grad)[0]
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = x.shape.num_elements() // builtins.max(y.shape.num_elements(), 1)
        factor = constant_op.constant(count, dtype=summed.dtype.base_dtype)
    else:
        shape = array_ops.shape(x)
        rank = array_ops.size(shape)
        axes = (cast(op.inputs[1], rank.dtype) + rank) % rank
        factor = reduce_prod(slicing_ops.gather(shape, axes))
    return truediv(summed, cast(factor, summed.dtype.base_dtype)), None


@RegisterGradient("Max")
@RegisterGradient("Min")
def _min_max_reduction_grad(op, grad):
    """As TensorFlow's: the gradient shared equally by the inputs equal to the result."""
    from dtfnb.ops import data_flow_ops
    x, axes = op.inputs
    shape = array_ops.shape(x)
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        kept = _reduced_shape(shape, axes, data_flow_ops.dynamic_stitch)
        y = array_ops.reshape(y, kept)
        grad = array_ops.reshape(grad, kept)
    else:
        kept = array_ops.shape(y)
    hits = cast(equal(y, x), grad.dtype.base_dtype)
    selected = array_ops.reshape(reduce_sum(hits, axes), kept)
    return truediv(hits, selected) * grad, None


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    """As TensorFlow's: the reduced axes moved to the front and flattened into one, each
    entry's gradient is the product of the entries before it and of those after (two
    exclusive cumprods), which holds where entries are zero. Its shape arithmetic runs on
    the CPU, as TensorFlow places it."""
    from dtfnb.ops import data_flow_ops, scan_ops, set_ops, slicing_ops
    x = op.inputs[0]
    shape = array_ops.shape(x)
    axes = array_ops.reshape(op.inputs[1], [-1])   # a scalar's too
    if not op.get_attr("keep_dims"):
        grad = array_ops.reshape(grad, _reduced_shape(shape, op.inputs[1],
                                                      data_flow_ops.dynamic_stitch))
    grad = broadcast_to(grad, shape)
    with op.graph.device("/cpu:0"):
        rank = array_ops.rank(x)
        axes = cast(axes, rank.dtype)
        reduced = (axes + rank) % rank
        other, _ = set_ops.setdiff1d(_range(0, rank), reduced, reduced.dtype)
        perm = joining_ops.concat([reduced, other], 0)
        reduced_count = reduce_prod(slicing_ops.gather(shape, reduced))
        other_count = reduce_prod(slicing_ops.gather(shape, other))
    permuted = slicing_ops.transpose(x, perm)
    permuted_shape = array_ops.shape(permuted)
    flat = array_ops.reshape(permuted, (reduced_count, other_count))
    before = scan_ops.cumprod(flat, axis=0, exclusive=True)
    after = scan_ops.cumprod(flat, axis=0, exclusive=True, reverse=True)
    others = array_ops.reshape(before * after, permuted_shape)
    out = grad * slicing_ops.transpose(others, slicing_ops.invert_permutation(perm))
    return array_ops.reshape(out, shape), None


# -- casts and add_n ------------------------------------------------------------------

define_op("Cast", lambda op: [op.inputs[0].shape])


def cast(x, dtype, name=None):
    """Casts a tensor to `dtype`; a tensor already of that dtype is returned as it is."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == dtype:
        return x   # as TensorFlow: before its scope, which would take the name Cast
    with graph_of(x).name_scope(name or "Cast") as scope:  # a Python x becomes Cast/x
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == dtype:
            return x
        return make_tensor("Cast", [x], dtype, name=scope,
                           attrs={"SrcT": x.dtype.base_dtype, "DstT": dtype, "Truncate": False})


def _cast_to(dtype, default_name):
    def cast_to(x, name=default_name):
        return cast(x, dtype, name=name)

    cast_to.__name__ = cast_to.__qualname__ = "to_" + default_name[len("To"):].lower()
    cast_to.__doc__ = f"Casts a tensor to {dtype.name} (deprecated in TensorFlow: use `tf.cast`)."
    return cast_to


to_float = _cast_to(dtypes.float32, "ToFloat")
to_double = _cast_to(dtypes.float64, "ToDouble")
to_int32 = _cast_to(dtypes.int32, "ToInt32")
to_int64 = _cast_to(dtypes.int64, "ToInt64")


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src = op.get_attr("SrcT")
    if (src.is_floating or src.is_complex) and (grad.dtype.is_floating or grad.dtype.is_complex):
        return cast(grad, src)
    return None


def _add_n_shape(op):
    merged = unknown_shape()
    for t in op.inputs:
        try:
            merged = merged.merge_with(t.shape)
        except ValueError:
            raise shape_error(op, f"Shapes {format_shape(merged)} and {format_shape(t.shape)} "
                                  "are not compatible") from None
    return [merged]


define_op("AddN", _add_n_shape)


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype."""
    if not inputs or not isinstance(inputs, (list, builtins.tuple)):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    inputs = [convert_to_tensor(t) for t in inputs]
    dtype = inputs[0].dtype.base_dtype
    if any(t.dtype.base_dtype != dtype for t in inputs):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    if len(inputs) == 1:
        return array_ops.identity(inputs[0], name=name)
    return make_tensor("AddN", inputs, dtype, name=name or "AddN",
                       attrs={"T": dtype, "N": len(inputs)})


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


# -- range ----------------------------------------------------------------------------

def _range_shape(op):
    start, limit, delta = (constant_value(t) for t in op.inputs)
    if start is None or limit is None or delta is None:
        return [unknown_shape(1)]
    if delta == 0:
        raise shape_error(op, "Requires delta != 0")
    return [TensorShape([builtins.max(0, int(np.ceil((limit - start) / delta)))])]


define_op("Range", _range_shape)
NotDifferentiable("Range")

_RANGE_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range(start, limit=None, delta=1, dtype=None, name="range"):
    """Numbers from `start` up to (not including) `limit` by `delta`; `range(n)` is 0..n-1.
    As TensorFlow's: Python values convert as `dtype` (or their own type), then all three
    are cast to `dtype` or the widest of them (an int 0 beside an int64 limit: a Cast)."""
    if limit is None:
        start, limit = 0, start
    values = [convert_to_tensor(v) if is_tensor(v) else v for v in (start, limit, delta)]
    with graph_of(*values).name_scope(name) as scope:
        values = [v if is_tensor(v) else convert_to_tensor(v, dtype=dtype, name=n)
                  for v, n in zip(values, ("start", "limit", "delta"))]
        if dtype is None:
            dtype = builtins.max((v.dtype.base_dtype for v in values),
                                 key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else 0)
        dtype = dtypes.as_dtype(dtype).base_dtype
        start, limit, delta = (cast(v, dtype) for v in values)
        return make_tensor("Range", [start, limit, delta], dtype, name=scope,
                           attrs={"Tidx": dtype})


range = _range  # noqa: A001 - TensorFlow's name; this module uses builtins.range itself
