"""Graph: a dataflow graph under construction, and the per-thread default graph.

`Graph.create_op` is the one choke point where every op gets its unique name,
control dependencies, device (from the device stack and functions), colocation
and container, and its output shapes.
"""

import contextlib
import re
import threading

from dtfnb.base import device_spec
from dtfnb.framework import registry, versions
from dtfnb.framework.operation import Operation
from dtfnb.framework.tensor import Tensor
from dtfnb.protos import graph_pb2


class _Stacks:
    """What device, colocation and control-dependency blocks push while ops are built."""

    def __init__(self):
        self.device = []      # strings (canonical specs), callables, or None
        self.colocation = []
        self.control = []     # _ControlContext per block; None clears outer ones


class _ThreadLocalStacks(threading.local, _Stacks):
    """Each thread's own stacks (after switch_to_thread_local)."""


def _stack(field):
    return property(lambda graph: getattr(graph._stacks, field),
                    lambda graph, value: setattr(graph._stacks, field, value))


class Graph:
    """A TensorFlow 1 computation graph: the operations built by `tf.*` calls.

    Ops are added to the default graph (one per thread, created on first use)
    unless another is made the default with `as_default()`. Every op goes through
    `create_op`, which gives it a unique name in the current name scope and applies
    the device, colocation, control-dependency and container blocks open around it.
    A session sends the graph to its master as a GraphDef (`as_graph_def`).

    ```python
    g = tf.Graph()
    with g.as_default(), g.device("/cpu:0"):
        with tf.name_scope("layer"):
            w = tf.constant([[1.0, 2.0]], name="w")
            y = tf.matmul(w, w, transpose_b=True)
    print(y.name, y.op.device)       # layer/MatMul:0 /device:CPU:0
    print([op.name for op in g.get_operations()])
    with tf.Session(graph=g) as sess:
        print(sess.run(y))           # [[5.]]
    ```
    """

    _device_stack = _stack("device")
    _colocation_stack = _stack("colocation")
    _control_stack = _stack("control")
    # each thread's own, from the root, as TensorFlow's name stack
    _name_scope = property(lambda graph: getattr(graph._thread_names, "scope", ""),
                           lambda graph, scope: setattr(graph._thread_names, "scope", scope))

    def __init__(self):
        self._ops = []
        self._ops_by_name = {}
        self._names_in_use = {}
        self._thread_names = threading.local()
        self._stacks = _Stacks()     # shared by every thread, as in TensorFlow
        self._attr_scope_map = {}    # attrs every op created in an _attr_scope gets
        self._container = ""
        self._default_original_op = None  # the op new ops were rewritten from (TensorFlow's)
        self._collections = {}
        self._unfeedable = set()
        self._unfetchable = set()
        self._functions = []         # (op count when added, FunctionDef), for GraphDef deltas
        self._finalized = False
        self._control_flow_context = None  # the cond branch or loop body being built
        self._reduced_shape_cache = {}  # (shape, axes): what Sum's gradient tiles by
        self._lock = threading.RLock()
        self.seed = None
        # Where sessions placed this graph's nodes (name -> device), for what shows the
        # placement that happened (FileWriter.add_graph); the count says when it grew.
        self._placed_devices = {}
        self._placed_updates = 0

    # -- building -------------------------------------------------------------------

    def create_op(self, op_type, inputs, dtypes, name=None, attrs=None):
        """Adds an op; `dtypes` are its output dtypes. Returns the Operation."""
        registry.op_def(op_type)
        self._check_not_finalized()
        inputs = list(inputs)
        for tensor in inputs:
            if not isinstance(tensor, Tensor):
                raise TypeError(f"Input to {op_type} must be a Tensor, got {tensor!r}")
            if tensor.graph is not self:
                raise ValueError(f"Tensor {tensor!r} must be from the same graph as the "
                                 f"op being created ({op_type}).")
        with self._lock:
            name = self._op_name(name or op_type)
            input_ops = {t.op for t in inputs}
            control_inputs = self._current_control_inputs(input_ops)
            op = Operation(self, op_type, name, inputs, dtypes, attrs, control_inputs)
            op._id = len(self._ops)
            op._original_op = self._default_original_op
            try:
                shapes = registry.infer_shapes(op)
            except Exception:
                op._detach()  # a shape error leaves no half-built op in the graph
                raise
            for tensor, shape in zip(op._outputs, shapes):
                tensor._shape = shape
            self._record_control_seen(op)
            self._apply_device(op)
            if self._container and "container" in op._attrs and not op._attrs["container"]:
                op._attrs["container"] = self._container
            self._ops.append(op)
            self._ops_by_name[name] = op
        if self._control_flow_context is not None:
            # Inside a cond branch or a loop body the context routes the op's outside
            # inputs through Switch or Enter ops, named under the op's own scope.
            op._control_flow_context = self._control_flow_context
            with self.name_scope(name + "/"):
                self._control_flow_context.add_op(op)
        return op

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    def _op_name(self, name):
        if isinstance(name, bytes):  # TensorFlow's names are text; bytes are decoded
            name = name.decode()
        if name.endswith("/"):  # an absolute name, as returned by name_scope
            name = name[:-1]
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            # name_scope has already claimed it: counting it again would skip a suffix
            self._names_in_use.setdefault(name.lower(), 1)
            return name
        return self.unique_name(name)

    def unique_name(self, name, mark_as_used=True):
        """Return a unique operation name for `name`, in the current name scope: "name",
        then "name_1", "name_2"... (TensorFlow's rule, case-insensitively).
        """
        if self._name_scope:
            name = f"{self._name_scope}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count == 0:
            return name
        base = key
        while key in self._names_in_use:
            key = f"{base}_{count}"
            count += 1
        if mark_as_used:
            self._names_in_use[key] = 1
        return f"{name}_{count - 1}"

    def _apply_device(self, op):
        for key, value in self._attr_scope_map.items():
            op._attrs.setdefault(key, value)
        # An op that uses refs in place is built inside colocate_with(each), as
        # TensorFlow's op_def_library does: no device block applies to it then.
        refs = [t.op for t in op._inputs if t.dtype.is_ref_dtype] \
            if registry.op_def(op.type).ref_inputs else []
        if not refs:
            self._apply_device_functions(op)
        stack = self._colocation_stack + refs
        if stack:
            op._attrs["_class"] = sorted({g for c in stack for g in c.colocation_groups()})
            # the device of the innermost colocation op that has one
            device = next((c.device for c in reversed(stack) if c.device), None)
            if device is not None:
                op._set_device(device)

    @contextlib.contextmanager
    def _attr_scope(self, attrs):
        """Ops created in the block get `attrs` (those they set themselves stay)."""
        saved = self._attr_scope_map
        self._attr_scope_map = {**saved, **attrs}
        try:
            yield
        finally:
            self._attr_scope_map = saved

    def _apply_device_functions(self, op):
        """Applies the device stack to `op`, innermost block first (the importer uses it too)."""
        for entry in reversed(self._device_stack):  # innermost first, as TensorFlow does
            if entry is None:
                break
            if callable(entry):
                result = entry(op)
                if isinstance(result, device_spec.DeviceSpec):
                    result = result.to_string()
                if not isinstance(result, str):  # TensorFlow's message, None included
                    raise TypeError(f"Expected binary or unicode string, got {result!r}")
                op._set_device(result)
            else:
                op._set_device(device_spec.merge(entry, op.device))

    def _active_control_contexts(self):
        """The control_dependencies blocks in force, outermost first (None clears outer ones)."""
        stack = self._control_stack
        start = len(stack)
        while start and stack[start - 1] is not None:
            start -= 1
        return stack[start:]

    def _current_control_inputs(self, input_ops=()):
        # TensorFlow's rule: a block's ops are skipped when an input was itself created in
        # that block (it already depends on them), and so are ops that are data inputs.
        ops = []
        for ctx in self._active_control_contexts():
            if any(op in ctx.seen for op in input_ops):
                continue
            ops.extend(o for o in ctx.ops if o not in ops and o not in input_ops)
        return ops

    def _record_control_seen(self, op):
        for ctx in self._active_control_contexts():
            ctx.seen.add(op)

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    # -- context managers -----------------------------------------------------------

    @contextlib.contextmanager
    def as_default(self):
        """Returns a context manager that makes this `Graph` the default graph of this thread."""
        # The stack of the entering thread, whichever thread leaves it.
        stack = _default_graphs()
        stack.append(self)
        try:
            yield self
        finally:
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a scope; yields its full name ending in '/' ('' at top level)."""
        old = self._name_scope
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_scope = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self._name_scope = old

    def get_name_scope(self):
        """Returns the current name scope, e.g. "outer/inner" ("" at the top)."""
        return self._name_scope

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Pins ops created in the block: a device string, a DeviceSpec, a function or None."""
        entry = device_name_or_function
        if isinstance(entry, device_spec.DeviceSpec):
            entry = entry.to_string()
        elif isinstance(entry, str):
            entry = device_spec.canonical_name(entry)
        elif entry is not None and not callable(entry):
            raise TypeError(f"tf.device expects a string, a DeviceSpec, a function or None, "
                            f"got {entry!r}")
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created in the block take `op`'s device and colocation group."""
        if op is None:
            saved = self._colocation_stack
            self._colocation_stack = []
            try:
                yield
            finally:
                self._colocation_stack = saved
            return
        op = op.op if isinstance(op, Tensor) else getattr(op, "op", op)
        saved_devices, saved_coloc = self._device_stack, self._colocation_stack
        self._device_stack = []
        self._colocation_stack = ([] if ignore_existing else list(saved_coloc)) + [op]
        try:
            yield
        finally:
            self._device_stack, self._colocation_stack = saved_devices, saved_coloc

    @contextlib.contextmanager
    def _original_op(self, op):
        """Ops created in the block record `op` as the one they were made from."""
        saved = self._default_original_op
        self._default_original_op = op
        try:
            yield
        finally:
            self._default_original_op = saved

    @contextlib.contextmanager
    def container(self, container_name):
        """Returns a context manager that specifies the resource container to use: stateful
        ops created inside (variables, queues) live in `container_name` on their task,
        and `tf.Session.reset(target, [container_name])` frees them.
        """
        saved = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Returns a context manager that specifies control dependencies: ops created inside
        run only after `control_inputs`; None clears the dependencies of enclosing blocks.
        """
        if control_inputs is None:
            entry = None
        else:
            current = self._current_control_inputs()
            entry = _ControlContext()
            for item in control_inputs:
                op = self.as_graph_element(item)
                if isinstance(op, Tensor):
                    op = op.op
                if op not in current and op not in entry.ops:
                    entry.ops.append(op)
                    # TensorFlow 2's graphs mark every op used as a manual control input.
                    op._set_attr("_has_manual_control_dependencies", True)
        # As in TensorFlow, a block that clears the dependencies is outside any cond or
        # loop being built too: control flow's own Switch and Enter ops are made there.
        context = self._control_flow_context
        if entry is None:
            self._control_flow_context = None
        self._control_stack.append(entry)
        try:
            yield
        finally:
            self._control_stack.pop()
            self._control_flow_context = context

    # -- lookup -----------------------------------------------------------------------

    def get_operations(self):
        """Return the list of operations in the graph, in creation order."""
        return list(self._ops)

    def get_operation_by_name(self, name):
        """Returns the `Operation` with the given `name`; KeyError if there is none."""
        element = self.as_graph_element(name, allow_tensor=False, allow_operation=True)
        return element

    def get_tensor_by_name(self, name):
        """Returns the `Tensor` with the given `name` ("op:index")."""
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, an Operation, an object with `_as_graph_element`, or a name."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                kind = "Tensor" if isinstance(obj, Tensor) else "Operation"
                raise ValueError(f"{kind} {obj} is not an element of this graph.")
            if isinstance(obj, Tensor) and not allow_tensor or \
                    isinstance(obj, Operation) and not allow_operation:
                raise TypeError(_unconvertible(obj, allow_tensor, allow_operation))
            return obj
        if isinstance(obj, bytes):  # as TensorFlow's compat.as_str
            obj = obj.decode()
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation)
        raise TypeError(_unconvertible(obj, allow_tensor, allow_operation))

    def _element_by_name(self, name, allow_tensor, allow_operation):
        if ":" in name and allow_tensor:
            op_name, _, index = name.partition(":")
            try:
                index = int(index)
            except ValueError:
                raise ValueError(f"The name {name!r} looks a like a Tensor name, but is not a "
                                 "valid one. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\".") from None
            if op_name not in self._ops_by_name:
                raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                               f"The operation, '{op_name}', does not exist in the graph.")
            outputs = self._ops_by_name[op_name].outputs
            if index >= len(outputs):
                raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                               f"The operation, '{op_name}', exists but only has "
                               f"{len(outputs)} outputs.")
            return outputs[index]
        if ":" not in name and allow_operation:
            if name not in self._ops_by_name:
                raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
            return self._ops_by_name[name]
        if ":" not in name:
            raise ValueError(f"The name '{name}' refers to an Operation, not a Tensor. Tensor "
                             "names must be of the form \"<op_name>:<output_index>\".")
        raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a Operation.")

    # -- collections ----------------------------------------------------------------

    def add_to_collection(self, name, value):
        """Stores `value` in the collection with the given `name`."""
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        """Stores `value` in the collections given by `names` (each once)."""
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, key):
        """Returns the list of values in the collection `key`, to change it in place."""
        return self._collections.setdefault(key, [])

    def get_collection(self, key, scope=None):
        """Returns a copy of the list of values in the collection `key`; with `scope`, only
        the values whose `name` starts with it (a regular expression).
        """
        items = self._collections.get(key, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items
                if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self):
        """Returns the names of the collections of this graph."""
        return [key for key in self._collections if isinstance(key, str)]

    def clear_collection(self, name):
        """Clears all values in the collection `name`."""
        self._collections.pop(name, None)

    # -- feeding, finalizing, export ------------------------------------------------

    def prevent_feeding(self, tensor):
        """Marks the given `tensor` as unfeedable in this graph."""
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor):
        """Returns True if and only if `tensor` is feedable."""
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        """Marks the given `op` as unfetchable in this graph."""
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op):
        """Returns True if and only if `tensor_or_op` is fetchable."""
        return getattr(tensor_or_op, "op", tensor_or_op) not in self._unfetchable

    def add_function(self, function_def):
        """Adds a traced function (a FunctionDef) to the graph's function library."""
        self._check_not_finalized()
        with self._lock:
            self._functions.append((len(self._ops), function_def))

    def switch_to_thread_local(self):
        """From now on each thread has its own device, colocation and control-dependency
        stacks: the calling thread keeps the blocks it is in, other threads start empty."""
        if not isinstance(self._stacks, _ThreadLocalStacks):
            shared, self._stacks = self._stacks, _ThreadLocalStacks()
            self._stacks.__dict__.update(shared.__dict__)

    def finalize(self):
        """Finalizes this graph, making it read-only: adding an op then raises RuntimeError."""
        self._finalized = True

    @property
    def finalized(self):
        """True if this graph has been finalized."""
        return self._finalized

    @property
    def graph_def_versions(self):
        """The VersionDef every GraphDef of this graph carries: TensorFlow's."""
        return graph_pb2.VersionDef(producer=versions.GRAPH_DEF_VERSION,
                                    min_consumer=versions.GRAPH_DEF_VERSION_MIN_CONSUMER)

    @property
    def version(self):
        """The number of ops; the GraphDef line sends `as_graph_def(from_version=…)` deltas."""
        return len(self._ops)

    def as_graph_def(self, from_version=0, add_shapes=False):
        """The ops added since `from_version`; `add_shapes` gives each node with outputs
        their shapes in an `_output_shapes` attr, as TensorFlow's."""
        ops = self._ops[from_version:]  # one read: another thread may be adding ops
        graph_def = graph_pb2.GraphDef(versions=self.graph_def_versions)
        graph_def.node.extend(op._typed_node_def() for op in ops)
        if add_shapes:
            for node, op in zip(graph_def.node, ops):
                if op._outputs:
                    node.attr["_output_shapes"].list.shape.extend(
                        t.get_shape().as_proto() for t in op._outputs)
        graph_def.library.extend(f for version, f in self._functions if version >= from_version)
        return graph_def

    def _record_placement(self, devices):
        """Notes where a session placed nodes of this graph: {node name: device}."""
        with self._lock:
            if any(self._placed_devices.get(name) != device for name, device in devices.items()):
                self._placed_devices.update(devices)
                self._placed_updates += 1


def _unconvertible(obj, allow_tensor, allow_operation):
    wanted = " or ".join(kind for kind, allowed in (("Tensor", allow_tensor),
                                                     ("Operation", allow_operation)) if allowed)
    return f"Can not convert a {type(obj).__name__} into a {wanted}."


class _ControlContext:
    """One control_dependencies block: its ops, and the ops created inside it."""

    __slots__ = ("ops", "seen")

    def __init__(self):
        self.ops = []
        self.seen = set()


# -- the default graph, per thread --------------------------------------------------

_thread = threading.local()


def _default_graphs():
    if not hasattr(_thread, "stack"):
        _thread.stack = []
    return _thread.stack


def _base_graph():
    if getattr(_thread, "base", None) is None:
        _thread.base = Graph()
    return _thread.base


def get_default_graph():
    """Returns the default graph for the current thread (the innermost `as_default`)."""
    stack = _default_graphs()
    return stack[-1] if stack else _base_graph()


def reset_default_graph():
    """Clears the default graph stack and resets the global default graph; fails inside a
    `with graph.as_default()` block.
    """
    if _default_graphs():
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _thread.base = Graph()
