"""MatMul and BatchMatMul (shape inference, builders, gradients); Qr, DiagPart and
matrix_transpose, which the orthogonal initializer builds."""

from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops.building import binary_inputs, make_op, make_tensor, op_scope
from dtfnb.ops.shape_util import shape_error
from dtfnb.ops.slicing_ops import transpose


def _matmul_shape(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    batch = op.type == "BatchMatMul"
    ta = op.get_attr("adj_x" if batch else "transpose_a")
    tb = op.get_attr("adj_y" if batch else "transpose_b")
    if a.ndims is None or b.ndims is None:
        return [unknown_shape(2 if not batch else None)]
    if not batch and (a.ndims != 2 or b.ndims != 2):
        bad = a if a.ndims != 2 else b
        raise shape_error(op, f"Shape must be rank 2 but is rank {bad.ndims}")
    if batch and (a.ndims < 2 or a.ndims != b.ndims):
        raise shape_error(op, f"Shape must be rank {a.ndims} but is rank {b.ndims}"
                          if a.ndims >= 2 else f"Shape must be rank >= 2 but is rank {a.ndims}")
    da, db = a.as_list(), b.as_list()
    m, ka = (da[-1], da[-2]) if ta else (da[-2], da[-1])
    kb, n = (db[-1], db[-2]) if tb else (db[-2], db[-1])
    if ka is not None and kb is not None and ka != kb:
        raise shape_error(op, f"Dimensions must be equal, but are {ka} and {kb}")
    batch_dims = []
    for x, y in zip(da[:-2], db[:-2]):
        if x is not None and y is not None and x != y:
            raise shape_error(op, f"Dimensions must be equal, but are {x} and {y}")
        batch_dims.append(x if x is not None else y)
    return [TensorShape(batch_dims + [m, n])]


define_op("MatMul", _matmul_shape)
define_op("BatchMatMul", _matmul_shape)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product of the two innermost dimensions; BatchMatMul when rank > 2."""
    with op_scope("MatMul", name, a, b) as scope:   # values convert as "MatMul/a", "MatMul/b"
        a, b = binary_inputs(a, b, "MatMul", ("a", "b"))
        ta, tb = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
        if (a.shape.ndims or 2) > 2 or (b.shape.ndims or 2) > 2:
            return make_tensor("BatchMatMul", [a, b], a.dtype.base_dtype, name=scope,
                               attrs={"T": a.dtype.base_dtype, "adj_x": ta, "adj_y": tb})
        return make_tensor("MatMul", [a, b], a.dtype.base_dtype, name=scope,
                           attrs={"T": a.dtype.base_dtype, "transpose_a": ta,
                                  "transpose_b": tb, "grad_a": False, "grad_b": False})


def _matmul_grads(a, b, grad, ta, tb, mm):
    """The products giving a's and b's gradients; `mm(x, y, transpose_x, transpose_y, of)`
    makes one, `of` naming the input it is the gradient of."""
    if not ta and not tb:
        return mm(grad, b, False, True, "a"), mm(a, grad, True, False, "b")
    if not ta and tb:
        return mm(grad, b, False, False, "a"), mm(grad, a, True, False, "b")
    if ta and not tb:
        return mm(b, grad, False, True, "a"), mm(a, grad, False, False, "b")
    return mm(b, grad, True, True, "a"), mm(grad, a, True, True, "b")


@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    # As TensorFlow's: each product marked as the gradient of its input (grad_a, grad_b).
    return _matmul_grads(a, b, grad, op.get_attr("transpose_a"), op.get_attr("transpose_b"),
                         lambda x, y, t1, t2, of: make_tensor(
                             "MatMul", [x, y], x.dtype.base_dtype, name="MatMul",
                             attrs={"T": x.dtype.base_dtype, "transpose_a": t1,
                                    "transpose_b": t2, "grad_a": of == "a",
                                    "grad_b": of == "b"}))


@RegisterGradient("BatchMatMul")
def _batch_matmul_grad(op, grad):
    a, b = op.inputs
    return _matmul_grads(a, b, grad, op.get_attr("adj_x"), op.get_attr("adj_y"),
                         lambda x, y, t1, t2, of: make_tensor(
                             "BatchMatMul", [x, y], x.dtype.base_dtype, name="MatMul",
                             attrs={"T": x.dtype.base_dtype, "adj_x": t1, "adj_y": t2}))


def _qr_shape(op):
    """q [..., M, P] and r [..., P, N], P = min(M, N) (M with full_matrices)."""
    x = op.inputs[0].shape
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    if x.ndims < 2:
        raise shape_error(op, f"Shape must be at least rank 2 but is rank {x.ndims}")
    *batch, m, n = x.as_list()
    p = m if op.get_attr("full_matrices") else (
        None if m is None or n is None else min(m, n))
    return [TensorShape(batch + [m, p]), TensorShape(batch + [p, n])]


def _diag_part_shape(op):
    """The first half of an even-rank [d1, ..., dk, d1, ..., dk] input."""
    x = op.inputs[0].shape
    if x.ndims is None:
        return [unknown_shape()]
    if x.ndims % 2:
        raise shape_error(op, f"Input must have even rank <= 6, input rank is {x.ndims}")
    half = x.ndims // 2
    dims = []
    for a, b in zip(x.as_list()[:half], x.as_list()[half:]):
        if a is not None and b is not None and a != b:
            raise shape_error(op, f"Dimensions must be equal, but are {a} and {b}")
        dims.append(a if a is not None else b)
    return [TensorShape(dims)]


define_op("Qr", _qr_shape)
define_op("DiagPart", _diag_part_shape)


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TensorFlow's name
    """(q, r) of the innermost matrices' QR decompositions."""
    x = convert_to_tensor(input)
    dtype = x.dtype.base_dtype
    return tuple(make_op("Qr", [x], [dtype, dtype], name=name or "Qr",
                         attrs={"T": dtype, "full_matrices": bool(full_matrices)}).outputs)


def diag_part(input, name=None):  # noqa: A002 - TensorFlow's name
    """The diagonal of an even-rank tensor: out[i, ..., k] = input[i, ..., k, i, ..., k]."""
    x = convert_to_tensor(input)
    return make_tensor("DiagPart", [x], x.dtype.base_dtype, name=name or "DiagPart",
                       attrs={"T": x.dtype.base_dtype})


def matrix_transpose(a, name="matrix_transpose"):
    """`a` with its two innermost dimensions swapped."""
    with op_scope("matrix_transpose", name, a):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        return transpose(a, perm=list(range(ndims - 2)) + [ndims - 1, ndims - 2])
