"""Grouping, ordering and checking (no_op, group, tuple, the Assert op), and the primitive
ops of TF1 control flow that cond and while_loop are built from."""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.operation import Operation
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.array_ops import identity
from dtfnb.ops.building import graph_of, make_op, make_tensor
from dtfnb.ops.shape_util import shape_error

define_op("NoOp", lambda op: [])
NotDifferentiable("NoOp")
define_op("Assert", lambda op: [], stateful=True)
NotDifferentiable("Assert")


def no_op(name=None):
    """An op that does nothing: a node for control dependencies to meet at."""
    return make_op("NoOp", [], [], name=name or "NoOp")


def _as_op(item):
    return item if isinstance(item, Operation) else getattr(item, "op", item)


def group(*inputs, name=None):
    """An op that runs after all `inputs` (ops or tensors); it has no output.

    As in TensorFlow it asks for its inputs' device when they share one (so that
    global_variables_initializer() runs on the variables' task); across devices it
    waits for one NoOp per device, which gathers that device's inputs.
    """
    ops = [_as_op(i) for i in inputs]
    graph = ops[0].graph if ops else graph_of()
    by_device = {}
    for op in ops:
        by_device.setdefault(op.device, []).append(op)
    with graph.name_scope(name or "group_deps") as scope:
        if len(by_device) > 1:
            ops = [_no_op_after(graph, by_device[device], device, "NoOp")
                   for device in sorted(by_device)]
            by_device = {"": ops}
    return _no_op_after(graph, ops, next(iter(by_device), ""), scope)


def _no_op_after(graph, ops, device, name):
    with graph.control_dependencies(ops), graph.device(device):
        return make_op("NoOp", [], [], name=name, graph=graph)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TensorFlow's name
    """Identities of `tensors` that are available only once all of them are computed (of
    an IndexedSlices, the identity of its values)."""
    def gated(t):
        if isinstance(t, IndexedSlices):
            return IndexedSlices(identity(t.values), t.indices, t.dense_shape)
        return identity(t)
    tensors = list(tensors)
    graph = graph_of([t.values if isinstance(t, IndexedSlices) else t for t in tensors])
    with graph.name_scope(name or "tuple"):
        gate = group(*[t.op if isinstance(t, IndexedSlices) else t
                       for t in tensors if t is not None], *(control_inputs or []))
        with graph.control_dependencies([gate]):
            return [None if t is None else gated(t) for t in tensors]


def make_assert(condition, data, summarize=None, name="Assert"):
    """The Assert op alone (TensorFlow's generated `_assert`): it fails its step with
    InvalidArgumentError, showing `data`, when `condition` is false. tf.Assert
    (check_ops) decides whether it runs guarded by a cond; `summarize` is how many entries
    of each tensor of `data` the message shows (default 3)."""
    data = list(data)
    if not data:
        raise ValueError("Attr 'T' of 'Assert' Op passed list of length 0 less than minimum 1.")
    graph = graph_of(condition, data)
    with graph.as_default(), graph.name_scope(name) as scope:
        condition = convert_to_tensor(condition, dtype=dtypes.bool_, name="condition")
        data = [convert_to_tensor(x, name=f"data_{i}") for i, x in enumerate(data)]
        return make_op("Assert", [condition, *data], [], name=scope,
                       attrs={"T": [x.dtype.base_dtype for x in data],
                              "summarize": 3 if summarize is None else int(summarize)})


def with_dependencies(dependencies, output_tensor, name=None):
    """`output_tensor`, available only once every op of `dependencies` has run."""
    graph = graph_of(output_tensor)
    with graph.name_scope(name or "control_dependency") as scope:
        with graph.colocate_with(_as_op(output_tensor)):
            with graph.control_dependencies(dependencies):
                output_tensor = convert_to_tensor(output_tensor)
                return identity(output_tensor, name=scope)


# -- the primitives of TF1 control flow -------------------------------------------------
#
# Switch forwards its data to output 1 when `pred` holds, else to output 0; the other
# output is *dead*, and so is every op downstream of it except a Merge, which forwards
# whichever input is alive. Enter passes a value into a loop's frame, Exit out of it,
# NextIteration on to the next iteration; LoopCond is the loop's predicate. The executor
# gives these ops their meaning (runtime/frames.py); their kernels only forward values.


def _same_shapes(count):
    return lambda op: [op.inputs[0].shape] * count


def _scalar_pred(op, index):
    pred = op.inputs[index]
    if pred.shape.ndims not in (None, 0):
        raise shape_error(op, f"Shape must be rank 0 but is rank {pred.shape.ndims}")


def _switch_shape(op):
    _scalar_pred(op, 1)
    return [op.inputs[0].shape] * 2


def _merge_shape(op):
    shape = op.inputs[0].shape
    for tensor in op.inputs[1:]:
        other = tensor.shape
        if shape.ndims != other.ndims or shape.ndims is None:
            shape = unknown_shape()
            break
        shape = TensorShape([a if a == b else None
                             for a, b in zip(shape.as_list(), other.as_list())])
    return [shape, scalar()]


def _loop_cond_shape(op):
    _scalar_pred(op, 0)
    return [scalar()]


# The forms without "Ref" take a variable's ref as its value: they are not placed with it.
for _op_type in ("Switch", "RefSwitch"):
    define_op(_op_type, _switch_shape, ref_inputs=_op_type == "RefSwitch")
for _op_type in ("Merge", "RefMerge"):
    define_op(_op_type, _merge_shape, ref_inputs=_op_type == "RefMerge")
for _op_type in ("Enter", "RefEnter"):  # a loop variable's shape is its invariant's
    define_op(_op_type, lambda op: [op.inputs[0].shape if op.get_attr("is_constant")
                                    else unknown_shape()], ref_inputs=_op_type == "RefEnter")
for _op_type in ("Exit", "RefExit", "NextIteration", "RefNextIteration"):
    define_op(_op_type, _same_shapes(1), ref_inputs=_op_type.startswith("Ref"))
define_op("LoopCond", _loop_cond_shape)
NotDifferentiable("LoopCond")


def _forward(op_type, data, name, attrs=None):
    """A one-output op that forwards `data` (a ref stays a ref)."""
    return make_tensor(op_type, [data], data.dtype, name=name or op_type,
                       attrs={"T": data.dtype.base_dtype, **(attrs or {})})


def switch(data, pred, dtype=None, name=None):
    """(output_false, output_true): `data` comes out of the second when `pred` holds."""
    graph = graph_of(data, pred)
    with graph.as_default(), graph.name_scope(name or "Switch") as scope:
        data = convert_to_tensor(data, dtype=dtype, name="data")
        pred = convert_to_tensor(pred, name="pred")
        return _switch("Switch", data, pred, scope)


def ref_switch(data, pred, name=None):
    """Forwards the ref `data` to output 1 if `pred` is true, else to output 0."""
    return _switch("RefSwitch", data, pred, name or "RefSwitch")


def _switch(op_type, data, pred, name):
    if pred.dtype.base_dtype != dtypes.bool_:
        raise TypeError(f"Input 'pred' of '{op_type}' Op has type {pred.dtype.name} that does "
                        "not match expected type of bool.")
    op = make_op(op_type, [data, pred], [data.dtype] * 2, name=name,
                 attrs={"T": data.dtype.base_dtype})
    return op.outputs[0], op.outputs[1]


def switch_ref_or_tensor(data, pred, name="Switch"):
    """switch() for a value or a variable's ref, colocated with the data it forwards."""
    data = convert_to_tensor(data, name="data")
    with data.graph.colocate_with(data.op, ignore_existing=True):
        if data.dtype.is_ref_dtype:
            return ref_switch(data, pred, name=name)
        return switch(data, pred, name=name)


def merge(inputs, name=None):
    """(value, value_index): the one input that is alive, and its position."""
    if any(x is None for x in inputs):
        raise ValueError(f"At least one of the merge inputs is None: {inputs}")
    graph = graph_of(inputs)
    with graph.as_default(), graph.name_scope(name or "Merge") as scope:
        inputs = [convert_to_tensor(x) for x in inputs]
        op_type = "RefMerge" if all(x.dtype.is_ref_dtype for x in inputs) else "Merge"
        dtype = inputs[0].dtype if op_type == "RefMerge" else inputs[0].dtype.base_dtype
        op = make_op(op_type, inputs, [dtype, dtypes.int32], name=scope,
                     attrs={"T": dtype.base_dtype, "N": len(inputs)})
        return op.outputs[0], op.outputs[1]


def enter(data, frame_name, is_constant=False, parallel_iterations=10, use_ref=True,
          name=None):
    """`data`, made available to the loop frame `frame_name` (to every iteration of it
    when `is_constant`)."""
    data = convert_to_tensor(data)
    ref = data.dtype.is_ref_dtype and use_ref
    op_type = "RefEnter" if ref else "Enter"
    return make_tensor(op_type, [data], data.dtype if ref else data.dtype.base_dtype,
                       name=name or op_type,
                       attrs={"T": data.dtype.base_dtype, "frame_name": frame_name,
                              "is_constant": bool(is_constant),
                              "parallel_iterations": int(parallel_iterations)})


def exit(data, name=None):  # noqa: A001 - TensorFlow's name
    """`data`, passed out of its loop frame to the enclosing one."""
    data = convert_to_tensor(data)
    return _forward("RefExit" if data.dtype.is_ref_dtype else "Exit", data, name)


def next_iteration(data, name=None):
    """`data`, passed on to the next iteration of its loop frame."""
    data = convert_to_tensor(data)
    return _forward("RefNextIteration" if data.dtype.is_ref_dtype else "NextIteration",
                    data, name)


def loop_cond(pred, name=None):
    """The predicate of a loop: its Switches forward to the body while it holds."""
    pred = convert_to_tensor(pred)
    if pred.dtype.base_dtype != dtypes.bool_:
        raise TypeError(f"Input 'input' of 'LoopCond' Op has type {pred.dtype.name} that "
                        "does not match expected type of bool.")
    return make_tensor("LoopCond", [pred], dtypes.bool_, name=name or "LoopCond")
