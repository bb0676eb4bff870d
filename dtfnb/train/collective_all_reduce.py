"""CollectiveAllReduceOptimizer (dtfnb's own): synchronous data parallelism without a
parameter server, as Horovod's DistributedOptimizer and TensorFlow's
MultiWorkerMirroredStrategy do it, from TensorFlow 1's collective ops.

Every worker keeps its own copy of the variables and averages its gradients with the
other workers' before applying them: the dense ones packed into one flat tensor (one
ring all-reduce per step, as Horovod's tensor fusion), the sparse ones (IndexedSlices of
embedding lookups) all-gathered, or densified first with `sparse_as_dense`. Every copy
then takes the same update, so copies that start equal stay equal.
"""

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, collective_ops, control_flow_ops, joining_ops, state_ops
from dtfnb.ops.variables import global_variables
from dtfnb.train.optimizer import WrappingOptimizer

# Instance keys of the variables' broadcasts start here, those of the gradients at 1.
_BROADCAST_KEYS = 1 << 20


class CollectiveAllReduceOptimizer(WrappingOptimizer):
    """Averages every gradient over the `group_size` workers of group `group_key`, then
    applies the mean with `opt` on each worker's own variables.

    Between-graph replication, one client per worker, no ps:

    ```python
    from dtfnb.extensions import CollectiveAllReduceOptimizer

    with tf.device(f"/job:worker/task:{task}"):      # this worker's copy of the model
        loss = ...
        opt = CollectiveAllReduceOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                           group_size=3, group_key=1)
        train_op = opt.minimize(loss, global_step=global_step)
        same_start = opt.broadcast_variables(is_source=(task == 0))
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(same_start)                          # every copy takes worker 0's values
        for _ in range(steps):                        # every worker runs as many steps
            sess.run(train_op)
    ```

    A group key names one group of workers for the life of their tasks: give each
    training its own. A worker that stops early leaves the others waiting until their
    deadline (`timeout`, in seconds, or the run's); one that dies fails their step at once.
    """

    def __init__(self, opt, group_size, group_key=1, sparse_as_dense=False, timeout=0,
                 use_locking=False, name="CollectiveAllReduce"):
        super().__init__(opt, use_locking, name)
        self._group_size = group_size
        self._group_key = group_key
        self._sparse_as_dense = sparse_as_dense
        self._timeout = timeout
        # The next instance keys: every worker builds the same ops in the same order,
        # so each op gets the same key on every worker.
        self._keys = {"gradient": 1, "broadcast": _BROADCAST_KEYS}

    def _instance(self, kind):
        key = self._keys[kind]
        self._keys[kind] += 1
        return key

    def _collective(self, op, t, *args):
        return op(t, self._group_size, self._group_key, self._instance("gradient"), *args,
                  timeout=self._timeout)

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients, each replaced by its mean over the group."""
        grads_and_vars = self._opt.compute_gradients(*args, **kwargs)
        dense = []
        averaged = {}
        for i, (grad, _) in enumerate(grads_and_vars):
            if isinstance(grad, IndexedSlices) and self._sparse_as_dense:
                grad = convert_to_tensor(grad)
            if isinstance(grad, Tensor):
                dense.append((i, grad))
            elif isinstance(grad, IndexedSlices):
                averaged[i] = self._gathered(grad)
        for dtype in sorted({grad.dtype.base_dtype for _, grad in dense}, key=str):
            same = [(i, grad) for i, grad in dense if grad.dtype.base_dtype == dtype]
            averaged.update(zip([i for i, _ in same], self._packed_mean([g for _, g in same])))
        return [(averaged.get(i, grad), var) for i, (grad, var) in enumerate(grads_and_vars)]

    def _packed_mean(self, grads):
        """The means of `grads` (one dtype), from one all-reduce of them laid end to end."""
        with self._scope("pack"):
            sizes = [g.shape.num_elements() for g in grads]
            if None in sizes:   # a shape known only when the step runs
                sizes = joining_ops.stack([array_ops.size(g) for g in grads])
            flat = joining_ops.concat([array_ops.reshape(g, [-1]) for g in grads], 0)
            mean = self._collective(collective_ops.all_reduce, flat, "Add", "Div")
            parts = joining_ops.split(mean, sizes, num=len(grads))
            return [array_ops.reshape(part, array_ops.shape(g)) for part, g in zip(parts, grads)]

    def _gathered(self, grad):
        """Every worker's rows of a sparse gradient, over the group size: their sum, once
        applied, is the mean."""
        with self._scope("gather"):
            values = self._collective(collective_ops.all_gather, grad.values)
            indices = self._collective(collective_ops.all_gather, grad.indices)
            return IndexedSlices(values / self._group_size, indices, grad.dense_shape)

    def _scope(self, name):
        return get_default_graph().name_scope(f"{self._name}/{name}")

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the (averaged) gradients with the wrapped optimizer."""
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def broadcast_variables(self, is_source, var_list=None):
        """An op that gives every worker's `var_list` (default: all global variables) the
        values of the worker built with `is_source` (one per group), as Horovod's
        broadcast_global_variables: run it once after the initializer."""
        var_list = global_variables() if var_list is None else list(var_list)
        if self._group_size < 2 or not var_list:
            return control_flow_ops.no_op(name="broadcast_variables")
        updates = []
        with self._scope("broadcast"):
            for var in var_list:
                key = self._instance("broadcast")
                args = (var.shape, var.dtype.base_dtype, self._group_size, self._group_key, key)
                if is_source:
                    updates.append(collective_ops.broadcast_send(
                        var.value(), *args, timeout=self._timeout))
                else:
                    updates.append(state_ops.assign(var, collective_ops.broadcast_recv(
                        *args, timeout=self._timeout)))
        return control_flow_ops.group(*updates, name="broadcast_variables")
