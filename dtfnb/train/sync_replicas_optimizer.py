"""tf.train.SyncReplicasOptimizer: synchronous data parallelism from ops and shared resources.

No runtime support, as in TensorFlow: every replica offers its gradients, labelled
with its local step, to one ConditionalAccumulator per variable (on the variable's
device, shared by name), then waits for a token from a shared queue. The chief's
queue runner takes the mean of `replicas_to_aggregate` gradients from every
accumulator, applies it with the wrapped optimizer, increments the global step and
hands out the next tokens, whose value becomes each replica's local step. A replica
that falls behind offers gradients of an old step: the accumulators drop them, so
spare replicas (`replicas_to_aggregate < total_num_replicas`) never slow a step.
"""

import logging

from dtfnb.base import errors
from dtfnb.base.dtypes import int32
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, control_flow_ops, state_ops
from dtfnb.ops.accumulator_ops import ConditionalAccumulator, SparseConditionalAccumulator
from dtfnb.ops.data_flow_ops import FIFOQueue
from dtfnb.ops.variables import Variable, global_variables, report_uninitialized_variables
from dtfnb.train.optimizer import WrappingOptimizer
from dtfnb.train.queue_runner import QueueRunner
from dtfnb.train.session_run_hook import SessionRunHook

log = logging.getLogger("dtfnb.train")


class SyncReplicasOptimizer(WrappingOptimizer):
    """Aggregates the gradients of replicas and applies them once per global step.

    Features are graphs: it needs no runtime support. Each variable gets a
    ConditionalAccumulator on its device; each worker's `train_op` applies its
    gradients there (a stale one, computed before the current global step, is
    dropped) and takes a token from a FIFOQueue. The chief's queue runner takes
    `replicas_to_aggregate` gradients from every accumulator, applies their mean
    with the wrapped optimizer, increments the global step and puts one token per
    worker back.

    Usage (between-graph replication, one graph and session per worker):

    ```python
    opt = tf.train.GradientDescentOptimizer(0.1)
    opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=2,
                                         total_num_replicas=3)
    train_op = opt.minimize(loss, global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=(task_index == 0))
    with tf.train.MonitoredTrainingSession(master=server.target,
                                           is_chief=(task_index == 0),
                                           hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    # Without MonitoredTrainingSession: run hook.begin() before finalizing the
    # graph and hook.after_create_session(sess, coord) once the session exists.
    ```

    Each run of `train_op` offers one gradient per variable and takes one token.
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(opt, use_locking, name)
        log.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                 replicas_to_aggregate, total_num_replicas)
        # The accumulators report every replica's gradient; the aggregated update, always
        # fresh, would only add a staleness of 0 under the chief's name.
        opt._reports_staleness = False
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []  # (accumulator, device of its variable)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the synchronisation; returns the replicas' train op (a Tensor: the new
        local step).

        The train op offers each gradient to its variable's accumulator, then dequeues a
        token into `sync_rep_local_step`. The chief's part (take, apply, increment
        `global_step`, enqueue tokens) runs in `get_chief_queue_runner()`.

        Raises:
          ValueError: if `grads_and_vars` is empty or `global_step` is None.
        """
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = global_step.graph
        train_ops, aggregated_grads, var_list = [], [], []
        with graph.as_default():
            # The anchor lands on this replica's device; so does the local step beside it,
            # where a replica_device_setter would otherwise put a variable on a ps task.
            local_anchor = control_flow_ops.no_op()
            with graph.colocate_with(local_anchor):
                self._local_step = Variable(0, trainable=False,
                                            collections=[GraphKeys.LOCAL_VARIABLES],
                                            dtype=global_step.dtype.base_dtype,
                                            name="sync_rep_local_step")
            self.local_step_init_op = state_ops.assign(self._local_step, global_step)
            chief_init_ops = [self.local_step_init_op]
            self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

            with graph.name_scope(self._name):
                for grad, var in grads_and_vars:
                    var_list.append(var)
                    with graph.device(var.device):
                        if grad is None:
                            aggregated_grads.append(None)  # passed through
                            continue
                        accumulator, apply, aggregated = self._aggregate(grad, var)
                        train_ops.append(apply)
                        aggregated_grads.append(aggregated)
                        self._accumulator_list.append((accumulator, var.device))

                with graph.device(global_step.device), graph.name_scope(""):
                    update_op = self._opt.apply_gradients(
                        list(zip(aggregated_grads, var_list)), global_step)
                    self._sync_token_queue = FIFOQueue(
                        -1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
                        shared_name="sync_token_q")
                    # The chief's runner gets a queue of its own: closing the real one
                    # on a ps task would end training for every later session.
                    dummy_queue = FIFOQueue(1, int32, shapes=(), name="dummy_queue",
                                            shared_name="dummy_queue")
                    with graph.control_dependencies(train_ops):
                        token = self._sync_token_queue.dequeue()
                    train_op = state_ops.assign(self._local_step, token)
                    with graph.control_dependencies([update_op]):
                        # TensorFlow's read aliases the variable, so its `fill` sees the
                        # increment; dtfnb's snapshot does not: read it after the update.
                        tokens = array_ops.fill([self._tokens_per_step],
                                                global_step.read_value())
                        sync_op = self._sync_token_queue.enqueue_many((tokens,))
                    if self._variable_averages is not None:
                        with graph.control_dependencies([sync_op]):
                            sync_op = self._variable_averages.apply(self._variables_to_average)
                    self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])

                for accumulator, device in self._accumulator_list:
                    with graph.device(device):
                        chief_init_ops.append(
                            accumulator.set_global_step(global_step, name="SetGlobalStep"))
                self.chief_init_op = control_flow_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def _aggregate(self, grad, var):
        """The accumulator of one variable, the op offering `grad` to it, and the op taking
        the aggregated gradient."""
        shared_name = var.name + "/grad_accum"
        if isinstance(grad, IndexedSlices):
            # No shape, as TensorFlow's: the wrapped optimizer applies the rows taken.
            accumulator = SparseConditionalAccumulator(grad.dtype, shape=(),
                                                       shared_name=shared_name)
            apply = accumulator.apply_indexed_slices_grad(grad, local_step=self._local_step)
            return accumulator, apply, accumulator.take_indexed_slices_grad(
                self._replicas_to_aggregate)
        if not isinstance(grad, Tensor):
            raise ValueError("Unknown grad type!")
        accumulator = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                             shared_name=shared_name)
        apply = accumulator.apply_grad(grad, local_step=self._local_step)
        return accumulator, apply, accumulator.take_grad(self._replicas_to_aggregate)

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: aggregate, apply, increment the step, hand out
        tokens.

        Raises:
          ValueError: if called before apply_gradients().
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """The op filling the token queue before the first step (default:
        replicas_to_aggregate tokens), run once by the chief.

        Raises:
          ValueError: if called before apply_gradients(), or with fewer tokens than
            replicas_to_aggregate - total_num_replicas.
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        graph = self._global_step.graph
        with graph.as_default(), graph.device(self._global_step.device), graph.name_scope(""):
            if num_tokens > 0:
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
            return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A SessionRunHook that initializes the local step and, on the chief, the
        accumulators' steps and the tokens, and starts the chief's queue runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        """Runs the local init (and, on the chief, fills the tokens and starts the runner).

        Raises:
          RuntimeError: if global variables are still uninitialized.
        """
        uninitialized = _uninitialized(session, self._ready_for_local_init_op)
        if uninitialized:
            raise RuntimeError(
                f"Init operations did not make model ready for SyncReplicasOptimizer "
                f"local_init. Init op: {self._local_init_op.name}, error: Model is not ready "
                f"for SyncReplicasOptimizer local init. Variables not initialized: "
                f"{', '.join(uninitialized)}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)


def _uninitialized(session, ready_op):
    """The names `ready_op` reports, or its error's message when it cannot run."""
    try:
        names = session.run(ready_op)
    except (errors.FailedPreconditionError, errors.NotFoundError) as err:
        return [err.message]
    return [n.decode() if isinstance(n, bytes) else str(n) for n in names]
