"""Event files of a cluster's training: the graph TensorBoard shows has the devices of
the tasks each op ran on, and a step's run metadata has every task's step stats."""

import pytest
from helpers import square_descent

import dtfnb as tf

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")


def test_the_graph_shows_the_ps_and_worker_devices_ops_ran_on(cluster, tmp_path):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    step, x, loss, train = square_descent(tf.train.replica_device_setter(
        cluster=tf.train.ClusterSpec(tasks.spec)))
    summary = tf.summary.scalar("x_squared", loss)
    metadata = tf.RunMetadata()
    with tf.Session(tasks.target("worker")) as sess:
        writer = tf.summary.FileWriter(tmp_path, sess.graph)
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            _, value = sess.run([train, summary], run_metadata=metadata, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE))
            writer.add_summary(value, i)
        writer.add_run_metadata(metadata, "step2", 2)
        writer.close()
    loaded = event_accumulator.EventAccumulator(str(tmp_path))
    loaded.Reload()
    devices = {n.name: n.device for n in loaded.Graph().node}
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    worker = "/job:worker/replica:0/task:0/device:CPU:0"
    assert devices[x.op.name] == devices[step.op.name] == ps
    assert devices[loss.op.name] == worker  # asked for "/job:worker": placed on its task 0
    assert {d.device for d in loaded.RunMetadata("step2").step_stats.dev_stats} >= {ps, worker}
    assert [s.step for s in loaded.Scalars("x_squared")] == [0, 1, 2]
