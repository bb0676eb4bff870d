"""tf.variable_scope and tf.get_variable: variables named by scope, shared by reuse.

As in TensorFlow 1, each graph holds a variable store (full name → Variable
made by get_variable) and a scope store (the current VariableScope and how many
times each scope name was opened, which makes default names unique: dense,
dense_1, …). Both live in collections under private keys, so they come and go
with their graph.
"""

import collections.abc as collections_abc
import contextlib
import enum
import functools
import inspect
import os
import traceback

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import init_ops
from dtfnb.ops.building import graph_of
from dtfnb.ops.constant_op import _infer_dtype
from dtfnb.ops.slicing_ops import slice as slice_
from dtfnb.ops.variables import PartitionedVariable, Variable


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE

_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


# -- the per-graph stores -----------------------------------------------------------------

class _VariableStore:
    """Variables created by get_variable in one graph, by full name (a partitioned one's
    parts in `_vars`, the PartitionedVariable itself in `_partitioned_vars`)."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}
        self._origins = {}  # name → where it was created, for the "already exists" error

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, **kwargs):
        if custom_getter is not None:
            if not callable(custom_getter):
                raise ValueError(f"Passed a custom_getter which is not callable: "
                                 f"{custom_getter}")
            return custom_getter(
                getter=self._true_getter, name=name, shape=shape, dtype=dtype,
                initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, constraint=constraint, **kwargs)
        return self._true_getter(name, shape, dtype, initializer, regularizer, reuse, trainable,
                                 collections, caching_device, partitioner, validate_shape,
                                 use_resource, constraint)

    def _true_getter(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, constraint=None, **_ignored):
        dtype = dtypes.as_dtype(dtype).base_dtype
        common = dict(shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, caching_device=caching_device,
                      validate_shape=validate_shape, constraint=constraint)
        # A scalar, given as an empty shape, is never partitioned (TensorFlow's rule).
        is_scalar = isinstance(shape, collections_abc.Sequence) and not shape
        if partitioner is not None and not is_scalar:
            if not callable(partitioner):
                raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
            with get_default_graph().name_scope(None):
                return self._get_partitioned_variable(name, partitioner, **common)
        if reuse is True and partitioner is None and name in self._partitioned_vars:
            return self._get_partitioned_variable(name, None, **common)
        if f"{name}/part_0" in self._vars:
            raise ValueError(
                "No partitioner was provided, but a partitioned version of the variable was "
                f"found: {name}/part_0. Perhaps a variable of the same name was already "
                "created with partitioning?")
        return self._get_single_variable(name, **common)

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32,
                                  initializer=None, reuse=None, **single):
        """The PartitionedVariable `name`: its parts `name/part_<i>`, made or reused.

        A callable initializer is called once per part with the part's shape and a
        `partition_info` (the full shape and the part's offset, from which glorot
        takes its fans); a value is converted once per part and sliced.
        """
        graph = get_default_graph()
        if name in self._vars:
            raise ValueError(
                "A partitioner was provided, but an unpartitioned version of the variable was "
                f"found: {name}.  Perhaps a variable of the same name was already created "
                "without partitioning?")
        shape = as_shape(shape)
        if isinstance(initializer, Tensor):
            shape = shape.merge_with(initializer.get_shape())
        partitions = None
        if not reuse or partitioner:
            partitions = _call_partitioner(partitioner, shape, dtype)
        if name in self._partitioned_vars:
            if not reuse:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did "
                                 "you mean to set reuse=True or reuse=tf.AUTO_REUSE in "
                                 "VarScope?")
            found = self._partitioned_vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"shape {shape} and found shape {found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"dtype {dtype.name} and found dtype {found.dtype.name}.")
            if partitions is not None and found._get_partitions() != partitions:
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"partitions {partitions} and found partitions "
                                 f"{found._get_partitions()}.")
            return found
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created "
                             "with tf.get_variable(). Did you mean to set reuse=False or "
                             "reuse=tf.AUTO_REUSE in VarScope?")
        axis, count = next(((i, p) for i, p in enumerate(partitions) if p > 1), (0, 1))
        if f"{name}/part_0" in self._vars:
            if f"{name}/part_{count - 1}" not in self._vars:
                raise ValueError(
                    "Partitioner returned a different partitioning than what was already "
                    f"found.  Partitioner returned {count} shards, and shard {name}/part_0 was "
                    f"found, but {name}/part_{count - 1} was not.")
            if f"{name}/part_{count}" in self._vars:
                raise ValueError(
                    "Partitioner returned a different partitioning than what was already "
                    f"found.  Partitioner returned {count} shards, and shard {name}/part_0 was "
                    f"found, but so was the extra shard {name}/part_{count}.")
        parts = []
        for i, (offset, part_shape) in enumerate(_slices(shape.as_list(), count, axis)):
            part_name = f"{name}/part_{i}"
            with graph.name_scope(f"{part_name}/PartitionedInitializer"):
                init, init_shape = initializer, part_shape
                if initializer is None:
                    init = _default_initializer(name, dtype)
                elif not callable(initializer):
                    init = slice_(convert_to_tensor(initializer, dtype=None if isinstance(
                        initializer, Tensor) else dtype), offset, part_shape)
                    dtype, init_shape = init.dtype.base_dtype, None
            with graph.name_scope(None):
                var = self._get_single_variable(
                    part_name, shape=init_shape, dtype=dtype, initializer=init, reuse=reuse,
                    partition_info=_PartitionInfo(shape.as_list(), offset), **single)
            var._set_save_slice_info(Variable.SaveSliceInfo(name, shape.as_list(), offset,
                                                            part_shape))
            parts.append(var)
        partitioned = PartitionedVariable(name, shape, dtype, parts, partitions)
        self._partitioned_vars[name] = partitioned
        return partitioned

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                             regularizer=None, reuse=None, trainable=None, collections=None,
                             caching_device=None, validate_shape=True, constraint=None,
                             partition_info=None):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        shape = unknown_shape() if shape is None else as_shape(shape)

        if name in self._vars:
            found = self._vars[name]
            if not reuse:
                raise ValueError(
                    f"Variable {name} already exists, disallowed. Did you mean to set "
                    "reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally defined at:"
                    f"\n\n{self._origins[name]}")
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {found.get_shape()}.")
            if not from_value and not dtype.is_compatible_with(found.dtype.base_dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtype.name} and found dtype {found.dtype.base_dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?")

        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if from_value:
            init_val, variable_dtype = initializer, None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                init_val = functools.partial(_call_initializer, initializer, shape.as_list(),
                                             dtype, partition_info)
                variable_dtype = dtype
            elif _takes_no_arguments(initializer):
                init_val, variable_dtype = initializer, None
            else:
                raise ValueError(
                    "The initializer passed is not valid. It should be a callable with no "
                    "arguments and the shape should not be provided or an instance of "
                    "`tf.keras.initializers.*' and `shape` should be fully defined.")
        var = Variable(initial_value=init_val, name=name, trainable=trainable is not False,
                       collections=collections, caching_device=caching_device,
                       dtype=variable_dtype, validate_shape=validate_shape,
                       constraint=constraint)
        self._vars[name] = var
        self._origins[name] = _user_traceback()
        if regularizer is not None:
            graph = var.graph
            with graph.colocate_with(var.op), graph.name_scope(f"{name}/Regularizer/"):
                loss = regularizer(var)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype is dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype} is required")


def _call_initializer(initializer, shape, dtype, partition_info):
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        params = {}
    if "partition_info" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return initializer(shape, dtype=dtype, partition_info=partition_info)
    return initializer(shape, dtype=dtype)


class _PartitionInfo:
    """What an initializer learns of the part it initializes: the full variable's shape
    and the part's offset in it."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = full_shape
        self.var_offset = var_offset


def _call_partitioner(partitioner, shape, dtype):
    """The partitioner's counts per dimension, checked: as many as dimensions, all at
    least 1, at most one above 1."""
    if not shape.is_fully_defined():
        raise ValueError("Shape of a new partitioned variable must be fully defined, but "
                         f"instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    partitions = partitioner(shape=shape, dtype=dtype)
    if not isinstance(partitions, collections_abc.Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {partitions}")
    if len(partitions) != shape.ndims:
        raise ValueError("Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {partitions} vs. {shape}")
    if any(p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {partitions}")
    if sum(p > 1 for p in partitions) > 1:
        raise ValueError("Can only slice a variable along one dimension: shape: "
                         f"{shape}, partitioning: {partitions}")
    return partitions


def _slices(full_shape, count, axis):
    """(offset, shape) of each of `count` parts along `axis`: the first parts one longer
    when the axis does not divide evenly."""
    offset = [0] * len(full_shape)
    for i in range(count):
        shape = list(full_shape)
        shape[axis] = full_shape[axis] // count + (i < full_shape[axis] % count)
        yield list(offset), shape
        offset[axis] += shape[axis]


def _takes_no_arguments(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


# The package's own folder: a user's code may sit in any folder, one named dtfnb included
# (a clone of this repository is one).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_traceback():
    """The last five frames outside dtfnb, innermost first, as TensorFlow shows them."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return "".join(traceback.format_list(frames[::-1][:5]))


class _VariableScopeStore:
    def __init__(self):
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, name):
        self.variable_scopes_count[name] = self.variable_scopes_count.get(name, 0) + 1

    def close_variable_subscopes(self, name):
        for key in self.variable_scopes_count:
            if name is None or key.startswith(name + "/"):
                self.variable_scopes_count[key] = 0

    def variable_scope_count(self, name):
        return self.variable_scopes_count.get(name, 0)


def _store(graph, key, factory):
    items = graph.get_collection_ref(key)
    if not items:
        items.append(factory())
    return items[0]


def _get_default_variable_store():
    return _store(get_default_graph(), _VARSTORE_KEY, _VariableStore)


def get_variable_scope_store():
    """The default graph's variable scope store: the current scope and how often each scope name was
    opened."""
    return _store(get_default_graph(), _VARSCOPESTORE_KEY, _VariableScopeStore)


def get_variable_scope():
    """The current VariableScope of the default graph."""
    return get_variable_scope_store().current_scope


# -- VariableScope --------------------------------------------------------------------------

class VariableScope:
    """What variable_scope yields: a name, a reuse mode and defaults for get_variable."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        """From now on, get_variable in this scope returns existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        """Sets the default initializer of the variables created in this scope."""
        self._initializer = initializer

    def set_dtype(self, dtype):
        """Sets the default dtype of the variables created in this scope."""
        self._dtype = dtype

    def set_regularizer(self, regularizer):
        """Sets the default regularizer of the variables created in this scope."""
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        """Sets the default device the variables of this scope are read on."""
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        """Sets the default partitioner of the variables created in this scope."""
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        """Sets the function `get_variable` calls through in this scope."""
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource):
        """Records whether this scope asks for resource variables (dtfnb makes ref ones)."""
        self._use_resource = use_resource

    def get_collection(self, name):
        """The members of collection `name` whose names lie under this scope."""
        return get_default_graph().get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self):
        """The trainable variables created under this scope."""
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        """The global variables created under this scope."""
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        """The local variables created under this scope."""
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, **kwargs):
        """Gets or creates `<scope>/<name>` with this scope's defaults."""
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if constraint is None:
            constraint = self._constraint
        full_name = f"{self._name}/{name}" if self._name else name
        if dtype is not None and initializer is not None and not callable(initializer):
            given = initializer.dtype.base_dtype if isinstance(initializer, Tensor) \
                else _infer_dtype(initializer)
            if given != dtypes.as_dtype(dtype).base_dtype:
                raise ValueError(f"Initializer type '{given}' and explicit dtype "
                                 f"'{dtypes.as_dtype(dtype)}' don't match.")
        if initializer is None:
            initializer = self._initializer
        if dtype is None:
            dtype = self._dtype
        if reuse is None:
            reuse = self._reuse
        # Variable names depend on the variable scope only, never on the name scope.
        with get_default_graph().name_scope(None):
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, custom_getter=custom_getter, constraint=constraint,
                **kwargs)

    def __repr__(self):
        return f"<VariableScope name={self._name!r} reuse={self._reuse}>"


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 **kwargs):
    """Gets the variable `<current scope>/<name>`, or creates it if the scope allows.

    A new float variable defaults to a glorot-uniform initializer, an integer, bool
    or string one to zeros. Creating one that exists raises ValueError unless the
    scope reuses; reusing one that does not exist raises unless reuse is AUTO_REUSE.
    With a `partitioner` (or the scope's), a variable of rank 1 or more is made as
    parts `<name>/part_<i>` and returned as a PartitionedVariable.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype,
        initializer=initializer, regularizer=regularizer, trainable=trainable,
        collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource, custom_getter=custom_getter,
        constraint=constraint, **kwargs)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, **kwargs):
    """get_variable for LOCAL_VARIABLES (not saved, not trained)."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=collections,
                        **kwargs)


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """Deprecated TensorFlow 1 API (use get_variable with a partitioner): the parts, as a
    list, of a new partitioned variable named by the scope `name` (default
    "PartitionedVariable", made unique), cut as `slicing` says (a count per dimension)."""
    if len(shape) != len(slicing):
        raise ValueError("The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        scope = get_variable_scope()
        if scope.custom_getter is not None:
            raise ValueError(
                "Private access to _get_partitioned_variable is not allowed when a custom "
                f"getter is set.  Current custom getter: {scope.custom_getter}.  It is likely "
                "that you're using create_partitioned_variables.  If so, consider instead "
                "using get_variable with a non-empty partitioner parameter instead.")
        with get_default_graph().name_scope(None):
            return list(_get_default_variable_store()._get_partitioned_variable(
                scope.name, lambda **unused: slicing, shape=shape,
                dtype=dtypes.as_dtype(dtype).base_dtype, initializer=initializer,
                reuse=scope.reuse, regularizer=scope.regularizer, trainable=trainable,
                collections=collections, caching_device=scope.caching_device,
                constraint=scope.constraint))


# -- entering scopes --------------------------------------------------------------------

def _wrap_custom_getter(custom_getter, old_getter):
    """Nests getters: the inner scope's getter receives the outer one as its `getter`."""
    if old_getter is None or custom_getter is None:
        return custom_getter or old_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped


class _PureVariableScope:
    """Switches the current VariableScope without touching name scopes."""

    def __init__(self, name_or_scope, reuse, old_name_scope, overrides):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._old_name_scope = old_name_scope
        self._overrides = overrides
        self._store = get_variable_scope_store()

    def __enter__(self):
        store = self._store
        self._old = store.current_scope
        given = self._name_or_scope
        if isinstance(given, VariableScope):
            self._new_name = given.name
            store.open_variable_scope(self._new_name)
            self._old_counts = dict(store.variable_scopes_count)
            scope = VariableScope(
                self._reuse or given.reuse, name=given.name, initializer=given.initializer,
                regularizer=given.regularizer, caching_device=given.caching_device,
                partitioner=given.partitioner, custom_getter=given.custom_getter,
                name_scope=given.original_name_scope, dtype=given.dtype,
                use_resource=given.use_resource, constraint=given.constraint)
        else:
            old = self._old
            self._new_name = f"{old.name}/{given}" if old.name else given
            # Reuse is inherited: a scope inside a reusing scope reuses too.
            scope = VariableScope(
                self._reuse or old.reuse, name=self._new_name, initializer=old.initializer,
                regularizer=old.regularizer, caching_device=old.caching_device,
                partitioner=old.partitioner, custom_getter=old.custom_getter,
                name_scope=self._old_name_scope if self._old_name_scope is not None else given,
                dtype=old.dtype, use_resource=old.use_resource, constraint=old.constraint)
            store.open_variable_scope(self._new_name)
        for key, value in self._overrides.items():
            if value is None:
                continue
            if key == "custom_getter":
                value = _wrap_custom_getter(value, scope.custom_getter)
            if key == "dtype":
                value = dtypes.as_dtype(value)
            setattr(scope, f"_{key}", value)
        store.current_scope = scope
        return scope

    def __exit__(self, *exc):
        if isinstance(self._name_or_scope, VariableScope):
            self._store.variable_scopes_count = self._old_counts
        else:
            self._store.close_variable_subscopes(self._new_name)
        self._store.current_scope = self._old
        return False


def _unique_variable_scope(prefix):
    """`prefix`, or `prefix_N` with the first N not opened yet in the current scope."""
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    index = 1
    while store.variable_scope_count(f"{name}_{index}") > 0:
        index += 1
    return f"{prefix}_{index}"


class variable_scope:  # noqa: N801 - TensorFlow's name
    """A context manager that opens a variable scope and the matching name scope.

    Usage:
        with tf.variable_scope("layer1"):
            w = tf.get_variable("w", [3, 4])           # layer1/w
        with tf.variable_scope("layer1", reuse=True):
            same = tf.get_variable("w")                 # the same Variable

    Args:
      name_or_scope: a string or a VariableScope to re-enter.
      default_name: used, made unique (`dense`, `dense_1`, …), when name_or_scope is None.
      values: tensors whose graph becomes the default graph inside.
      reuse: True, tf.AUTO_REUSE, or None/False to inherit the enclosing scope's mode.
      initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
        constraint: defaults for get_variable inside.
      auxiliary_name_scope: False to leave the name scope as it is.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if reuse is False:  # False means "inherit", as None: scopes cannot stop reusing.
            reuse = None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError("The auxiliary_name_scope must be `True` or `False`, while get "
                            f"{auxiliary_name_scope}")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values or []
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._overrides = {"initializer": initializer, "regularizer": regularizer,
                           "caching_device": caching_device, "partitioner": partitioner,
                           "custom_getter": custom_getter, "dtype": dtype,
                           "use_resource": use_resource, "constraint": constraint}
        self._stack = None

    def __enter__(self):
        stack = contextlib.ExitStack()
        try:
            graph = graph_of(self._values)
            if graph is not get_default_graph():
                stack.enter_context(graph.as_default())
            scope = stack.enter_context(self._open(graph))
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return scope

    def __exit__(self, *exc):
        stack, self._stack = self._stack, None
        return stack.__exit__(*exc)

    @contextlib.contextmanager
    def _open(self, graph):
        given = self._name_or_scope
        with contextlib.ExitStack() as stack:
            if not self._auxiliary_name_scope:
                current = graph.get_name_scope()
                name_scope = stack.enter_context(graph.name_scope(current + "/" if current
                                                                  else ""))
            elif given is not None:
                short = given if isinstance(given, str) else given.name.split("/")[-1]
                name_scope = stack.enter_context(graph.name_scope(short)) if short else ""
            else:
                name_scope = stack.enter_context(graph.name_scope(self._default_name))
            if given is None:
                if self._reuse is True:
                    raise ValueError("reuse=True cannot be used without a name_or_scope")
                given = _unique_variable_scope(self._default_name)
            old_name_scope = name_scope if isinstance(given, str) else None
            yield stack.enter_context(_PureVariableScope(given, self._reuse, old_name_scope,
                                                         self._overrides))


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    """Deprecated TensorFlow 1 spelling of variable_scope(name_or_scope, default_name, values)."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
