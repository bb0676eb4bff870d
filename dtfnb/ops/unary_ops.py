"""Elementwise functions of one tensor: negative, abs, sign, square, sqrt, rsqrt, exp, log,
log1p, reciprocal, floor, ceil, round, sin, cos, and their gradients; the tests is_nan,
is_inf and is_finite.

Below math_ops, which builds on them: their builders and gradients need no family above
(a gradient's products and sums are the tensors' operators), but Square's gradient,
which multiplies as TensorFlow's does with math_ops' multiply.
"""

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops import constant_op
from dtfnb.ops.array_ops import zeros_like
from dtfnb.ops.building import check_type, make_tensor, one_input_op, op_scope
from dtfnb.ops.shape_util import merge_shapes


def _unary(op_type, py_name):
    def build(x, name=None):
        return one_input_op(op_type, x, name)

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"Elementwise {op_type} of x."
    return build


_UNARY = ("Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Reciprocal",
          "Floor", "Ceil", "Round", "Sin", "Cos")
for _op in _UNARY:
    define_op(_op, lambda op: [op.inputs[0].shape])
for _op in ("Floor", "Ceil", "Round"):
    RegisterGradient(_op)(lambda op, grad: None)


negative = _unary("Neg", "negative")
abs = _unary("Abs", "abs")  # noqa: A001 - TensorFlow's name


def sign(x, name=None):
    """-1, 0 or 1 by the sign of each element (x converted before the op's scope, as
    TensorFlow's sign)."""
    return one_input_op("Sign", convert_to_tensor(x), name)


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
    x = convert_to_tensor(x, name="x")   # before any scope, as TensorFlow's round
    if x.dtype.is_integer:
        return x
    return one_input_op("Round", x, name)


sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")

_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def _predicate(op_type, py_name):
    """A bool test of each element of a float tensor, with no gradient (TensorFlow has
    none): is_nan, is_inf, is_finite."""
    define_op(op_type, lambda op: [op.inputs[0].shape])

    def build(x, name=None):
        with op_scope(op_type, name, x) as scope:
            x = convert_to_tensor(x, name="x")
            dtype = check_type(x.dtype, _FLOATS, "x")
            return make_tensor(op_type, [x], dtypes.bool_, name=scope, attrs={"T": dtype})

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"Elementwise {op_type} of a float tensor: a bool tensor."
    return build


is_nan = _predicate("IsNan", "is_nan")
is_inf = _predicate("IsInf", "is_inf")
is_finite = _predicate("IsFinite", "is_finite")


# -- gradients, as TensorFlow's math_grad builds them ------------------------------------
# Those that read the op's input or output do it under a control dependency on the
# incoming gradient, as TensorFlow's do (so that they run no earlier than it). For real
# dtypes TensorFlow's conj is the tensor itself; dtfnb builds no Conj.

for _op in ("SqrtGrad", "RsqrtGrad", "ReciprocalGrad"):
    define_op(_op, lambda op: [merge_shapes(op, op.inputs[0].shape, op.inputs[1].shape)])


def _gradient_op(op_type, y, grad):
    """TensorFlow's fused gradient of y = f(x): SqrtGrad(y, dy) and the like."""
    return make_tensor(op_type, [y, grad], y.dtype.base_dtype, name=op_type,
                       attrs={"T": y.dtype.base_dtype})


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return -grad


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return grad * sign(op.inputs[0])


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    return zeros_like(op.inputs[0])


@RegisterGradient("Square")
def _square_grad(op, grad):
    from dtfnb.ops import math_ops  # a higher family: see ops/__init__.py

    x = op.inputs[0]
    with grad.graph.control_dependencies([grad]):
        two = constant_op.constant(2.0, dtype=x.dtype.base_dtype)
        return math_ops.multiply(grad, math_ops.multiply(x, two))


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    return _gradient_op("SqrtGrad", op.outputs[0], grad)


@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    a, y = op.inputs[0], op.outputs[0]
    with grad.graph.control_dependencies([grad]):
        ga = grad / a
        return -ga * y, 0.5 * ga


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    return _gradient_op("RsqrtGrad", op.outputs[0], grad)


@RegisterGradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    a, b = op.inputs
    with grad.graph.control_dependencies([grad]):
        return -1.5 * grad * b * square(a), _gradient_op("RsqrtGrad", a, grad)


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    return _gradient_op("ReciprocalGrad", op.outputs[0], grad)


@RegisterGradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    a, b = op.inputs
    with grad.graph.control_dependencies([grad]):
        return grad * -2.0 * b * a, _gradient_op("ReciprocalGrad", a, grad)


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    with grad.graph.control_dependencies([grad]):
        return grad * op.outputs[0]


@RegisterGradient("Log")
def _log_grad(op, grad):
    with grad.graph.control_dependencies([grad]):
        return grad * reciprocal(op.inputs[0])


@RegisterGradient("Log1p")
def _log1p_grad(op, grad):
    with grad.graph.control_dependencies([grad]):
        return grad * reciprocal(1 + op.inputs[0])


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    with grad.graph.control_dependencies([grad]):
        return grad * cos(op.inputs[0])


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    with grad.graph.control_dependencies([grad]):
        return -grad * sin(op.inputs[0])
