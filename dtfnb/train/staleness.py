"""StalenessAwareOptimizer: the chapter's remedies for stale gradients, dtfnb's own (not in
TensorFlow, so not in tf.train: `from dtfnb.extensions import StalenessAwareOptimizer`).

With asynchronous updates each replica computes its gradients from parameters that
the other replicas change meanwhile: with N replicas a gradient is applied about
N - 1 global steps after the step it was computed at. Every optimizer given a
`global_step` reports that staleness on the event stream of the global step's task
(VariableUpdateEvent: computed_at_step, applied_at_step). This wrapper also acts on
it, as the chapter suggests: it scales the learning rate down by the staleness,
drops gradients that are too stale, and lets one replica warm the model up alone.
"""

from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import control_flow_ops, math_ops, state_ops, training_ops
from dtfnb.train.optimizer import (
    Optimizer,
    WrappingOptimizer,
    cast_to,
    computing_task,
    updates_of,
)


class StalenessAwareOptimizer(WrappingOptimizer):
    """Wraps an optimizer; applies each replica's gradients according to their staleness.

    Usage (between-graph replication, one graph per worker):
        opt = tf.train.GradientDescentOptimizer(0.1)
        opt = StalenessAwareOptimizer(opt, max_staleness=4, warmup_steps=100,
                                      replica_id=task_index)
        train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())

    The staleness of a gradient is the global step when it is applied minus the global
    step read when its replica's step began.

    Args:
      optimizer: the Optimizer that applies the gradients kept.
      scale_learning_rate: multiply the gradients by 1 / staleness (for plain SGD and
        momentum, the same as dividing the learning rate).
      max_staleness: drop gradients staler than this (None: keep all).
      warmup_steps: until the global step reaches this, only replica 0 updates.
      replica_id: this replica's index (the worker's task index).

    A dropped gradient is reported with `dropped` set and does not advance the global
    step. The graph has no conditionals, so it is applied as zero: plain SGD leaves the
    variables as they were; optimizers with slots (momentum, Adam) still decay them.
    """

    def __init__(self, optimizer, scale_learning_rate=False, max_staleness=None,
                 warmup_steps=0, replica_id=0, use_locking=False, name="StalenessAware"):
        super().__init__(optimizer, use_locking, name)
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"optimizer must be an Optimizer, got {optimizer!r}")
        if max_staleness is not None and max_staleness < 0:
            raise ValueError(f"max_staleness must be None or >= 0, got {max_staleness}")
        if warmup_steps < 0 or replica_id < 0:
            raise ValueError(f"warmup_steps and replica_id must be >= 0, got {warmup_steps} "
                             f"and {replica_id}")
        self._scale_learning_rate = scale_learning_rate
        self._max_staleness = -1 if max_staleness is None else max_staleness
        self._warmup_steps = warmup_steps
        self._replica_id = replica_id

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients kept; returns the op that also advances `global_step`."""
        if global_step is None:
            raise ValueError("StalenessAwareOptimizer needs the global_step: staleness is "
                             "counted in global steps.")
        grads_and_vars = [(g, v) for g, v in grads_and_vars]
        graph = global_step.graph
        with graph.as_default(), graph.name_scope(name or self._name) as scope:
            # Read the global step once the gradients exist, i.e. when they are applied
            # (one group: one control edge to the global step's task).
            computed = control_flow_ops.group(*[g.op for g, _ in grads_and_vars
                                                if g is not None], name="gradients_ready")
            with graph.control_dependencies([computed]):
                scale, increment = training_ops.gradient_staleness_gate(
                    global_step.value(), global_step,
                    [v for g, v in grads_and_vars if g is not None],
                    computing_task(grads_and_vars), self._max_staleness, self._warmup_steps,
                    self._replica_id, self._scale_learning_rate, loss=self._minimized_loss,
                    name="gate")
            scaled = []
            for grad, var in grads_and_vars:
                if grad is not None:
                    with graph.colocate_with(var.op):  # where the gradient goes anyway
                        grad = math_ops.multiply(grad, cast_to(scale, grad.dtype))
                scaled.append((grad, var))
            update = self._opt.apply_gradients(scaled, name="apply")
            with graph.control_dependencies(updates_of(update)), \
                    graph.colocate_with(global_step.op):
                train_op = state_ops.assign_add(global_step, increment, name=scope).op
            # The inner optimizer listed its update as the training op: this one replaces it.
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if update in train_ops:
                train_ops.remove(update)
            train_ops.append(train_op)
            return train_op
