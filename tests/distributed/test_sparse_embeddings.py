"""An embedding table in parts on ps tasks, trained from a worker: what crosses between
the tasks each step is the rows looked up and their gradients (indices and rows), never
the table, as the monitor stream's transfer bytes measure."""

import collections
import itertools

import numpy as np

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch

PS0, PS1 = "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"
ROWS, WIDTH = 1000, 16
IDS = np.array([3, 998, 3, 40, 41], np.int64)


def _model(tasks):
    """The table in two parts, placed by replica_device_setter on ps:0 and ps:1, looked up
    and trained by gradient descent on the worker."""
    setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(tasks.spec))
    with tf.device(setter):
        parts = [tf.get_variable(f"embedding_{i}", [ROWS // 2, WIDTH],
                                 initializer=tf.random_normal_initializer(seed=i))
                 for i in range(2)]
        ids = tf.placeholder(tf.int64, [None], name="ids")
        rows = tf.nn.embedding_lookup(parts, ids, partition_strategy="mod")
        loss = tf.reduce_sum(tf.square(rows), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
    return parts, ids, loss, train


def test_a_step_moves_the_rows_looked_up_not_the_table(cluster):
    tasks = cluster({"ps": 2, "worker": 1}, processes=True)
    parts, ids, loss, train = _model(tasks)
    assert {op.type for op in tf.get_default_graph().get_operations()
            if "/update_embedding" in op.name} == {"Mul", "ScatterSub"}
    with watch(tasks.target("worker"), kinds=["plan", "step"], replay=False) as seen:
        with tf.Session(tasks.target("worker")) as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(parts)
            sess.run([train, loss], {ids: IDS})
            after = sess.run(parts)
        events = list(itertools.islice(seen, 6))  # init, the step, the read of the parts
    plans = {e.plan.plan_id: e.plan for e in events if e.WhichOneof("kind") == "plan"}
    (plan,) = [p for p in plans.values() if list(p.fetches) == ["loss:0"]]
    (step,) = [e.step for e in events
               if e.WhichOneof("kind") == "step" and e.step.plan_id == plan.plan_id]

    to_ps, to_worker = collections.Counter(), collections.Counter()
    for transfer, nbytes in zip(plan.transfer, step.transfer_bytes):
        if transfer.dst_device.startswith("/job:ps"):
            to_ps[transfer.dst_device] += nbytes
        else:
            to_worker[transfer.src_device] += nbytes
    # mod 2: ps:0 holds rows 40 and 998, ps:1 rows 3 (looked up twice) and 41. Each ps
    # sends the rows looked up in it, and the shape of its part (the gradient's dense
    # shape, int32 [2]); it gets their ids (int64) and gradient as indices (int64) and
    # rows, and the learning rate.
    row, index = WIDTH * 4, 8
    for ps, looked_up in ((PS0, 2), (PS1, 3)):
        assert to_worker[ps] == looked_up * row + 2 * 4
        assert to_ps[ps] == looked_up * (row + index) + looked_up * index + 4
    assert max(to_ps.values()) < ROWS // 2 * row / 100  # a part is 32000 bytes

    changed = [np.flatnonzero(np.any(a != b, axis=1)) for a, b in zip(after, before)]
    assert [c.tolist() for c in changed] == [[20, 499], [1, 20]]  # rows 40, 998; 3, 41
