"""Grouping, ordering and checking: no_op, group, tuple, Assert."""

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.operation import Operation
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.array_ops import identity
from dtfnb.ops.building import graph_of, make_op

define_op("NoOp", lambda op: [])
NotDifferentiable("NoOp")
define_op("Assert", lambda op: [], stateful=True)
NotDifferentiable("Assert")


def no_op(name=None):
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
    """Identities of `tensors` that are available only once all of them are computed."""
    tensors = list(tensors)
    graph = graph_of(tensors)
    with graph.name_scope(name or "tuple"):
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        with graph.control_dependencies([gate]):
            return [None if t is None else identity(t) for t in tensors]


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """An op that fails with InvalidArgumentError, showing `data`, when `condition` is false.

    In a graph it runs only when something depends on it, e.g.::

        check = tf.Assert(tf.reduce_all(x > 0), [x])
        with tf.control_dependencies([check]):
            y = tf.log(x)

    `summarize` is how many entries of each tensor of `data` the message shows (default 3).
    """
    data = list(data)
    if not data:
        raise ValueError("Attr 'T' of 'Assert' Op passed list of length 0 less than minimum 1.")
    graph = graph_of(condition, data)
    with graph.as_default(), graph.name_scope(name or "Assert"):
        # TensorFlow converts `data` here to choose by dtype how to build the check, and
        # its op converts it again: both sets of constants show in its graphs.
        for x in data:
            convert_to_tensor(x)
        with graph.name_scope("Assert") as scope:
            condition = convert_to_tensor(condition, dtype=dtypes.bool_, name="condition")
            data = [convert_to_tensor(x, name=f"data_{i}") for i, x in enumerate(data)]
            return make_op("Assert", [condition, *data], [], name=scope,
                           attrs={"T": [x.dtype.base_dtype for x in data],
                                  "summarize": 3 if summarize is None else int(summarize)})
