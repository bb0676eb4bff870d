"""Ops whose parts run on different tasks of an in-process cluster: control flow that
sends dead values or spans devices, a scatter on its variable's ps, a queue shared between
workers, and a tf.data iterator on a remote task."""

import numpy as np
import pytest

import dtfnb as tf


def test_cond_across_tasks_sends_dead_values_over_the_wire(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(10, name="v")
    with tf.device("/job:worker/task:0"):
        pred = tf.placeholder(tf.bool, [])
        r = tf.cond(pred, lambda: tf.assign_add(v, 1), lambda: v * 2)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert [sess.run(r, {pred: p}) for p in (False, True, False)] == [20, 11, 22]


def test_a_loop_on_a_worker_reads_a_ps_variable_but_may_not_update_it(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(2, name="v")
    with tf.device("/job:worker/task:0"):
        reads = tf.while_loop(lambda i: i < 10, lambda i: i + v, [0])

        def body(i):
            with tf.control_dependencies([tf.assign_add(v, 1)]):
                return i + 1

        updates = tf.while_loop(lambda i: i < 3, body, [0])
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert sess.run(reads) == 10
        # the update runs on the ps (with its variable), the rest of the loop on the worker
        with pytest.raises(tf.errors.UnimplementedError,
                           match="The while loop 'while_1/while_context' spans devices"):
            sess.run(updates)


def test_a_scatter_built_on_a_worker_runs_on_the_variables_ps(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="v")
    with tf.device("/job:worker/task:0"):
        update = tf.scatter_add(v, [1], [[10.0, 10.0]])
    metadata = tf.RunMetadata()
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        sess.run(update.op, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
        assert sess.run(v)[1].tolist() == [13.0, 14.0]
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed[update.op.name] == "/job:ps/replica:0/task:0/device:CPU:0"


def test_queue_on_a_ps_task_shared_between_workers(cluster):
    tasks = cluster({"ps": 1, "worker": 2})
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, tf.float32, shapes=[[2]], shared_name="shared_q")
        enqueue = q.enqueue_many([[[1., 2.], [3., 4.]]])
        dequeue = q.dequeue()
    with tf.Session(tasks["worker", 0].target, graph=graph) as sess1, \
            tf.Session(tasks["worker", 1].target, graph=graph) as sess2:
        sess1.run(enqueue)
        np.testing.assert_array_equal(sess2.run(dequeue), [1., 2.])
        with tf.device("/job:worker/task:1"):
            doubled = dequeue * 2
        np.testing.assert_array_equal(sess2.run(doubled), [6., 8.])
        assert sess1.run(q.size()) == 0


def test_sparse_elements_stay_on_the_iterators_task_and_arrive_as_tensors(cluster):
    """A dataset of SparseTensors on a ps process: its serialized elements (variants) are
    read back into SparseTensors there, and only their indices, values and shape
    travel to the worker that uses them."""
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    with tf.device("/job:ps/task:0"):
        dataset = tf.data.Dataset.range(3).map(
            lambda i: tf.SparseTensor([[0], [2]], tf.stack([i, i + 10]), [4])).batch(2)
        batch = dataset.make_one_shot_iterator().get_next()
    with tf.device("/job:worker/task:0"):
        dense = tf.sparse.to_dense(batch)
    metadata = tf.RunMetadata()
    with tf.Session(tasks.target("worker")) as sess:
        first = sess.run(dense, options=tf.RunOptions(output_partition_graphs=True),
                         run_metadata=metadata)
        second = sess.run(dense)
    assert first.tolist() == [[0, 0, 10, 0], [1, 0, 11, 0]]
    assert second.tolist() == [[2, 0, 12, 0]]
    placed = {node.name: node.device for partition in metadata.partition_graphs
              for node in partition.node}
    assert placed["DeserializeSparse"].startswith("/job:ps/replica:0/task:0")
    assert placed["SparseToDense"].startswith("/job:worker/replica:0/task:0")


def test_iterator_on_a_remote_task(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    with tf.device("/job:ps/task:0"):
        scale = tf.constant(2, tf.int64)
        dataset = tf.data.Dataset.range(4).map(lambda x: x * scale).batch(3)
        iterator = dataset.make_initializable_iterator(shared_name="remote_it")
        next_element = iterator.get_next()
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(next_element)
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                            output_partition_graphs=True)
    with tf.Session(tasks["worker", 0].target) as sess:
        sess.run(iterator.initializer)
        assert sess.run(total, options=options, run_metadata=metadata) == 6
    devices = {node.name: graph_device for partition in metadata.partition_graphs
               for node in partition.node for graph_device in [node.device]}
    assert devices["IteratorGetNext"].startswith("/job:ps/replica:0/task:0")
    with tf.Session(tasks["ps", 0].target) as sess:  # the iterator lives on the ps task
        assert sess.run(next_element).tolist() == [6]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(next_element)
