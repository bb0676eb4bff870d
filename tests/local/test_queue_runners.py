"""QueueRunner, start_queue_runners, input producers and batching, as TensorFlow 1 has them."""


import numpy as np
import pytest

import dtfnb as tf


def _drain(sess, tensor):
    out = []
    while True:
        try:
            out.append(sess.run(tensor))
        except tf.errors.OutOfRangeError:
            return out


def test_runner_threads_fill_the_queue_and_close_it_when_inputs_end():
    source = tf.FIFOQueue(100, [tf.int32], shapes=[()], name="source")
    fill = source.enqueue_many([tf.range(20)])
    close_source = source.close()
    queue = tf.FIFOQueue(5, [tf.int32], shapes=[()], name="q")
    runner = tf.train.QueueRunner(queue, [queue.enqueue(source.dequeue())] * 5)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == []
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(close_source)
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert len(threads) == 6 and not any(t.daemon for t in threads)
        assert runner.create_threads(sess, coord=coord) == []  # already running
        got = _drain(sess, queue.dequeue())  # ends: every thread saw the source closed
        assert sorted(got) == list(range(20))
        coord.request_stop()
        coord.join(threads)


def test_other_errors_go_to_the_coordinator():
    never_fed = tf.placeholder(tf.float32, shape=())
    queue = tf.FIFOQueue(5, [tf.float32], shapes=[()])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(never_fed)]))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        assert len(threads) == 2 and all(t.daemon for t in threads)
        assert coord.wait_for_stop(10)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            coord.join(threads)


def test_without_a_coordinator_errors_are_kept_and_raised_in_the_thread():
    never_fed = tf.placeholder(tf.float32, shape=())
    queue = tf.FIFOQueue(5, [tf.float32], shapes=[()])
    runner = tf.train.QueueRunner(queue, [queue.enqueue(never_fed)])
    with tf.Session() as sess:
        thread, = runner.create_threads(sess)
        with pytest.raises(tf.errors.InvalidArgumentError):
            thread.run()  # in this thread, to see the error
    assert len(runner.exceptions_raised) == 1


def test_string_input_producer_counts_epochs_in_a_local_variable(tmp_path):
    names = [b"a.csv", b"b.csv", b"c.csv"]
    queue = tf.train.string_input_producer(names, num_epochs=2, shuffle=False)
    assert queue.name == "input_producer"
    assert [v.op.name for v in tf.local_variables()] == ["input_producer/limit_epochs/epochs"]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    name = queue.dequeue()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        assert len(threads) == 2
        assert _drain(sess, name) == names * 2
        coord.request_stop()
        coord.join(threads)


def test_a_producer_without_its_local_variable_initialized_fails_and_closes_its_queue():
    queue = tf.train.string_input_producer([b"a.csv"], num_epochs=1)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(queue.dequeue())
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="uninitialized value input_producer/limit_epochs/epochs"):
            coord.join(threads)


def test_producers_reject_empty_inputs():
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])
    with pytest.raises(ValueError, match="at least one tensor"):
        tf.train.slice_input_producer([])


@pytest.mark.parametrize("num_epochs", [None, 2])
def test_an_empty_file_list_at_run_time_closes_the_queue(num_epochs):
    """As in TensorFlow: an Assert fails the runner's enqueue, and the runner closes the queue."""
    queue = tf.train.string_input_producer(tf.constant([], tf.string), num_epochs=num_epochs)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed"):
            sess.run(queue.dequeue(), options=tf.RunOptions(timeout_in_ms=10000))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[string_input_producer requires a "
                                 r"non-null input tensor\]"):
            coord.join(threads)
    check = tf.get_default_graph().get_operation_by_name("input_producer/Assert/Assert")
    assert check.type == "Assert" and check.get_attr("summarize") == 3


def test_slice_and_range_producers_keep_rows_together():
    features = np.arange(12).reshape(6, 2)
    labels = np.arange(6) * 10
    x, y = tf.train.slice_input_producer([features, labels], num_epochs=1, seed=3)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        rows = _drain(sess, [x, y])
        coord.request_stop()
        coord.join(threads)
    assert sorted(int(b) for _, b in rows) == list(labels)
    assert all(a[0] * 5 == b for a, b in rows)


@pytest.mark.parametrize("items, size, batches", [(10, 4, 2), (20, 3, 6)])
def test_batch_drops_the_short_remainder_unless_asked(items, size, batches):
    value = tf.train.range_input_producer(items, num_epochs=1, shuffle=False).dequeue()
    batch = tf.train.batch([value], batch_size=size)
    assert batch.shape.as_list() == [size]  # one component: a tensor, as in TensorFlow
    assert batch.op.inputs[0].op.name == "batch/fifo_queue"
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        got = _drain(sess, batch)
        coord.request_stop()
        coord.join(threads)
    assert len(got) == batches


def test_shuffle_batch_with_a_smaller_final_batch():
    value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    batch = tf.train.shuffle_batch({"v": value}, batch_size=4, capacity=20,
                                   min_after_dequeue=2, num_threads=2, seed=1,
                                   allow_smaller_final_batch=True)
    assert batch["v"].shape.as_list() == [None]
    assert batch["v"].op.inputs[0].op.name == "shuffle_batch/random_shuffle_queue"
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        got = _drain(sess, batch)
        coord.request_stop()
        coord.join(threads)
    assert sorted(np.concatenate([b["v"] for b in got]).tolist()) == list(range(10))
    assert [len(b["v"]) for b in got] == [4, 4, 2]


def test_batch_join_and_enqueue_many():
    first = tf.constant([[1, 1], [2, 2]])
    second = tf.constant([[3, 3], [4, 4]])
    batch = tf.train.batch_join([[first], [second]], batch_size=4, enqueue_many=True)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        rows = sess.run(batch)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert rows.shape == (4, 2) and set(rows[:, 0]) <= {1, 2, 3, 4}


def test_batching_one_component_gives_a_tensor_and_several_a_list():
    value = tf.constant(1.0)
    assert isinstance(tf.train.batch([value], 2), tf.Tensor)
    assert isinstance(tf.train.batch((value,), 2), tf.Tensor)
    assert isinstance(tf.train.shuffle_batch([value], 2, 10, 2), tf.Tensor)
    assert isinstance(tf.train.batch_join([[value], [value]], 2), tf.Tensor)
    assert isinstance(tf.train.shuffle_batch_join([[value], [value]], 2, 10, 2), tf.Tensor)
    assert isinstance(tf.train.batch([value], 2, dynamic_pad=True), tf.Tensor)
    assert [type(t) for t in tf.train.batch([value, value], 2)] == [tf.Tensor, tf.Tensor]
    assert list(tf.train.batch({"a": value}, 2)) == ["a"]


def test_threads_end_when_the_coordinator_stops():
    value = tf.train.range_input_producer(1000, shuffle=False).dequeue()
    batch = tf.train.batch([value], batch_size=10)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        sess.run(batch)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert not any(t.is_alive() for t in threads)
