"""tf.gradients: reverse-mode differentiation that adds gradient ops to the graph.

As in micrograd's `backward`: collect the ops on a path from `xs` to `ys`, then sweep
them from the ys back, each once all its consumers are done (in TensorFlow's order),
calling each op type's registered gradient (framework/registry.py) with the summed
gradients of its outputs.
"""

import collections
import contextlib

import numpy as np

from dtfnb.base import dtypes
from dtfnb.framework import registry
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices

# TensorFlow 2.21's words (no space before the op's name, as in TensorFlow).
_NO_GRADIENT = (
    "No gradient defined for operation'{op.name}' (op type: {op.type}). In general every "
    "operation must have an associated `@tf.RegisterGradient` for correct autodiff, which "
    "this op is lacking. If you want to pretend this operation is a constant in your "
    "program, you may insert `tf.stop_gradient`. This can be useful to silence the error in "
    "cases where you know gradients are not needed, e.g. the forward pass of "
    "tf.custom_gradient. Please see more details in "
    "https://www.tensorflow.org/api_docs/python/tf/custom_gradient.")


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None):
    """Symbolic partial derivatives of sum(ys) with respect to each of `xs`.

    Args:
      ys: a Tensor or list of Tensors to differentiate.
      xs: a Tensor, Variable, or list of them; a Variable's gradient is the gradient
        with respect to every read of it.
      grad_ys: optional gradients of `ys` (same structure); ones by default.
      name: the name scope of the gradient ops ("gradients").
      colocate_gradients_with_ops: place each gradient op with the op it differentiates.
      gate_gradients: make an op's input gradients available only together.
      aggregation_method: accepted for compatibility; gradients are summed with AddN.
      stop_gradients: Tensors treated as constants: nothing flows back through them.

    Returns:
      A list with one gradient per x, None where x does not reach any y: a Tensor, or an
      IndexedSlices where only rows of x reach the ys (through tf.gather or
      tf.nn.embedding_lookup), as TensorFlow gives it.

    Raises:
      LookupError: an op between xs and ys has no registered gradient.
      ValueError: xs and ys are not from one graph, or grad_ys do not match ys.
    """
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [_as_x(x) for x in _as_list(xs)]
    stops = [convert_to_tensor(t) for t in _as_list(stop_gradients)]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    grad_ys = _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    graph = ys[0].graph
    for t in ys + xs + stops:
        if t.graph is not graph:
            raise ValueError(f"{t!r} must be from the same graph as {ys[0]!r}.")

    order = _ops_between(xs, ys)
    between = set(order)
    stop_ops = {t.op for t in stops}
    grads = {}  # tensor -> list of gradient tensors flowing into it

    with graph.name_scope(name or "gradients"):
        for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
            if grad_y is None:
                grad_y = _ones_like(graph, y, f"grad_ys_{i}")
            else:
                grad_y = convert_to_tensor(grad_y, dtype=y.dtype.base_dtype)
            grads.setdefault(y, []).append(grad_y)

        for op in _backward_order(order, ys):
            with _colocated(graph, op, colocate_gradients_with_ops):
                out_grads = [_sum_grads(graph, grads, t) for t in op.outputs]
            if op in stop_ops or all(g is None for g in out_grads):
                continue
            if not any(t.op in between for t in op.inputs):
                continue  # a source (placeholder, variable, constant): nothing to pass on
            try:
                grad_fn = registry.gradient_function(op.type)
            except LookupError:
                raise LookupError(_NO_GRADIENT.format(op=op)) from None
            if grad_fn is None:
                continue
            with _colocated(graph, op, colocate_gradients_with_ops):
                # An output nobody used gets a zero gradient, so the op's gradient
                # function always sees one gradient per output.
                out_grads = [g if g is not None or not _carries_gradients(t)
                             else _create(graph, "ZerosLike", [t], t.dtype, {},
                                          name="zeros_like")
                             for t, g in zip(op.outputs, out_grads)]
                with graph.name_scope(op.name + "_grad"):
                    in_grads = grad_fn(op, *out_grads)
                    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) \
                        else [in_grads]
                    if len(in_grads) != len(op.inputs):
                        raise ValueError(f"Num gradients {len(in_grads)} generated for op "
                                         f"{op.name} do not match num inputs "
                                         f"{len(op.inputs)}")
                    # Only gradients that flow on are gated: TensorFlow gates them all, which
                    # forces e.g. the unused gradient of an input batch to be computed.
                    in_grads = [g if t.op in between else None
                                for t, g in zip(op.inputs, in_grads)]
                    if gate_gradients and sum(g is not None for g in in_grads) > 1:
                        in_grads = _gate(graph, in_grads)
            for t, g in zip(op.inputs, in_grads):
                if g is None or t.op not in between:
                    continue
                if isinstance(g, IndexedSlices):
                    grads.setdefault(t, []).append(g)
                    continue
                g = convert_to_tensor(g)
                try:
                    g.set_shape(t.shape)
                except ValueError:
                    raise ValueError(
                        "Incompatible shapes between op input and calculated input gradient. "
                        f"Forward operation: {op.name}. Input index: {list(op.inputs).index(t)}"
                        f". Original input shape: {t.shape}. Calculated input gradient "
                        f"shape: {g.shape}") from None
                grads.setdefault(t, []).append(g)

        return [_sum_grads(graph, grads, x) for x in xs]


def _as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_x(x):
    """A Variable differentiates through its ref tensor, which every read of it consumes."""
    if hasattr(x, "_variable"):
        return x._variable
    return convert_to_tensor(x)


def _carries_gradients(tensor):
    """TensorFlow's IsTrainable: a gradient flows only through floats, complex numbers,
    resources and variants (not through a Shape's integers, say), and only those get a
    zero gradient when unused."""
    dtype = tensor.dtype.base_dtype
    return dtype.is_floating or dtype.is_complex or dtype in (dtypes.resource, dtypes.variant)


def _ops_between(xs, ys):
    """Ops on a path that carries gradients from some x to some y, in topological order
    (inputs first). Which ops are between decides the order of the backward walk."""
    reached = set()
    frontier = [x.op for x in xs]
    while frontier:
        op = frontier.pop()
        if op in reached:
            continue
        reached.add(op)
        for out in op.outputs:
            if _carries_gradients(out):
                frontier.extend(c for c in out._consumers if c not in reached)
    order, seen = [], set()
    for y in ys:
        if y.op not in reached or y.op in seen:
            continue
        seen.add(y.op)
        stack = [(y.op, iter(y.op.inputs))]
        while stack:  # iterative post-order DFS: deep graphs must not hit the recursion limit
            op, inputs = stack[-1]
            for t in inputs:
                if t.op in reached and t.op not in seen:
                    seen.add(t.op)
                    stack.append((t.op, iter(t.op.inputs)))
                    break
            else:
                stack.pop()
                order.append(op)
    return order


def _backward_order(order, ys):
    """The ops of `order` (topological) in the order TensorFlow's gradients visits them:
    from the ys, an op once every op between that consumes its outputs has been visited
    (a queue over pending counts). The order decides where the gradients of several
    paths meet in a sum, e.g. which rows come first in two tf.gather gradients
    concatenated. Ops on a cycle (a while loop's) never become ready: they follow in
    reverse topological order, and their gradients refuse."""
    between = set(order)
    pending = collections.Counter(t.op for op in order for t in op.inputs if t.op in between)
    queue = collections.deque()
    for y in ys:
        if y.op in between and pending[y.op] == 0 and y.op not in queue:
            queue.append(y.op)
    visited = set()
    while queue:
        op = queue.popleft()
        visited.add(op)
        yield op
        for t in op.inputs:
            if t.op in between:
                pending[t.op] -= 1
                if pending[t.op] == 0:
                    queue.append(t.op)
    yield from (op for op in reversed(order) if op not in visited)


def _sum_grads(graph, grads, tensor):
    """The total gradient into `tensor`, or None. Where several paths meet, Tensors are
    summed by an AddN (IndexedSlices among them made dense), and IndexedSlices alone stay
    sparse: their rows and indices concatenated, as TensorFlow aggregates them."""
    found = grads.get(tensor)
    if not found:
        return None
    if len(found) > 1:
        if all(isinstance(g, IndexedSlices) for g in found):
            found[:] = [_concat_slices(graph, found)]
        else:
            found[:] = [_add_n_by_device(graph, [convert_to_tensor(g) for g in found])]
    return found[0]


def _add_n_by_device(graph, tensors):
    """Their sum as TensorFlow's gradients make it: an AddN per device, colocated with its
    first summand, then one AddN of those where there are several."""
    def add_n(parts):
        if len(parts) == 1:
            return parts[0]
        return _create(graph, "AddN", parts, parts[0].dtype, {"N": len(parts)})
    by_device = {}
    for t in tensors:
        by_device.setdefault(t.device or "", []).append(t)
    sums = []
    for device in sorted(by_device):
        with graph.colocate_with(by_device[device][0].op, ignore_existing=True):
            sums.append(add_n(by_device[device]))
    return add_n(sums)


def _concat_slices(graph, slices):
    """One IndexedSlices of all the rows of `slices` (indices as int64 where they mix)."""
    def as_int64(indices):
        if len(index_types) == 1 or indices.dtype.base_dtype == dtypes.int64:
            return indices
        return graph.create_op("Cast", [indices], [dtypes.int64], name="Cast",
                               attrs={"SrcT": indices.dtype.base_dtype,
                                      "DstT": dtypes.int64, "Truncate": False}).outputs[0]

    def concat(parts):
        axis = _constant(graph, 0, dtypes.int32, "concat/axis")
        return _create(graph, "ConcatV2", parts + [axis], parts[0].dtype,
                       {"N": len(parts), "Tidx": dtypes.int32}, name="concat")

    index_types = {s.indices.dtype.base_dtype for s in slices}
    return IndexedSlices(concat([s.values for s in slices]),
                         concat([as_int64(s.indices) for s in slices]), slices[0].dense_shape)


# The few ops the sweep itself adds are created by type name: framework/ sits below
# ops/ in the layers, and these types are defined there (math_ops, array_ops).

def _create(graph, op_type, inputs, dtype, attrs, name=None):
    dtype = dtype.base_dtype
    return graph.create_op(op_type, inputs, [dtype], name=name,
                           attrs={"T": dtype, **attrs}).outputs[0]


def _constant(graph, value, dtype, name):
    value = np.asarray(value, dtype.as_numpy_dtype)
    return graph.create_op("Const", [], [dtype], name=name,
                           attrs={"value": value, "dtype": dtype}).outputs[0]


def _ones_like(graph, y, name):
    """tf.ones(tf.shape(y), name=name), TensorFlow's default grad_ys: a Fill named `name`
    of a Const one inside its scope (the Shape is a Const when static)."""
    dtype = y.dtype.base_dtype
    if y.shape.is_fully_defined():
        shape = _constant(graph, y.shape.as_list(), dtypes.int32, "Shape")
    else:
        shape = graph.create_op("Shape", [y], [dtypes.int32], name="Shape",
                                attrs={"T": dtype, "out_type": dtypes.int32}).outputs[0]
    with graph.name_scope(name) as scope:
        one = _constant(graph, 1, dtype, "Const")
        return graph.create_op("Fill", [shape, one], [dtype], name=scope,
                               attrs={"T": dtype, "index_type": dtypes.int32}).outputs[0]


def _gate(graph, tensors):
    """tf.tuple of `tensors` as TensorFlow's gradients make it: a `group_deps` NoOp after
    all of them, and each (an IndexedSlices' values) through an Identity named
    `control_dependency`, colocated with it, that waits for the group."""
    def after(t):
        if isinstance(t, IndexedSlices):
            return IndexedSlices(after(t.values), t.indices, t.dense_shape)
        with graph.name_scope("control_dependency") as scope, graph.colocate_with(t.op), \
                graph.control_dependencies([gate]):
            return _create(graph, "Identity", [t], t.dtype, {}, name=scope)
    with graph.name_scope("tuple"):
        ops = sorted({t.op for t in tensors if t is not None}, key=lambda op: op._id)
        with graph.control_dependencies(ops):
            gate = graph.create_op("NoOp", [], [], name="group_deps")
        return [None if t is None else after(t) for t in tensors]


def _colocated(graph, op, colocate):
    return graph.colocate_with(op) if colocate else contextlib.nullcontext()
