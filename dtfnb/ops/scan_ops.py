"""Scans: cumsum and cumprod, along one axis, inclusive or exclusive, forward or reversed.

Their builders need no other family; their gradients are scans the other way (and, for
cumprod, a div_no_nan from math_ops, imported in the gradient body).
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops.building import int_tensor, make_tensor, op_scope

for _op in ("Cumsum", "Cumprod"):
    define_op(_op, lambda op: [op.inputs[0].shape])


def _scan(op_type, x, axis, exclusive, reverse, name):
    with op_scope(op_type, name, x) as scope:
        x = convert_to_tensor(x, name="x")
        axis = int_tensor(axis, name="axis")
        return make_tensor(op_type, [x, axis], x.dtype.base_dtype, name=scope,
                           attrs={"exclusive": bool(exclusive), "reverse": bool(reverse),
                                  "T": x.dtype.base_dtype, "Tidx": axis.dtype})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums of `x` along `axis`: `exclusive` leaves each entry out of its own sum
    (the first is 0), `reverse` sums from the end."""
    return _scan("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products of `x` along `axis`: `exclusive` leaves each entry out of its own
    product (the first is 1), `reverse` multiplies from the end."""
    return _scan("Cumprod", x, axis, exclusive, reverse, name)


@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    axis = op.inputs[1]
    return [cumsum(grad, axis, exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    """As TensorFlow's: the products' running sums the other way, over x (0 where x is)."""
    from dtfnb.ops import math_ops
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [math_ops.div_no_nan(out, x), None]
