"""Ref-variable ops: VariableV2, Assign, AssignAdd, AssignSub, CountUpTo,
IsVariableInitialized."""

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape, scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_tensor


def _same_as_input(op):
    return [op.inputs[0].shape]


define_op("VariableV2", lambda op: [op._raw_attr("shape")], stateful=True)
define_op("Assign", lambda op: [op.inputs[1].shape if not op.get_attr("validate_shape")
                                else op.inputs[0].shape.merge_with(op.inputs[1].shape)],
          stateful=True, ref_inputs=True)
define_op("AssignAdd", _same_as_input, stateful=True, ref_inputs=True)
define_op("AssignSub", _same_as_input, stateful=True, ref_inputs=True)
define_op("IsVariableInitialized", lambda op: [scalar()], stateful=True, ref_inputs=True)
define_op("CountUpTo", lambda op: [scalar()], stateful=True, ref_inputs=True)
for _op in ("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
            "CountUpTo"):
    NotDifferentiable(_op)


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    dtype = dtypes.as_dtype(dtype).base_dtype
    return make_tensor("VariableV2", [], dtype._as_ref, name=name, attrs={
        "shape": as_shape(shape), "dtype": dtype, "container": container,
        "shared_name": shared_name})


def _check_ref(ref, op_name):
    if not ref.dtype.is_ref_dtype:
        raise TypeError(f"'{op_name}' Op requires that input 'ref' be a mutable tensor "
                        f"(e.g.: a tf.Variable)")


def _update(op_type, ref, value, name, attrs):
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, op_type)
    graph = ref.graph
    # As TensorFlow's op builders do, a Python value becomes a constant in the op's scope.
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        value = convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        if op_type != "Assign" or attrs.get("validate_shape", True):
            if not ref.shape.is_compatible_with(value.shape) and op_type != "Assign":
                raise ValueError(f"Shapes {ref.shape} and {value.shape} are incompatible")
        return make_tensor(op_type, [ref, value], ref.dtype, name=scope,
                           attrs={"T": ref.dtype.base_dtype, **attrs})


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    validate = True if validate_shape is None else bool(validate_shape)
    ref_tensor = getattr(ref, "_variable", ref)
    value_tensor = convert_to_tensor(value, dtype=ref_tensor.dtype.base_dtype)
    if validate and not ref_tensor.shape.is_compatible_with(value_tensor.shape):
        raise ValueError(f"Dimensions must be equal, but are {ref_tensor.shape} and "
                         f"{value_tensor.shape} for '{name or 'Assign'}' (op: 'Assign')")
    return _update("Assign", ref, value_tensor, name,
                   # Assign's own default, unlike AssignAdd's, is to lock.
                   {"validate_shape": validate,
                    "use_locking": True if use_locking is None else bool(use_locking)})


def assign_add(ref, value, use_locking=None, name=None):
    return _update("AssignAdd", ref, value, name, {"use_locking": bool(use_locking)})


def assign_sub(ref, value, use_locking=None, name=None):
    return _update("AssignSub", ref, value, name, {"use_locking": bool(use_locking)})


def is_variable_initialized(ref, name=None):
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, "IsVariableInitialized")
    return make_tensor("IsVariableInitialized", [ref], dtypes.bool_,
                       name=name or "IsVariableInitialized", attrs={"dtype": ref.dtype.base_dtype})


def count_up_to(ref, limit, name=None):
    """Increments `ref` until it reaches `limit` (then OutOfRangeError); gives the old value.

    An epoch counter of the input producers is one of these."""
    ref = getattr(ref, "_variable", ref)
    _check_ref(ref, "CountUpTo")
    dtype = ref.dtype.base_dtype
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'ref' has DataType {dtype.name} not in "
                        "list of allowed values: int32, int64")
    return make_tensor("CountUpTo", [ref], dtype, name=name or "CountUpTo",
                       attrs={"limit": int(limit), "T": dtype})
