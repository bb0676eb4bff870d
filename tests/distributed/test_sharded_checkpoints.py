"""tf.train.Saver(sharded=True) on ps tasks that are separate processes."""

import numpy as np

import dtfnb as tf
from tests.helpers import Cluster, checkpoint_index, cluster_dict, start_task, wait_for_port


def test_sharded_checkpoints_across_ps_processes_survive_a_killed_ps_task(tmp_path):
    """Each ps task writes the shard of its own variables; a ps task killed with SIGKILL and
    restarted has lost them, and restoring the latest checkpoint brings them back."""
    cluster = cluster_dict(ps=2, worker=1)
    target = "grpc://" + cluster["worker"][0]
    with Cluster(cluster, processes=True) as procs:
        with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(cluster))):
            a = tf.Variable([1.0, 2.0], name="a")
            b = tf.Variable(3.0, name="b")
            c = tf.Variable(4, name="c")
        saver = tf.train.Saver(sharded=True)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            metadata = tf.RunMetadata()
            prefix = sess.run(saver.saver_def.save_tensor_name,
                              {saver.saver_def.filename_tensor_name: str(tmp_path / "m-0")},
                              options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                              run_metadata=metadata)
            path = saver.save(sess, str(tmp_path / "m"), global_step=1)
        ran = {n.node_name: dev.device for dev in metadata.step_stats.dev_stats
               for n in dev.node_stats}
        assert ran["save/SaveShard"] == "/job:ps/replica:0/task:0/device:CPU:0"
        assert ran["save/SaveShard_1"] == "/job:ps/replica:0/task:1/device:CPU:0"
        assert prefix == str(tmp_path / "m-0").encode()
        assert {n: e.shard for n, e in checkpoint_index(path).entries.items()} == \
            {"a": 0, "b": 1, "c": 0}

        procs["ps", 1].kill()
        procs["ps", 1].wait()
        procs["ps", 1] = start_task(cluster, "ps", 1)
        wait_for_port(cluster["ps"][1], proc=procs["ps", 1])
        with tf.Session(target) as sess:
            assert list(sess.run(tf.report_uninitialized_variables())) == [b"b"]
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            a_value, b_value, c_value = sess.run([a, b, c])
    np.testing.assert_array_equal(a_value, [1.0, 2.0])
    assert (b_value, c_value) == (3.0, 4)
