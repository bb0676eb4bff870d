"""Sets of a vector's values: setdiff1d (TensorFlow's ListDiff op)."""

import collections

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_op, op_scope
from dtfnb.ops.shape_util import shape_error


def _list_diff_shape(op):
    for t in op.inputs:
        if t.shape.ndims not in (None, 1):
            raise shape_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")
    return [TensorShape([None]), TensorShape([None])]


define_op("ListDiff", _list_diff_shape)
ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])   # as TensorFlow names it
NotDifferentiable("ListDiff")


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The values of the vector `x` that are not in `y`, in their order in `x`, and their
    indices in `x`: (out, idx)."""
    with op_scope("ListDiff", name, x, y) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        index_dtype = dtypes.as_dtype(index_dtype)
        op = make_op("ListDiff", [x, y], [x.dtype.base_dtype, index_dtype], name=scope,
                     attrs={"T": x.dtype.base_dtype, "out_idx": index_dtype})
        return ListDiffOutput(*op.outputs)
