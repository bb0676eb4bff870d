"""Elementwise arithmetic, comparisons, matmul, reductions and casts, on any `xp`.

Kernels return new arrays and never write into an input. Float errors (x/0, log 0)
give inf/nan silently as in TensorFlow (the executor runs kernels under
`np.errstate(all="ignore")`); integer division by zero is an error.
"""

import math

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.kernels import blas_work
from dtfnb.kernels.allocation import ALWAYS_FITS, check_output
from dtfnb.kernels.registry import register_kernel


def host(value):
    """A host (numpy) copy of a small array such as a shape, axis or index list."""
    if hasattr(value, "__cuda_array_interface__"):
        return value.get()
    return np.asarray(value)


def _out(ctx, value, index=0):
    """`value` as an array of the op's declared output dtype (numpy may widen scalars)."""
    dtype = ctx.output_types[index].as_numpy_dtype
    value = ctx.xp.asarray(value)
    return value if value.dtype == dtype else value.astype(dtype)


def _elementwise(op_type, fn):
    @register_kernel(op_type)
    def kernel(ctx, step, *inputs):
        try:
            if len(inputs) == 2 and inputs[0].shape != inputs[1].shape:  # may broadcast
                # A broadcast has at most both sizes' product of elements: mostly no need
                # to work out its shape before numpy does.
                if inputs[0].size * inputs[1].size * inputs[0].itemsize > ALWAYS_FITS:
                    check_output(ctx, np.broadcast_shapes(inputs[0].shape, inputs[1].shape),
                                 ctx.output_types[0].as_numpy_dtype)
            return _out(ctx, fn(ctx.xp, *inputs))
        except ValueError:
            if len(inputs) == 2 and inputs[0].shape != inputs[1].shape:
                raise InvalidArgumentError(None, None, "Incompatible shapes: "
                                           f"{dims_string(inputs[0].shape)} vs. "
                                           f"{dims_string(inputs[1].shape)}") from None
            raise

    kernel.__name__ = f"_{op_type.lower()}"
    return kernel



def _check_int_divisor(x, y):
    """TensorFlow's error for an integer divided by zero, where a division is made: not
    for an empty result (reduce_sum's gradient takes axes modulo a scalar's rank, 0)."""
    if y.dtype.kind in "iu" and math.prod(np.broadcast_shapes(x.shape, y.shape)) \
            and bool((y == 0).any()):
        raise InvalidArgumentError(None, None, "Integer division by zero")


def _floor_div(xp, x, y):
    _check_int_divisor(x, y)
    if x.dtype.kind == "f":  # TensorFlow floors the true quotient
        return xp.floor(xp.true_divide(x, y))
    return xp.floor_divide(x, y)


def _truncate_div(xp, x, y):
    _check_int_divisor(x, y)
    if x.dtype.kind == "f":
        return xp.trunc(xp.true_divide(x, y))
    quotient = xp.floor_divide(xp.abs(x), xp.abs(y))  # C's division: rounds toward zero
    return xp.where((x < 0) != (y < 0), -quotient, quotient)


def _truncate_mod(xp, x, y):
    _check_int_divisor(x, y)
    return xp.fmod(x, y)


def _floor_mod(xp, x, y):
    _check_int_divisor(x, y)
    return xp.mod(x, y)


def _unless_no_gradient(xp, dy, value):
    """TensorFlow's gradient kernels of sqrt, rsqrt and reciprocal: 0 where the incoming
    gradient is, even where the output makes the product inf or nan."""
    return xp.where(dy == 0, xp.zeros((), value.dtype), value)


def _sqrt_grad(xp, y, dy):
    return _unless_no_gradient(xp, dy, dy.dtype.type(0.5) * dy / y)


def _rsqrt_grad(xp, y, dy):
    return _unless_no_gradient(xp, dy, dy.dtype.type(-0.5) * (dy * y) * (y * y))


def _reciprocal_grad(xp, y, dy):
    return _unless_no_gradient(xp, dy, -y * y * dy)


def _pow(xp, x, y):
    if x.dtype.kind in "iu" and bool((y < 0).any()):
        raise InvalidArgumentError(None, None,
                                   "Integers to negative integer powers are not allowed")
    return xp.power(x, y)


for _type, _fn in {
        "Add": lambda xp, x, y: xp.add(x, y),
        "AddV2": lambda xp, x, y: xp.add(x, y),
        "Sub": lambda xp, x, y: xp.subtract(x, y),
        "Mul": lambda xp, x, y: xp.multiply(x, y),
        "RealDiv": lambda xp, x, y: xp.true_divide(x, y),
        "DivNoNan": lambda xp, x, y: xp.where(y == 0, xp.zeros((), x.dtype),
                                              xp.true_divide(x, xp.where(y == 0, 1, y))),
        "FloorDiv": _floor_div,
        "FloorMod": _floor_mod,
        "TruncateDiv": _truncate_div,
        "TruncateMod": _truncate_mod,
        "Pow": _pow,
        "Maximum": lambda xp, x, y: xp.maximum(x, y),
        "Minimum": lambda xp, x, y: xp.minimum(x, y),
        "SquaredDifference": lambda xp, x, y: xp.square(xp.subtract(x, y)),
        "Equal": lambda xp, x, y: xp.equal(x, y),
        "NotEqual": lambda xp, x, y: xp.not_equal(x, y),
        "Less": lambda xp, x, y: xp.less(x, y),
        "LessEqual": lambda xp, x, y: xp.less_equal(x, y),
        "Greater": lambda xp, x, y: xp.greater(x, y),
        "GreaterEqual": lambda xp, x, y: xp.greater_equal(x, y),
        "LogicalAnd": lambda xp, x, y: xp.logical_and(x, y),
        "LogicalOr": lambda xp, x, y: xp.logical_or(x, y),
        "LogicalNot": lambda xp, x: xp.logical_not(x),
        "Neg": lambda xp, x: xp.negative(x),
        "Abs": lambda xp, x: xp.abs(x),
        "Sign": lambda xp, x: xp.sign(x),
        "Square": lambda xp, x: xp.square(x),
        "Sqrt": lambda xp, x: xp.sqrt(x),
        "Rsqrt": lambda xp, x: xp.reciprocal(xp.sqrt(x)),
        "Exp": lambda xp, x: xp.exp(x),
        "Log": lambda xp, x: xp.log(x),
        "Log1p": lambda xp, x: xp.log1p(x),
        "Reciprocal": lambda xp, x: xp.reciprocal(x),
        "IsNan": lambda xp, x: xp.isnan(x),
        "IsInf": lambda xp, x: xp.isinf(x),
        "IsFinite": lambda xp, x: xp.isfinite(x),
        "SqrtGrad": _sqrt_grad,
        "RsqrtGrad": _rsqrt_grad,
        "ReciprocalGrad": _reciprocal_grad,
        "Floor": lambda xp, x: xp.floor(x),
        "Ceil": lambda xp, x: xp.ceil(x),
        "Round": lambda xp, x: xp.rint(x),
        "Sin": lambda xp, x: xp.sin(x),
        "Cos": lambda xp, x: xp.cos(x),
}.items():
    _elementwise(_type, _fn)


@register_kernel("AddN")
def _add_n(ctx, step, *inputs):
    for i, value in enumerate(inputs[1:], 1):
        if value.shape != inputs[0].shape:
            raise InvalidArgumentError(
                None, None, f"Inputs to operation {ctx.name} of type AddN must have the same "
                f"size and shape.  Input 0: {dims_string(inputs[0].shape)} != input {i}: "
                f"{dims_string(value.shape)}")
    total = inputs[0]
    for value in inputs[1:]:
        total = total + value  # a new array each time: inputs stay untouched
    return _out(ctx, total)


@register_kernel("Cast")
def _cast(ctx, step, x):
    return ctx.xp.asarray(x).astype(ctx.output_types[0].as_numpy_dtype)


# -- matmul ---------------------------------------------------------------------------

def _check_inner(a, b, name):
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(
            None, None, f"In[0] mismatch In[1] shape: {a.shape[-1]} vs. {b.shape[-2]}: "
            f"{list(a.shape)} {list(b.shape)}")


@register_kernel("MatMul", expensive=True)
def _matmul(ctx, step, a, b):
    if ctx.attrs.get("transpose_a"):
        a = a.T
    if ctx.attrs.get("transpose_b"):
        b = b.T
    if a.ndim != 2 or b.ndim != 2:
        raise InvalidArgumentError(None, None, "In[0] and In[1] must be matrices: "
                                   f"{list(a.shape)} {list(b.shape)}")
    _check_inner(a, b, ctx.name)
    check_output(ctx, (a.shape[0], b.shape[1]), ctx.output_types[0].as_numpy_dtype)
    return _out(ctx, blas_work.matmul(ctx.xp, a, b))


@register_kernel("Qr")
def _qr(ctx, step, x):
    if x.ndim < 2:
        raise InvalidArgumentError(None, None, "input must have rank >= 2, got "
                                   f"{x.ndim}")
    mode = "complete" if ctx.attrs.get("full_matrices") else "reduced"
    return ctx.xp.linalg.qr(x, mode=mode)


def _adjoint(xp, x):
    x = xp.swapaxes(x, -1, -2)
    return xp.conj(x) if np.dtype(x.dtype).kind == "c" else x


@register_kernel("BatchMatMul", expensive=True)
def _batch_matmul(ctx, step, a, b):
    xp = ctx.xp
    if ctx.attrs.get("adj_x"):
        a = _adjoint(xp, a)
    if ctx.attrs.get("adj_y"):
        b = _adjoint(xp, b)
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise InvalidArgumentError(None, None, "In[0] and In[1] must have compatible batch "
                                   f"dimensions: {list(a.shape)} vs. {list(b.shape)}")
    _check_inner(a, b, ctx.name)
    check_output(ctx, a.shape[:-1] + b.shape[-1:], ctx.output_types[0].as_numpy_dtype)
    return _out(ctx, blas_work.matmul(xp, a, b))


# -- scans ----------------------------------------------------------------------------

def _scan(op_type, accumulate, identity):
    @register_kernel(op_type)
    def kernel(ctx, step, x, axis):
        xp = ctx.xp
        if getattr(axis, "ndim", 0) != 0:
            raise InvalidArgumentError(None, None, "ScanOp: axis must be a scalar, not "
                                       f"{dims_string(axis.shape)}")
        a = int(host(axis))
        a = a + x.ndim if a < 0 else a
        if not 0 <= a < x.ndim:
            raise InvalidArgumentError(None, None, "ScanOp: Expected scan axis in the range "
                                       f"[{-x.ndim}, {x.ndim}), but got {a}")
        if ctx.attrs.get("reverse"):
            x = xp.flip(x, a)
        out = accumulate(xp, x, a)
        if ctx.attrs.get("exclusive") and x.shape[a]:
            # each entry's scan without it: the scan of the entries before, or identity
            before = [slice(None)] * x.ndim
            before[a] = slice(None, -1)
            first = list(before)
            first[a] = slice(0, 1)
            out = xp.concatenate([xp.full_like(out[tuple(first)], identity),
                                  out[tuple(before)]], axis=a)
        return xp.flip(out, a) if ctx.attrs.get("reverse") else out

    kernel.__name__ = f"_{op_type.lower()}"
    return kernel


_scan("Cumsum", lambda xp, x, a: xp.cumsum(x, axis=a, dtype=x.dtype), 0)
_scan("Cumprod", lambda xp, x, a: xp.cumprod(x, axis=a, dtype=x.dtype), 1)


# -- reductions -----------------------------------------------------------------------

def _axes(x, axes):
    axes = host(axes).reshape(-1).tolist()
    ndim = x.ndim
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension ({a} for "
                                       f"input with {ndim} dimension(s)")
        a = a + ndim if a < 0 else a
        if ndim and a not in out:
            out.append(a)
    return tuple(out)


def _reduction(op_type, fn):
    @register_kernel(op_type)
    def kernel(ctx, step, x, axes):
        axes = _axes(x, axes)
        keep = bool(ctx.attrs.get("keep_dims"))
        if not axes:
            return x
        return _out(ctx, fn(ctx.xp, x, axes, keep))

    kernel.__name__ = f"_{op_type.lower()}"
    return kernel


def _mean(xp, x, axes, keep):
    if np.dtype(x.dtype).kind in "iub":  # integer mean truncates, as TensorFlow's does
        count = int(np.prod([x.shape[a] for a in axes]))
        total = x.sum(axis=axes, keepdims=keep, dtype=x.dtype)
        return total // count if count else total
    return x.mean(axis=axes, keepdims=keep, dtype=x.dtype)


def _extreme(name):
    def reduce(xp, x, axes, keep):
        if any(x.shape[a] == 0 for a in axes):  # TensorFlow gives the identity element
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep \
                else tuple(d for i, d in enumerate(x.shape) if i not in axes)
            kind = np.dtype(x.dtype).kind
            info = np.finfo(x.dtype) if kind == "f" else np.iinfo(x.dtype)
            fill = (-np.inf if kind == "f" else info.min) if name == "max" else \
                (np.inf if kind == "f" else info.max)
            return xp.full(shape, fill, dtype=x.dtype)
        return getattr(x, name)(axis=axes, keepdims=keep)

    return reduce


# The arrays' own methods: numpy's functions of the same names wrap them in Python.
_reduction("Sum", lambda xp, x, axes, keep: x.sum(axis=axes, keepdims=keep, dtype=x.dtype))
_reduction("Prod", lambda xp, x, axes, keep: x.prod(axis=axes, keepdims=keep, dtype=x.dtype))
_reduction("Mean", _mean)
_reduction("Max", _extreme("max"))
_reduction("Min", _extreme("min"))
_reduction("Any", lambda xp, x, axes, keep: x.any(axis=axes, keepdims=keep))
_reduction("All", lambda xp, x, axes, keep: x.all(axis=axes, keepdims=keep))


def _arg(op_type, fn_name):
    """ArgMax or ArgMin as TensorFlow's (Eigen's tuple reducers): starting from index 0
    with the lowest (highest) finite value, an element takes over only when greater
    (smaller), so a NaN never wins, nor does -inf (inf); ties go to the first."""
    bound = "min" if fn_name == "argmax" else "max"

    @register_kernel(op_type)
    def kernel(ctx, step, x, axis):
        axis = int(host(axis).reshape(-1)[0])
        if not -x.ndim <= axis < max(x.ndim, 1):
            raise InvalidArgumentError(None, None, f"Expected dimension in the range "
                                       f"[{-x.ndim}, {x.ndim}), but got {axis}")
        if x.shape[axis] == 0:
            raise InvalidArgumentError(None, None, f"Reduction axis {axis} is empty in shape "
                                       f"{dims_string(x.shape)}")
        xp = ctx.xp
        if x.dtype.kind == "f" and not bool(xp.isfinite(x).all()):
            limit = getattr(np.finfo(x.dtype), bound)
            beyond = x < limit if bound == "min" else x > limit
            x = xp.where(xp.isnan(x) | beyond, x.dtype.type(limit), x)
        return _out(ctx, getattr(xp, fn_name)(x, axis=axis))

    kernel.__name__ = f"_{op_type.lower()}"
    return kernel


_arg("ArgMax", "argmax")
_arg("ArgMin", "argmin")


@register_kernel("Range")
def _range(ctx, step, start, limit, delta):
    start, limit, delta = (host(v).reshape(()).item() for v in (start, limit, delta))
    if delta == 0:
        raise InvalidArgumentError(None, None, f"Requires delta != 0: {delta}")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise InvalidArgumentError(None, None, f"Requires start <= limit when delta > 0: "
                                   f"{start}/{limit}" if delta > 0 else
                                   f"Requires start >= limit when delta < 0: {start}/{limit}")
    dtype = ctx.output_types[0].as_numpy_dtype
    check_output(ctx, [int(-(-abs(limit - start) // abs(delta)))], dtype)
    return ctx.xp.arange(start, limit, delta, dtype=dtype)
