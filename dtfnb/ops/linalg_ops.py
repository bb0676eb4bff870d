"""MatMul and BatchMatMul (shape inference, builders, gradients); tensordot, a MatMul
between transposes and reshapes; Qr, DiagPart and matrix_transpose, which the orthogonal
initializer builds."""

import numbers

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import RegisterGradient, define_op
from dtfnb.ops import array_ops, joining_ops, math_ops, set_ops
from dtfnb.ops.building import binary_inputs, graph_of, make_op, make_tensor, op_scope
from dtfnb.ops.shape_util import shape_error
from dtfnb.ops.slicing_ops import gather, transpose


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


# -- tensordot ------------------------------------------------------------------------


def _tensordot_axes(a, axes):
    """The contracted axes of `a` and of `b`: lists where `axes` is a count or a pair of
    lists, else tensors."""
    if isinstance(axes, numbers.Integral):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        ndims = a.shape.ndims
        if ndims is not None:
            if axes > ndims:
                raise ValueError(f"`axes` must not be larger than the number of dimensions "
                                 f"of tensor {a}.  Received {axes}, vs tensor dimensions "
                                 f"{ndims}.")
            return list(range(ndims - axes, ndims)), list(range(axes))
        rank = array_ops.rank(a)
        return (math_ops.range(rank - axes, rank, dtype=dtypes.int32),
                math_ops.range(axes, dtype=dtypes.int32))
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, numbers.Integral) and isinstance(b_axes, numbers.Integral):
            a_axes, b_axes = [a_axes], [b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes `a` and `b`, "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    axes = convert_to_tensor(axes, name="axes", dtype=dtypes.int32)
    return axes[0], axes[1]


def _tensordot_reshape(a, axes, flipped=False):
    """`a` transposed and reshaped to a matrix whose columns (rows if `flipped`) run over
    `axes`; its free dims (a list where a's shape is known, else a tensor) and their
    static values (None where a's rank is unknown)."""
    if a.shape.ndims is not None and isinstance(axes, (list, tuple)):
        shape_a = a.shape.as_list()
        axes = [i if i >= 0 else i + len(shape_a) for i in axes]
        free = [i for i in range(len(shape_a)) if i not in axes]
        free_dims_static = [shape_a[i] for i in free]
        if a.shape.is_fully_defined():
            prod_free = int(np.prod(free_dims_static))
            prod_axes = int(np.prod([shape_a[i] for i in axes]))
            perm = axes + free if flipped else free + axes
            new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
            a_trans = transpose(a, perm) if perm != list(range(len(shape_a))) else a
            if a_trans.shape.as_list() != new_shape:
                a_trans = array_ops.reshape(a_trans, new_shape)
            return a_trans, free_dims_static, free_dims_static
        axes = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
        free = convert_to_tensor(free, dtype=dtypes.int32, name="free")
        shape_a = array_ops.shape(a)
    else:
        free_dims_static = None
        shape_a = array_ops.shape(a)
        rank_a = array_ops.rank(a)
        axes = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
        axes = array_ops.where(axes >= 0, axes, axes + rank_a)
        free, _ = set_ops.setdiff1d(math_ops.range(rank_a), axes, dtypes.int32)
    free_dims = gather(shape_a, free)
    axes_dims = gather(shape_a, axes)
    prod_free_dims = math_ops.reduce_prod(free_dims)
    prod_axes_dims = math_ops.reduce_prod(axes_dims)
    if flipped:
        perm = joining_ops.concat([axes, free], 0)
        new_shape = joining_ops.stack([prod_axes_dims, prod_free_dims])
    else:
        perm = joining_ops.concat([free, axes], 0)
        new_shape = joining_ops.stack([prod_free_dims, prod_axes_dims])
    return array_ops.reshape(transpose(a, perm), new_shape), free_dims, free_dims_static


def tensordot(a, b, axes, name=None):
    """The sum of products of `a` and `b` over `axes`: a count of a's last and b's first
    axes, a pair of axis lists, or a tensor of such a pair. As TensorFlow builds it: each
    operand transposed and reshaped to a matrix, one MatMul, and a reshape to the free
    dimensions."""
    with graph_of(a, b, axes).name_scope(name or "Tensordot") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_matrix, a_free_dims, a_free_static = _tensordot_reshape(a, a_axes)
        b_matrix, b_free_dims, b_free_static = _tensordot_reshape(b, b_axes, True)
        product = matmul(a_matrix, b_matrix)
        if isinstance(a_free_dims, list) and isinstance(b_free_dims, list):
            if (product.shape.is_fully_defined()
                    and product.shape.as_list() == a_free_dims + b_free_dims):
                return product
            return array_ops.reshape(product, a_free_dims + b_free_dims, name=scope)
        a_free_dims = convert_to_tensor(a_free_dims, dtype=dtypes.int32)
        b_free_dims = convert_to_tensor(b_free_dims, dtype=dtypes.int32)
        product = array_ops.reshape(product, joining_ops.concat([a_free_dims, b_free_dims], 0),
                                    name=scope)
        if a_free_static is not None and b_free_static is not None:
            product.set_shape(a_free_static + b_free_static)
        return product
