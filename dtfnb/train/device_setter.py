"""replica_device_setter: variables on the parameter servers, everything else on a worker.

Between-graph replication builds the same graph in every worker; this device function
pins the shared state (variables) to the ps tasks, spread by a strategy, and the
computation to the worker, without touching the model code.
"""

from dtfnb.base.device_spec import DeviceSpec
from dtfnb.distributed_runtime.cluster import ClusterSpec

# The op types that hold state a ps keeps for all replicas (TensorFlow's list).
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
    "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
    "MutableDenseHashTableV2", "VarHandleOp")


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """Returns a device function for `tf.device()` when building a graph for replicas.

    ```python
    cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222"]}
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        v1 = tf.Variable(...)  # /job:ps/task:0
        v2 = tf.Variable(...)  # /job:ps/task:1
        v3 = tf.Variable(...)  # /job:ps/task:0
        y = v1 * v2            # /job:worker
    ```

    Ops of a type in `ps_ops` (default STANDARD_PS_OPS) go to `ps_device` with the task
    `ps_strategy(op)` chose (default round-robin); all others to `worker_device`. Inner
    device blocks win field by field (with `merge_devices=False`, any inner device wins
    whole). With `cluster` (a ClusterSpec, dict or ClusterDef), `ps_tasks` is the size of
    its ps job. Returns None (no placement) when there are no ps tasks.
    """
    if cluster is not None:
        cluster = ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in cluster.jobs:
            return None
        ps_tasks = cluster.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    ps_ops = STANDARD_PS_OPS if ps_ops is None else tuple(ps_ops)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")

    def device_function(op):
        if not merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device)
        if ps_device and op.type in ps_ops:
            spec = DeviceSpec.from_string(ps_device)
            # An inner block naming another job takes the op off the ps: no task to choose.
            if spec.job and current.job in (None, spec.job):
                spec.task = ps_strategy(op)
            return spec.merge_from(current).to_string()
        return DeviceSpec.from_string(worker_device).merge_from(current).to_string()

    return device_function


class _RoundRobinStrategy:
    """ps tasks 0, 1, ..., n-1, 0, 1, ... in the order ps ops are created."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Puts each ps op on the ps task with the least load so far (ties: the lowest task).

    Round-robin can pile the big variables on one ps; this balances `load_fn(op)`, e.g.
    `byte_size_load_fn`. The result depends on the order in which variables are created.
    """

    def __init__(self, num_tasks, load_fn):
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        task = self._ps_loads.index(min(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The byte size of the single output of `op` (a variable's value), for load balancing."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    if not output.shape.is_fully_defined():
        raise ValueError(f"Shape {output.shape} is not fully defined")
    return output.shape.num_elements() * output.dtype.base_dtype.size
