"""Slots: the non-trainable variables kept beside a variable (or a tensor), named
`<primary>/<name>`, as optimizers and moving averages make them (TensorFlow's
slot_creator)."""

import contextlib

from dtfnb.framework.tensor import Tensor
from dtfnb.ops.variable_scope import get_variable, variable_scope
from dtfnb.ops.variables import Variable


def create_slot(primary, initializer, shape, dtype, name, colocate_with_primary=True):
    """A non-trainable variable `<primary>/<name>`, colocated with `primary` unless told
    otherwise; a tensor `initializer` gives its value (and its shape and dtype: then
    `shape` and `dtype` are None).

    As in TensorFlow, a slot is never partitioned itself, and the slot of a part of a
    partitioned variable is saved as the same slice of `<full name>/<slot's name
    after the primary's>`.
    """
    graph = primary.graph
    colocation = (graph.colocate_with(primary.op) if colocate_with_primary
                  else contextlib.nullcontext())
    # Like TensorFlow's init_scope: a slot never depends on the surrounding control inputs.
    with graph.as_default(), graph.control_dependencies(None), \
            variable_scope(None, default_name=f"{primary.op.name}/{name}") as scope, \
            colocation:
        scope.set_partitioner(None)  # this scope's own copy: the enclosing one keeps its
        known = initializer.shape if isinstance(initializer, Tensor) else shape
        slot = get_variable("", shape=shape, dtype=dtype, initializer=initializer,
                            trainable=False, validate_shape=known.is_fully_defined())
    info = primary._get_save_slice_info() if isinstance(primary, Variable) else None
    rank = slot.shape.ndims
    if info is not None and rank != 0:
        # TensorFlow's cut, which inside a variable scope keeps more than the slot's name
        slot_name = slot.name[len(primary.op.name) + 1:-2]
        slot._set_save_slice_info(Variable.SaveSliceInfo(
            f"{info.full_name}/{slot_name}", info.full_shape[:rank], info.var_offset[:rank],
            info.var_shape[:rank]))
    return slot
