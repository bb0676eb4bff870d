"""Tensor's Python operators (+, -, *, /, //, %, **, @, &, |, ^, <, <=, >, >=, -x, abs, ~).

Each binary operator opens a name scope named as TensorFlow's does ("add", "mul",
"truediv", ...) so that `a + b` gets TensorFlow's op names.
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import math_ops, unary_ops
from dtfnb.ops.linalg_ops import matmul


def _binary_operator(fn, op_name):
    def forward(x, y):
        return _scoped(x, y, op_name, lambda scope: fn(x, y, name=scope))

    def backward(y, x):
        # TensorFlow's reflected operators convert the other value first, to the tensor's
        # dtype, as "x" ("matmul/x" where matmul itself would name it "a").
        return _scoped(x, y, op_name, lambda scope: fn(
            convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x"), y, name=scope))

    return forward, backward


def _scoped(x, y, op_name, build):
    graph = getattr(x, "graph", None) or y.graph  # x may be a Python number
    with graph.name_scope(op_name) as scope:
        return build(scope)


for _names, _fn, _op_name in (
        (("__add__", "__radd__"), math_ops.add, "add"),
        (("__sub__", "__rsub__"), math_ops.subtract, "sub"),
        (("__mul__", "__rmul__"), math_ops.multiply, "mul"),
        (("__truediv__", "__rtruediv__"), math_ops.truediv, "truediv"),
        (("__floordiv__", "__rfloordiv__"), math_ops.floordiv, "floordiv"),
        (("__mod__", "__rmod__"), math_ops.floormod, "mod"),
        (("__pow__", "__rpow__"), math_ops.pow, "pow"),
        (("__matmul__", "__rmatmul__"), matmul, "matmul"),
        (("__and__", "__rand__"), math_ops.logical_and, "and"),
        (("__or__", "__ror__"), math_ops.logical_or, "or"),
        (("__xor__", "__rxor__"), math_ops.logical_xor, "xor")):
    _forward, _backward = _binary_operator(_fn, _op_name)
    Tensor._override_operator(_names[0], _forward)
    Tensor._override_operator(_names[1], _backward)

Tensor._override_operator("__lt__", lambda x, y: math_ops.less(x, y))
Tensor._override_operator("__le__", lambda x, y: math_ops.less_equal(x, y))
Tensor._override_operator("__gt__", lambda x, y: math_ops.greater(x, y))
Tensor._override_operator("__ge__", lambda x, y: math_ops.greater_equal(x, y))
Tensor._override_operator("__neg__", lambda x: unary_ops.negative(x))
Tensor._override_operator("__abs__", lambda x: unary_ops.abs(x))
Tensor._override_operator("__invert__", lambda x: math_ops.logical_not(x))
