"""Ref-variable ops: VariableV2, Assign, AssignAdd, AssignSub, the Scatter* updates,
CountUpTo, IsVariableInitialized."""

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape, scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import check_type, make_tensor, op_scope
from dtfnb.ops.shape_util import format_shape, merge_shapes, shape_error


def _merged_inputs(op):
    return [merge_shapes(op, op.inputs[0].shape, op.inputs[1].shape)]


define_op("VariableV2", lambda op: [op._raw_attr("shape")], stateful=True)
define_op("Assign", lambda op: [op.inputs[1].shape if not op.get_attr("validate_shape")
                                else merge_shapes(op, op.inputs[0].shape, op.inputs[1].shape)],
          stateful=True, ref_inputs=True)
define_op("AssignAdd", _merged_inputs, stateful=True, ref_inputs=True)
define_op("AssignSub", _merged_inputs, stateful=True, ref_inputs=True)
define_op("IsVariableInitialized", lambda op: [scalar()], stateful=True, ref_inputs=True)
define_op("CountUpTo", lambda op: [scalar()], stateful=True, ref_inputs=True)
define_op("StridedSliceAssign", lambda op: [op.inputs[0].shape], stateful=True,
          ref_inputs=True)
# Sparse updates of a ref: rows `indices` of the variable combined with `updates`.
SCATTER_OPS = ("ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
               "ScatterMax", "ScatterMin")


def _scatter_shape(op):
    """updates.shape must be indices.shape + ref.shape[1:] (or a scalar), as TensorFlow's."""
    ref, indices, updates = (t.shape for t in op.inputs)
    if ref.ndims is None or indices.ndims is None or updates.ndims in (None, 0):
        return [ref]
    expected = indices.concatenate(ref[1:])
    if updates.ndims != expected.ndims:
        raise shape_error(op, f"Shapes must be equal rank, but are {updates.ndims} and "
                          f"{expected.ndims}")
    for i, (got, want) in enumerate(zip(updates.as_list(), expected.as_list())):
        if got is not None and want is not None and got != want:
            raise shape_error(op, f"Dimension {i} in both shapes must be equal, but are "
                              f"{got} and {want}. Shapes are {format_shape(updates)} and "
                              f"{format_shape(expected)}.")
    return [ref]


for _op in SCATTER_OPS:
    define_op(_op, _scatter_shape, stateful=True, ref_inputs=True)
for _op in ("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
            "CountUpTo", *SCATTER_OPS):
    NotDifferentiable(_op)


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """Creates a VariableV2 op: a ref tensor that holds state across steps."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    return make_tensor("VariableV2", [], dtype._as_ref, name=name, attrs={
        "shape": as_shape(shape), "dtype": dtype, "container": container,
        "shared_name": shared_name})


def _check_ref(ref, op_name):
    if not ref.dtype.is_ref_dtype:
        raise TypeError(f"'{op_name}' Op requires that input 'ref' be a mutable tensor "
                        f"(e.g.: a tf.Variable)")


def _assigns_itself(ref):
    """TensorFlow's rule: what is no ref but has `assign` (a PartitionedVariable, whose
    parts are refs) assigns itself."""
    return not ref.dtype.is_ref_dtype and hasattr(ref, "assign")


def _update(op_type, ref, value, name, attrs):
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, op_type)
    # As TensorFlow's op builders do, a Python value becomes a constant in the op's scope.
    with op_scope(op_type, name, ref) as scope:
        value = convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        return make_tensor(op_type, [ref, value], ref.dtype, name=scope,
                           attrs={"T": ref.dtype.base_dtype, **attrs})


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Assigns `value` to the ref `ref`; returns `ref` once it holds the new value."""
    if _assigns_itself(ref):
        return ref.assign(value, name=name)
    validate = True if validate_shape is None else bool(validate_shape)
    return _update("Assign", ref, value, name,
                   # Assign's own default, unlike AssignAdd's, is to lock.
                   {"validate_shape": validate,
                    "use_locking": True if use_locking is None else bool(use_locking)})


def strided_slice_assign(ref, begin, end, strides, value, name=None, begin_mask=0,
                         end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
    """Assigns `value` (broadcast) to the strided slice of the ref `ref` that `begin`,
    `end`, `strides` and the masks describe (see tf.strided_slice); returns `ref`."""
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, "StridedSliceAssign")
    with op_scope("StridedSliceAssign", name, ref) as scope:
        value = convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        return make_tensor("StridedSliceAssign", [ref, begin, end, strides, value], ref.dtype,
                           name=scope, attrs={
                               "T": ref.dtype.base_dtype, "Index": begin.dtype,
                               "begin_mask": begin_mask, "end_mask": end_mask,
                               "ellipsis_mask": ellipsis_mask, "new_axis_mask": new_axis_mask,
                               "shrink_axis_mask": shrink_axis_mask})


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to the ref `ref`; returns `ref` once it holds the new value."""
    if _assigns_itself(ref):
        return ref.assign_add(value, name=name)
    return _update("AssignAdd", ref, value, name, {"use_locking": bool(use_locking)})


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from the ref `ref`; returns `ref` once it holds the new value."""
    if _assigns_itself(ref):
        return ref.assign_sub(value, name=name)
    return _update("AssignSub", ref, value, name, {"use_locking": bool(use_locking)})


def is_variable_initialized(ref, name=None):
    """A bool tensor: whether the ref `ref` has been assigned a value yet."""
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, "IsVariableInitialized")
    return make_tensor("IsVariableInitialized", [ref], dtypes.bool_,
                       name=name or "IsVariableInitialized", attrs={"dtype": ref.dtype.base_dtype})


def count_up_to(ref, limit, name=None):
    """Increments `ref` until it reaches `limit` (then OutOfRangeError); gives the old value.

    An epoch counter of the input producers is one of these."""
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, "CountUpTo")
    dtype = check_type(ref.dtype, (dtypes.int32, dtypes.int64), "ref")
    return make_tensor("CountUpTo", [ref], dtype, name=name or "CountUpTo",
                       attrs={"limit": int(limit), "T": dtype})


def _scatter(op_type, ref, indices, updates, use_locking, name):
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, op_type)
    with op_scope(op_type, name, ref) as scope:
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, dtype=ref.dtype.base_dtype, name="updates")
        return make_tensor(op_type, [ref, indices, updates], ref.dtype, name=scope,
                           attrs={"T": ref.dtype.base_dtype, "Tindices": indices.dtype,
                                  "use_locking": use_locking})


def _scatter_function(op_type, locks_by_default):
    def scatter(ref, indices, updates, use_locking=locks_by_default, name=None):
        return _scatter(op_type, ref, indices, updates, use_locking, name)
    scatter.__name__ = scatter.__qualname__ = \
        "scatter_" + op_type[len("Scatter"):].lower()
    scatter.__doc__ = (f"{op_type}: rows `indices` of the variable combined with "
                       "`updates`; returns the variable's ref.")
    return scatter


# ScatterUpdate alone locks by default, as in TensorFlow.
scatter_update = _scatter_function("ScatterUpdate", True)
scatter_add = _scatter_function("ScatterAdd", False)
scatter_sub = _scatter_function("ScatterSub", False)
scatter_mul = _scatter_function("ScatterMul", False)
scatter_div = _scatter_function("ScatterDiv", False)
scatter_max = _scatter_function("ScatterMax", False)
scatter_min = _scatter_function("ScatterMin", False)
