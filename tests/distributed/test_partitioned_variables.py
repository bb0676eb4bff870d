"""A model whose weight is partitioned over two ps tasks that are separate processes:
trained by two workers, its parts updated where they live, saved by the ps tasks as
slices, restored into another partitioning."""

import numpy as np

import dtfnb as tf
from tests.helpers import Cluster, checkpoint_index, cluster_dict

TRUE_W = np.array([[1.0], [-2.0], [3.0], [0.5], [-1.0], [2.0], [0.0]], np.float32)


def test_a_weight_partitioned_over_two_ps_processes_trains_saves_and_restores(tmp_path):
    cluster = cluster_dict(ps=2, worker=2)
    rng = np.random.default_rng(0)
    inputs = rng.normal(size=(64, 7)).astype(np.float32)
    labels = inputs @ TRUE_W
    with Cluster(cluster, processes=True):
        with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(cluster))):
            w = tf.get_variable("w", [7, 1], initializer=tf.zeros_initializer(),
                                partitioner=tf.fixed_size_partitioner(3))
            x = tf.placeholder(tf.float32, [None, 7], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        saver = tf.train.Saver(sharded=True)
        feed = {x: inputs, y: labels}
        sessions = [tf.Session("grpc://" + address) for address in cluster["worker"]]
        try:
            sessions[0].run(tf.global_variables_initializer())
            first = sessions[0].run(loss, feed)
            for step in range(60):  # the workers take turns, as two replicas would
                sessions[step % 2].run(train, feed)
            last = sessions[1].run(loss, feed)
            metadata = tf.RunMetadata()
            sessions[1].run(train, feed, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
            learned = sessions[0].run(w.as_tensor())
            path = saver.save(sessions[0], str(tmp_path / "model"))
        finally:
            for sess in sessions:
                sess.close()

    assert [v.device for v in w] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert [v.get_shape().as_list() for v in w] == [[3, 1], [2, 1], [2, 1]]
    assert last < first / 100
    np.testing.assert_allclose(learned, TRUE_W, atol=0.05)
    # each part is read and updated on its own ps task, the gradient computed on the worker
    ran = {n.node_name: dev.device for dev in metadata.step_stats.dev_stats
           for n in dev.node_stats}
    ps = ["/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"]
    for i, task in enumerate([0, 1, 0]):
        assert ran[f"w/part_{i}"] == ps[task]
        assert ran[f"GradientDescent/update_w/part_{i}/ApplyGradientDescent"] == ps[task]
    worker = "/job:worker/replica:0/task:1/device:CPU:0"
    assert ran["w/ConcatPartitions/concat"] == worker
    # the gradient is cut into the parts' slices on the worker: a ps gets its rows only
    assert {ran[f"gradients/w/ConcatPartitions/concat_grad/Slice{suffix}"]
            for suffix in ("", "_1", "_2")} == {worker}

    # one entry "w", its slices written by the ps tasks that hold the parts
    entry = checkpoint_index(path).entries["w"]
    assert sorted((s.start[0], s.size[0], s.shard) for s in entry.slices) == [
        (0, 3, 0), (3, 2, 1), (5, 2, 0)]
    tf.reset_default_graph()
    halves = tf.get_variable("w", [7, 1], partitioner=tf.fixed_size_partitioner(2))
    with tf.Session() as sess:
        tf.train.Saver([halves]).restore(sess, path)
        np.testing.assert_array_equal(sess.run(halves.as_tensor()), learned)
