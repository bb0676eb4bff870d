"""tf.Variable (TensorFlow 1's ref variable) and the variable collections and initializers."""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.tensor import _OPERATOR_NAMES
from dtfnb.ops import math_ops, slicing_ops, state_ops
from dtfnb.ops.array_ops import identity
from dtfnb.ops.cond import cond
from dtfnb.ops.constant_op import constant
from dtfnb.ops.control_flow_ops import group, no_op
from dtfnb.ops.joining_ops import concat, split, stack
from dtfnb.ops.slicing_ops import boolean_mask


class Variable:
    """A ref variable: ops `x` (VariableV2), `x/initial_value`, `x/Assign`, `x/read`.

    As in TensorFlow 1, its value lives in the task that runs the VariableV2 op and
    survives across runs (and, when shared by name in a container, across sessions).
    """

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, shape=None, **_ignored):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = getattr(initial_value, "graph", None) or get_default_graph()
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        with graph.name_scope(name or "Variable") as scope:
            # An initializer function's ops, and the variable, are built in the variable's
            # colocation class (it does not exist yet to colocate with), with no device of
            # their own: they run on the variable's device, as in TensorFlow.
            colocation = {"_class": [f"loc:@{scope[:-1]}"]} if callable(initial_value) else {}
            with graph._attr_scope(colocation):
                if callable(initial_value):
                    with graph.name_scope("Initializer"), graph.device(None):
                        value = convert_to_tensor(initial_value(), name="initial_value",
                                                  dtype=dtype)
                else:
                    value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
                if validate_shape and not value.shape.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {value}")
                var_shape = value.shape if validate_shape else unknown_shape()
                self._initial_value = value
                self._variable = state_ops.variable_op_v2(var_shape, value.dtype.base_dtype,
                                                          name=scope)
            self._initializer_op = state_ops.assign(
                self._variable, _guarded(scope, value), validate_shape=validate_shape).op
            if caching_device is not None:
                with graph.device(caching_device):
                    self._snapshot = identity(self._variable, name="read")
            else:
                with graph.colocate_with(self._variable.op):
                    self._snapshot = identity(self._variable, name="read")
        graph.add_to_collections(collections, self)
        self._save_slice_info = None

    # -- identity -----------------------------------------------------------------

    @property
    def name(self):
        """The name of this variable, as its VariableV2 op's output ("w:0")."""
        return self._variable.name

    @property
    def op(self):
        """The VariableV2 `Operation` that holds this variable's state."""
        return self._variable.op

    @property
    def graph(self):
        """The `Graph` this variable lives in."""
        return self._variable.graph

    @property
    def device(self):
        """The device of this variable's op."""
        return self._variable.device

    @property
    def dtype(self):
        """The reference `DType` of this variable (float32_ref for a float32 variable)."""
        return self._variable.dtype

    @property
    def shape(self):
        """The `TensorShape` of this variable."""
        return self._variable.shape

    def get_shape(self):
        """Alias of `Variable.shape`."""
        return self._variable.shape

    @property
    def trainable(self):
        """Whether the variable is in the TRAINABLE_VARIABLES collection."""
        return self._trainable

    @property
    def constraint(self):
        """The projection function applied after an optimizer update, or None."""
        return self._constraint

    @property
    def initializer(self):
        """The assign operation that gives the variable its initial value."""
        return self._initializer_op

    @property
    def initial_value(self):
        """The tensor the initializer assigns to the variable."""
        return self._initial_value

    def value(self):
        """The snapshot of this variable (its "read" identity), which ops read it through."""
        return self._snapshot

    def read_value(self):
        """A new read of the variable's value, for a read ordered by control dependencies."""
        return identity(self._variable, name="read")

    def initialized_value(self):
        """The variable's value once it is initialized: a cond that reads it if it is, and
        gives its initial value if not (for another variable's initial value)."""
        with self.graph.control_dependencies(None):
            return cond(state_ops.is_variable_initialized(self._variable), self.read_value,
                        lambda: self._initial_value)

    def _ref(self):
        return self._variable

    def _as_graph_element(self):
        return self._variable

    # -- updates ------------------------------------------------------------------

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns `value` to the variable; the updated value, or the op if not `read_value`."""
        update = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return update if read_value else update.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        """Adds `delta` to the variable; the updated value, or the op if not `read_value`."""
        update = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return update if read_value else update.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        """Subtracts `delta` from the variable; the updated value, or the op if not `read_value`."""
        update = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return update if read_value else update.op

    def count_up_to(self, limit):
        """Increments the variable until it reaches `limit`, then raises OutOfRangeError."""
        return state_ops.count_up_to(self._variable, limit)

    def load(self, value, session=None):
        """Writes `value` into the variable by running its initializer with a fed value."""
        from dtfnb.framework.default_session import get_default_session

        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initial_value: np.asarray(value)})

    def eval(self, session=None):
        """Computes the variable's value in `session` (default: the default session)."""
        return self._variable.eval(session=session)

    def __repr__(self):
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    @staticmethod
    def _operator(name):
        def operator(self, *args):
            return getattr(self._snapshot, name)(*args)

        operator.__name__ = name
        return operator

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __iter__(self):
        return iter(self._snapshot)

    # -- a part of a partitioned variable ---------------------------------------------

    class SaveSliceInfo:
        """Where a part of a partitioned variable lies in the full variable, which a Saver
        writes it into as a slice."""

        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None):
            self.full_name = full_name
            self.full_shape = full_shape
            self.var_offset = var_offset
            self.var_shape = var_shape

        @property
        def spec(self):
            """The slice as RestoreV2's shape_and_slices writes it: "4 3 0,2:0,3" is rows
            0..1 and columns 0..2 of a [4, 3] variable."""
            extents = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
            return " ".join(str(d) for d in self.full_shape) + " " + extents

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info


for _name in _OPERATOR_NAMES:
    setattr(Variable, _name, Variable._operator(_name))
# v[...] slices the variable's value, and the slice can assign to the variable
Variable.__getitem__ = lambda self, spec: slicing_ops._slice_helper(self.value(), spec, self)


def _convert_variable(value, dtype=None, name=None, as_ref=False):
    tensor = value._variable if as_ref else value._snapshot
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(tensor.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{tensor.dtype.name}'")
    return tensor


register_tensor_conversion_function(Variable, _convert_variable, priority=10)

RefVariable = Variable


class PartitionedVariable:
    """A variable stored as parts (`w/part_0`, `w/part_1`, …), split along one axis.

    get_variable with a partitioner makes one: each part is a Variable of its own, so
    replica_device_setter places the parts on the ps tasks in turn, and a Saver writes
    them as slices of one checkpoint entry `w`. Iterating gives the parts in order;
    used as a tensor it is their concatenation (ConcatV2), read where it is used.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        if any(v._get_save_slice_info() is None for v in variable_list):
            raise ValueError("All variables must have a save_slice_info available: "
                             f"{[v.name for v in variable_list]}")
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self):
        """The parts, in order along the partitioned axis."""
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    def _partition_axes(self):
        return [i for i, p in enumerate(self._partitions) if p > 1] or [0]

    def _concat(self):
        """The parts concatenated, under the control dependencies of the caller's scope."""
        graph = self._variable_list[0].graph
        if len(self._variable_list) == 1:
            with graph.name_scope(None):
                return identity(self._variable_list[0], name=self._name)
        with graph.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = concat(self._variable_list, self._partition_axes()[0])
        with graph.name_scope(None):
            return identity(concatenated, name=self._name)

    def as_tensor(self):
        """The full value: the parts concatenated (`<name>/ConcatPartitions/concat`, read
        through an Identity named `<name>`), free of the caller's control dependencies."""
        with self._variable_list[0].graph.control_dependencies(None):
            return self._concat()

    @property
    def name(self):
        """The full variable's name ("w"), which the parts' names extend."""
        return self._name

    @property
    def dtype(self):
        """The parts' value dtype (float32, not float32_ref)."""
        return self._dtype

    @property
    def shape(self):
        """The `TensorShape` of the full variable."""
        return self._shape

    def get_shape(self):
        """Alias of `PartitionedVariable.shape`."""
        return self._shape

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def _apply_assign_fn(self, assign_fn, value):
        """assign_fn(part, its share of `value`) for each part: `value` is split along the
        partitioned axis, unless it is a list of values or another PartitionedVariable."""
        if isinstance(value, list):
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            axis = self._partition_axes()[0]
            values = split(value, [v.shape[axis].value for v in self._variable_list],
                           axis=axis)
        return [assign_fn(var, part) for var, part in zip(self._variable_list, values)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns `value` part by part; the list of the parts' updates."""
        return self._apply_assign_fn(lambda var, part: var.assign(
            part, use_locking=use_locking, name=name, read_value=read_value), value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        """Adds `value` part by part; the list of the parts' updates."""
        return self._apply_assign_fn(lambda var, part: var.assign_add(
            part, use_locking=use_locking, name=name, read_value=read_value), value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        """Subtracts `value` part by part; the list of the parts' updates."""
        return self._apply_assign_fn(lambda var, part: var.assign_sub(
            part, use_locking=use_locking, name=name, read_value=read_value), value)

    def __repr__(self):
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self)}>")


def _convert_partitioned_variable(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{value.dtype.name}'")
    if as_ref:
        raise NotImplementedError(
            "PartitionedVariable doesn't support being used as a reference.")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _convert_partitioned_variable)


# -- collections and initializers ---------------------------------------------------

def global_variables(scope=None):
    """The variables shared across tasks (the GLOBAL_VARIABLES collection), under `scope`."""
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None):
    """The variables local to this process (the LOCAL_VARIABLES collection), under `scope`."""
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    """The variables created with `trainable=True`, those optimizers update."""
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    """The variables of the MODEL_VARIABLES collection, under `scope`."""
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op that runs the initializers of `var_list` (a no-op when it is empty)."""
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def global_variables_initializer():
    """An op that initializes every global variable of the default graph."""
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    """An op that initializes every local variable of the default graph."""
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable):
    """A bool tensor: whether `variable` has been assigned a value yet."""
    return state_ops.is_variable_initialized(variable)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the op names of the variables not yet initialized.

    `var_list` defaults to the global and local variables (or, if there are none,
    every VariableV2 op in the graph). Built as TensorFlow builds it: one
    IsVariableInitialized per variable, stacked, negated, and used as a boolean mask
    over the names; the mask runs on /cpu:0.
    """
    graph = get_default_graph()
    if var_list is None:
        var_list = global_variables() + local_variables()
        if not var_list:
            var_list = [op.outputs[0] for op in graph.get_operations()
                        if op.type in ("VariableV2", "Variable")]
    with graph.name_scope(name):
        init_vars = [state_ops.is_variable_initialized(v) for v in var_list]
        with graph.device("/cpu:0"):
            if not var_list:
                # An empty answer, so callers only need to check for size 0.
                return constant([], dtype=dtypes.string)
            mask = math_ops.logical_not(stack(init_vars))
            names = constant([v.op.name for v in var_list])
            return boolean_mask(names, mask)


# -- initial values that read other variables --------------------------------------------

def _guarded(scope, value):
    """`value` as TensorFlow's variables assign it: where it reads other variables, a copy
    of the ops between it and them that reads each variable's `initialized_value()`
    instead, so that initializing all variables at once works in any order. The copies
    are named after the ops, `_` and the new variable's `scope` ("mul_b"). A value on a
    cycle (a while loop) is left as it is."""
    if _on_cycle(value.op, {}):
        return value
    return _guarded_tensor(scope, value, {})


def _on_cycle(op, state):
    if state.get(op.name) == "started":
        return True
    if state.get(op.name) == "finished":
        return False
    state[op.name] = "started"
    if any(_on_cycle(t.op, state) for t in op.inputs) or \
            any(_on_cycle(c, state) for c in op.control_inputs):
        return True
    state[op.name] = "finished"
    return False


def _guarded_tensor(scope, tensor, copies):
    op = tensor.op
    if op.name not in copies:
        copies[op.name] = _guarded_op(scope, op, copies)
    return copies[op.name].outputs[tensor.value_index]


def _guarded_op(scope, op, copies):
    if op.type in ("IsVariableInitialized", "VarIsInitializedOp", "ReadVariableOp", "If"):
        return op
    if op.type in ("Variable", "VariableV2", "VarHandleOp"):
        variable = _variable_of(op)
        return op if variable is None else variable.initialized_value().op
    inputs = [_guarded_tensor(scope, t, copies) for t in op.inputs]
    if all(new is old for new, old in zip(inputs, op.inputs)):
        return op
    op_type, out_types = op.type, [t.dtype for t in op.outputs]
    if op_type == "RefSwitch":   # it now switches a value, not a ref
        op_type, out_types = "Switch", [inputs[0].dtype.base_dtype] * 2
    return op.graph.create_op(op_type, inputs, out_types, attrs=dict(op._attrs),
                              name=f"{op.name}_{scope}".replace(":", "_"))


def _variable_of(op):
    """The Variable of the graph's global or local variables whose op is `op`, if any."""
    for collection in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for variable in op.graph.get_collection(collection):
            if getattr(variable, "name", None) in (op.name, op.name + ":0") and \
                    hasattr(variable, "initialized_value"):
                return variable
    return None
