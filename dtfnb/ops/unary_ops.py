"""Elementwise functions of one tensor: negative, abs, sign, square, sqrt, rsqrt, exp, log,
log1p, reciprocal, floor, ceil, round, sin, cos, and their gradients.

Below math_ops, which builds on them: their builders and gradients need no other family
(a gradient's products and sums are the tensors' operators).
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops import constant_op
from dtfnb.ops.building import make_tensor


def _unary(op_type, py_name):
    def build(x, name=None):
        return _unary_op(op_type, x, name)

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"Elementwise {op_type} of x."
    return build


def _unary_op(op_type, x, name):
    """Builds a one-input elementwise op of `op_type` on `x`."""
    x = convert_to_tensor(x)
    return make_tensor(op_type, [x], x.dtype.base_dtype, name=name or op_type,
                       attrs={"T": x.dtype.base_dtype})


_UNARY = ("Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Reciprocal",
          "Floor", "Ceil", "Round", "Sin", "Cos")
for _op in _UNARY:
    define_op(_op, lambda op: [op.inputs[0].shape])
for _op in ("Sign", "Floor", "Ceil", "Round"):
    RegisterGradient(_op)(lambda op, grad: None)


negative = _unary("Neg", "negative")
abs = _unary("Abs", "abs")  # noqa: A001 - TensorFlow's name
sign = _unary("Sign", "sign")
square = _unary("Square", "square")
sqrt = _unary("Sqrt", "sqrt")
rsqrt = _unary("Rsqrt", "rsqrt")
exp = _unary("Exp", "exp")
log = _unary("Log", "log")
log1p = _unary("Log1p", "log1p")
reciprocal = _unary("Reciprocal", "reciprocal")
floor = _unary("Floor", "floor")
ceil = _unary("Ceil", "ceil")


def round(x, name=None):  # noqa: A001 - TensorFlow's name
    """Rounds half to even, as TensorFlow does; integers pass through."""
    x = convert_to_tensor(x)
    if x.dtype.is_integer:
        return x
    return _unary_op("Round", x, name)


sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")


def _const_like(value, tensor):
    return constant_op.constant(value, dtype=tensor.dtype.base_dtype)


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return negative(grad)


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return grad * sign(op.inputs[0])


@RegisterGradient("Square")
def _square_grad(op, grad):
    x = op.inputs[0]
    return grad * (_const_like(2, x) * x)


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    y = op.outputs[0]
    return grad * _const_like(0.5, y) / y


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return grad * (_const_like(-0.5, y) * y * y * y)


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    return grad * op.outputs[0]


@RegisterGradient("Log")
def _log_grad(op, grad):
    return grad * reciprocal(op.inputs[0])


@RegisterGradient("Log1p")
def _log1p_grad(op, grad):
    x = op.inputs[0]
    return grad * reciprocal(_const_like(1, x) + x)


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    y = op.outputs[0]
    return negative(grad) * y * y


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    return grad * cos(op.inputs[0])


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    return negative(grad) * sin(op.inputs[0])
