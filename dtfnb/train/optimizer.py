"""Optimizer: TensorFlow 1's base class (compute_gradients, apply_gradients, minimize, slots).

A subclass creates its slots in `_create_slots`, converts its hyperparameters to
tensors in `_prepare` and builds one update op per variable: in `_apply_dense` for a
Tensor gradient, in `_apply_sparse` for an IndexedSlices one (tf.gather's), which
updates only the rows it holds, their repeated indices summed first
(`_apply_sparse_duplicate_indices`), as TensorFlow 1 does.
Slots are variables named `<var>/<optimizer name>` (`_1`, `_2`, … for further
slots), colocated with their variable, as TensorFlow lays them out.
"""

from dtfnb.base import dtypes
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.gradients import gradients
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, control_flow_ops, init_ops, math_ops, state_ops, training_ops
from dtfnb.ops.slicing_ops import unsorted_segment_sum
from dtfnb.ops.variables import Variable
from dtfnb.train.slot_creator import create_slot

_VALID_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _var_key(var):
    return var.op.graph, var.op.name


def cast_to(value, dtype):
    """`value` as `dtype`; no op when it already is (as math_ops.cast in TensorFlow)."""
    if value.dtype.base_dtype == dtype:
        return value
    return math_ops.cast(value, dtype)


def computing_task(grads_and_vars):
    """The task that computes the gradients ("/job:worker/replica:0/task:1"), or "" when
    they are not placed on one."""
    for grad, _ in grads_and_vars:
        if grad is not None and grad.device:
            spec = DeviceSpec.from_string(grad.device)
            if spec.job is not None:
                return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task or 0}"
    return ""


def updates_of(finish):
    """What the global step's increment waits for: the ops a NoOp group (`_finish`) waits
    for, rather than the group. Under replica_device_setter the group sits on the worker,
    and a control edge through it would cost each step a round trip to the ps and back."""
    if finish.type == "NoOp" and finish.control_inputs:
        return list(finish.control_inputs)
    return [finish]


def record_staleness(global_step, grads_and_vars, loss=None):
    """The op reporting the global step each gradient was computed at (read when the step
    starts) and the one it is applied at, with the loss where known, on the event stream
    of global_step's task."""
    return training_ops.record_gradient_staleness(
        global_step.value(), global_step, [v for g, v in grads_and_vars if g is not None],
        computing_task(grads_and_vars), loss=loss, name="record_staleness")


class Optimizer:
    """Base class of optimizers: subclasses give `_apply_dense` (and slots, if any).

    Usage:
        opt = tf.train.GradientDescentOptimizer(0.1)
        train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    # Whether apply_gradients with a global step reports each gradient's staleness; off
    # where a wrapper's own ops report it (SyncReplicasOptimizer's accumulators).
    _reports_staleness = True
    # The loss of the minimize() under way, which the staleness records carry along.
    _minimized_loss = None

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}          # slot name → {var key: slot variable}
        self._non_slot_dict = {}  # (name, graph) → variable, e.g. Adam's beta1_power

    def get_name(self):
        """The optimizer's name (the name scope of its ops and slots)."""
        return self._name

    # -- the public steps -------------------------------------------------------------

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """compute_gradients then apply_gradients; returns the training op.

        With a `global_step`, the op returned increments it after all updates.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {loss}.")
        self._minimized_loss = loss if isinstance(loss, Tensor) else None
        try:
            return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        finally:
            self._minimized_loss = None

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """Returns [(gradient or None, variable)] for `var_list` (default: trainables)."""
        if callable(loss) and not isinstance(loss, (Tensor, Variable)):
            loss = loss()
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = list(var_list.values() if isinstance(var_list, dict) else var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for var in var_list:
            if not isinstance(var, Variable):
                raise NotImplementedError(f"Trying to optimize unsupported type {var!r}")
        grads = gradients(loss, [v._ref() for v in var_list],
                          grad_ys=None if grad_loss is None else [grad_loss],
                          gate_gradients=gate_gradients == self.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == self.GATE_GRAPH:
            grads = control_flow_ops.tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the updates; returns one op running them all (and incrementing the step)."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, IndexedSlices):
                try:
                    grad = convert_to_tensor(grad)
                except (TypeError, ValueError):
                    raise TypeError("Gradient must be convertible to a Tensor or "
                                    f"IndexedSlices, or None: {grad}") from None
            if not isinstance(var, Variable):
                raise NotImplementedError(f"Trying to optimize unsupported type {var!r}")
            converted.append((grad, var))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            update_ops = []
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name), \
                            graph.colocate_with(var.op):
                        update_ops.append(
                            self._apply_sparse_duplicate_indices(grad, var)
                            if isinstance(grad, IndexedSlices) else self._apply_dense(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    finished = updates_of(self._finish(update_ops, "update"))
                    if self._reports_staleness:
                        with graph.control_dependencies(finished):
                            finished = [record_staleness(global_step, converted,
                                                         self._minimized_loss)]
                    with graph.control_dependencies(finished), \
                            graph.colocate_with(global_step.op):
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    # -- slots ------------------------------------------------------------------------

    def get_slot_names(self):
        """Return a list of the names of slots created by the `Optimizer`."""
        return sorted(self._slots)

    def get_slot(self, var, name):
        """The slot `name` (e.g. "momentum", "m") of `var`, or None."""
        return self._slots.get(name, {}).get(_var_key(var))

    def variables(self):
        """The slots and other variables this optimizer created, sorted by name."""
        found = [v for slots in self._slots.values() for v in slots.values()]
        found += list(self._non_slot_dict.values())
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, value, slot_name, op_name):
        """The slot `slot_name` of `var`, made with the tensor `value` as its value."""
        return self._get_or_make_slot_with_initializer(var, value, None, None, slot_name,
                                                       op_name)

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(
            var, init_ops.zeros_initializer(), var.get_shape(), var.dtype.base_dtype,
            slot_name, op_name)

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in slots:
            slots[key] = create_slot(var, initializer, shape, dtype, op_name)
        return slots[key]

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = colocate_with.graph
        key = (name, graph)
        var = self._non_slot_dict.get(key)
        if var is None:
            with graph.as_default(), graph.colocate_with(colocate_with.op):
                var = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = var
        return var

    def _get_non_slot_variable(self, name, graph):
        return self._non_slot_dict.get((name, graph))

    # -- hooks for subclasses -----------------------------------------------------------

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError

    def _apply_sparse_duplicate_indices(self, grad, var):
        """_apply_sparse of `grad` with the rows of each repeated index summed into one, so
        that an update sees each row's whole gradient once (Adagrad squares the sum)."""
        unique_indices, positions = array_ops.unique(grad.indices)
        summed = unsorted_segment_sum(grad.values, positions,
                                      array_ops.shape(unique_indices)[0])
        return self._apply_sparse(IndexedSlices(summed, unique_indices, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param

    def _assert_valid_dtypes(self, tensors):
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"{list(_VALID_DTYPES)}.")


class WrappingOptimizer(Optimizer):
    """An optimizer that applies gradients through another, `opt`: its gradients,
    slots and variables are `opt`'s unless a subclass changes them (SyncReplicasOptimizer,
    StalenessAwareOptimizer, CollectiveAllReduceOptimizer)."""

    def __init__(self, opt, use_locking, name):
        super().__init__(use_locking, name)
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def get_slot(self, var, name):
        """The wrapped optimizer's slot `name` for `var`."""
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        """The names of the wrapped optimizer's slots."""
        return self._opt.get_slot_names()

    def variables(self):
        """The wrapped optimizer's variables."""
        return self._opt.variables()
