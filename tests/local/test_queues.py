"""Queues through real sessions: the chapter's examples, TensorFlow's messages, blocking,
closing, timeouts, sharing across sessions, and conservation of elements."""

import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dtfnb as tf
from tests.helpers import in_thread, poll_for


def _timeout(ms):
    return tf.RunOptions(timeout_in_ms=ms)


# -- the chapter's examples ----------------------------------------------------------------

def test_chapter_fifo_queue_enqueue_many_and_dequeue_many():
    q = tf.FIFOQueue(capacity=10, dtypes=[tf.float32], shapes=[[2]], name="q",
                     shared_name="shared_q")
    training_instances = tf.placeholder(tf.float32, shape=(None, 2))
    enqueue_many = q.enqueue_many([training_instances])
    dequeue = q.dequeue()
    dequeue_mini_batch = q.dequeue_many(2)
    assert dequeue_mini_batch.shape.as_list() == [2, 2]
    assert dequeue.shape.as_list() == [2]
    with tf.Session() as sess:
        assert sess.run(enqueue_many, feed_dict={
            training_instances: [[1., 2.], [3., 4.], [5., 6.]]}) is None
        np.testing.assert_array_equal(sess.run(dequeue_mini_batch), [[1., 2.], [3., 4.]])
        np.testing.assert_array_equal(sess.run(dequeue), [5., 6.])


def test_chapter_enqueue_instead_of_enqueue_many_fails_at_build():
    q = tf.FIFOQueue(capacity=10, dtypes=[tf.float32], shapes=[[2]])
    training_instances = tf.placeholder(tf.float32, shape=(None, 2))
    with pytest.raises(ValueError, match=r"Shapes \(\?, 2\) and \(2,\) are incompatible"):
        q.enqueue([training_instances])


def test_chapter_queue_of_tuples():
    q = tf.FIFOQueue(capacity=10, dtypes=[tf.int32, tf.float32], shapes=[[], [3, 2]],
                     name="q", shared_name="shared_q")
    a = tf.placeholder(tf.int32, shape=())
    b = tf.placeholder(tf.float32, shape=(3, 2))
    enqueue = q.enqueue((a, b))
    dequeue_a, dequeue_b = q.dequeue()
    dequeue_as, dequeue_bs = q.dequeue_many(2)
    assert (dequeue_a.name, dequeue_b.name) == ("q_Dequeue:0", "q_Dequeue:1")
    assert dequeue_bs.shape.as_list() == [2, 3, 2]
    with tf.Session() as sess:
        for i in range(3):
            sess.run(enqueue, feed_dict={a: 10 + i, b: np.full((3, 2), i, np.float32)})
        a_val, b_val = sess.run([dequeue_a, dequeue_b])
        assert a_val == 10
        np.testing.assert_array_equal(b_val, np.zeros((3, 2)))
        a_val, b_val = sess.run([dequeue_as, dequeue_bs])
        np.testing.assert_array_equal(a_val, [11, 12])
        np.testing.assert_array_equal(b_val[:, 0, 0], [1., 2.])


def test_chapter_closing_a_queue():
    q = tf.FIFOQueue(capacity=10, dtypes=[tf.float32], shapes=[[2]], name="q",
                     shared_name="shared_q")
    enqueue_many = q.enqueue_many([[[1., 2.], [3., 4.], [5., 6.]]])
    close_q = q.close()
    with tf.Session() as sess:
        sess.run(enqueue_many)
        assert sess.run(close_q) is None
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="FIFOQueue 'shared_q' is closed."):
            sess.run(enqueue_many)
        np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [[1., 2.], [3., 4.]])
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            sess.run(q.dequeue_many(2))
        assert info.value.message.startswith(
            "FIFOQueue 'shared_q' is closed and has insufficient elements (requested 2, "
            "current size 1)")
        assert sess.run(q.size()) == 1  # the failed dequeue_many left it in place
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(2)), [[5., 6.]])
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 2, current size 0"):
            sess.run(q.dequeue_up_to(2))
        with pytest.raises(tf.errors.CancelledError, match="Queue 'shared_q' is already closed."):
            sess.run(close_q)
        sess.run(q.close(cancel_pending_enqueues=True))  # no error on a closed queue
        sess.run(q.enqueue_many([np.zeros((0, 2), np.float32)]))  # zero rows always succeed


def test_chapter_padding_fifo_queue():
    q = tf.PaddingFIFOQueue(capacity=50, dtypes=[tf.float32], shapes=[(None, None)])
    v = tf.placeholder(tf.float32, shape=(None, None))
    enqueue = q.enqueue([v])
    unshaped = tf.placeholder(tf.float32)
    dequeue = q.dequeue_many(3)
    assert dequeue.shape.as_list() == [3, None, None]
    with tf.Session() as sess:
        sess.run(enqueue, feed_dict={v: [[1., 2.], [3., 4.], [5., 6.]]})
        sess.run(enqueue, feed_dict={v: [[1.]]})
        sess.run(enqueue, feed_dict={v: [[7., 8., 9., 5.], [6., 7., 8., 9.]]})
        result = sess.run(dequeue)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch in tuple component 0. Expected \[\?,\?\], "
                                 r"got \[2\]"):
            sess.run(q.enqueue(unshaped), feed_dict={unshaped: [1., 2.]})
    np.testing.assert_array_equal(result, [
        [[1., 2., 0., 0.], [3., 4., 0., 0.], [5., 6., 0., 0.]],
        [[1., 0., 0., 0.], [0., 0., 0., 0.], [0., 0., 0., 0.]],
        [[7., 8., 9., 5.], [6., 7., 8., 9.], [0., 0., 0., 0.]]])
    assert result.dtype == np.float32


def test_padding_queue_pads_strings_and_single_dequeue_is_unpadded():
    q = tf.PaddingFIFOQueue(10, [tf.string], shapes=[[None]])
    v = tf.placeholder(tf.string, shape=(None,))
    enqueue = q.enqueue(v)
    with tf.Session() as sess:
        sess.run(enqueue, feed_dict={v: [b"a", b"b"]})
        sess.run(enqueue, feed_dict={v: [b"c"]})
        sess.run(enqueue, feed_dict={v: [b"d"]})
        assert list(sess.run(q.dequeue())) == [b"a", b"b"]
        assert sess.run(q.dequeue_many(2)).tolist() == [[b"c"], [b"d"]]
        sess.run(enqueue, feed_dict={v: [b"e", b"f", b"g"]})
        sess.run(enqueue, feed_dict={v: [b"h"]})
        assert sess.run(q.dequeue_many(2)).tolist() == [[b"e", b"f", b"g"], [b"h", b"", b""]]
    with pytest.raises(TypeError):
        tf.PaddingFIFOQueue(10, [tf.float32])
    with pytest.raises(ValueError, match="a list of shapes must be provided"):
        tf.PaddingFIFOQueue(10, [tf.float32], shapes=None)


# -- names, graph structure and build-time checks -------------------------------------------

def test_op_names_types_and_default_names():
    q = tf.FIFOQueue(3, tf.float32, shapes=[()], name="q")
    ops = [q.enqueue(1.), q.enqueue_many([[1., 2.]]), q.dequeue(), q.dequeue_many(2),
           q.dequeue_up_to(2), q.size(), q.close(), q.close(), q.is_closed()]
    names = [getattr(t, "op", t).name for t in ops]
    assert names == ["q_enqueue", "q_EnqueueMany", "q_Dequeue", "q_DequeueMany",
                     "q_DequeueUpTo", "q_Size", "q_Close", "q_Close_1", "q_Is_Closed"]
    assert q.queue_ref.op.type == "FIFOQueueV2" and q.queue_ref.dtype == tf.resource
    assert q.name == "q"
    assert q.size().dtype == tf.int32
    assert q.dequeue_up_to(2).shape.as_list() == [None]
    assert [tf.FIFOQueue(1, tf.float32).name, tf.RandomShuffleQueue(1, 0, tf.float32).name,
            tf.PaddingFIFOQueue(1, tf.float32, shapes=[[None]]).name,
            tf.PriorityQueue(1, [tf.float32], shapes=[()]).name] == [
        "fifo_queue", "random_shuffle_queue", "padding_fifo_queue", "priority_queue"]
    assert tf.RandomShuffleQueue(1, 0, tf.float32).queue_ref.op.type == "RandomShuffleQueueV2"
    assert isinstance(q, tf.QueueBase)


def test_build_time_shape_error_and_names_dict():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
        q.enqueue(tf.constant([1., 2., 3.]))
    named = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], []], names=["n", "x"])
    enqueue = named.enqueue({"n": 1, "x": 2.})
    out = named.dequeue()
    assert set(out) == {"n", "x"}
    with pytest.raises(ValueError, match="You must enqueue a dictionary"):
        named.enqueue((1, 2.))
    with tf.Session() as sess:
        sess.run(enqueue)
        assert sess.run(out) == {"n": 1, "x": 2.0}


# -- run-time messages -----------------------------------------------------------------------

def test_run_time_messages():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[2]], name="q")
    v = tf.placeholder(tf.float32)
    unshaped = tf.FIFOQueue(3, tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch in tuple component 0. Expected \[2\], "
                                 r"got \[3\]"):
            sess.run(q.enqueue(v), feed_dict={v: [1., 2., 3.]})
        sess.run(unshaped.enqueue(1.))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="FIFOQueue's DequeueMany and DequeueUpTo require the "
                                 "components to have specified shapes."):
            sess.run(unshaped.dequeue_many(1))
        sess.run(q.close())
        # without a shared_name the resource is named _<counter>_<op name>
        with pytest.raises(tf.errors.CancelledError, match=r"FIFOQueue '_\d+_q' is closed."):
            sess.run(q.enqueue([[1., 2.]]))


def test_feeding_a_dequeue_tensor_replaces_the_op():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    dequeue = q.dequeue()
    with tf.Session() as sess:  # the queue is empty: only the feed can answer
        np.testing.assert_array_equal(sess.run(dequeue * 2, feed_dict={dequeue: [1., 2.]}),
                                      [2., 4.])


def test_shared_queue_with_other_dtypes():
    q1 = tf.FIFOQueue(3, tf.float32, shared_name="shared_q")
    q2 = tf.FIFOQueue(3, tf.int32, shared_name="shared_q")
    with tf.Session() as sess:
        sess.run(q1.size())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Shared queue 'shared_q' has component types float but "
                                 "requested component types were int32"):
            sess.run(q2.size())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="shared_name cannot start with '_':_private"):
            sess.run(tf.FIFOQueue(3, tf.float32, shared_name="_private").size())


def test_random_shuffle_queue_closed_message_and_min_after_dequeue():
    q = tf.RandomShuffleQueue(20, 10, tf.int32, shapes=[()], name="rq", shared_name="rq")
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(11))]))
        sess.run(q.dequeue())  # size 11 → 10: allowed
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=_timeout(30))  # size 10: must keep 10
        sess.run(q.enqueue_many([list(range(11, 13))]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(5), options=_timeout(30))  # 12 − 5 < 10
        assert sess.run(q.size()) == 12  # the timed-out dequeue_many gave its items back
        sess.run(q.close())
        assert len(sess.run(q.dequeue_many(12))) == 12  # the limit is lifted once closed
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"RandomShuffleQueue 'rq' is closed and has insufficient "
                                 r"elements \(requested 1, current size 0\)"):
            sess.run(q.dequeue())


def _shuffled_order(op_seed):
    tf.reset_default_graph()
    tf.set_random_seed(42)
    q = tf.RandomShuffleQueue(50, 0, tf.int32, shapes=[()], seed=op_seed)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(30))]))
        return sess.run(q.dequeue_many(30)).tolist()


def test_random_shuffle_queue_is_reproducible_with_seeds():
    first = _shuffled_order(7)
    assert sorted(first) == list(range(30)) and first != list(range(30))
    assert _shuffled_order(7) == first
    assert _shuffled_order(8) != first


def test_priority_queue_dequeues_lowest_priority_first():
    q = tf.PriorityQueue(10, [tf.string], shapes=[()])
    p = tf.placeholder(tf.int64, ())
    s = tf.placeholder(tf.string, ())
    enqueue = q.enqueue((p, s))
    with tf.Session() as sess:
        for priority, word in [(3, b"c"), (1, b"a"), (2, b"b"), (5, b"e")]:
            sess.run(enqueue, feed_dict={p: priority, s: word})
        priorities, words = sess.run(q.dequeue_many(3))
        assert priorities.tolist() == [1, 2, 3] and words.tolist() == [b"a", b"b", b"c"]
        assert sess.run(q.dequeue())[1] == b"e"


# -- blocking, closing and timeouts ----------------------------------------------------------

def test_timeouts_leave_the_session_usable():
    q = tf.FIFOQueue(2, tf.float32, shapes=[()])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            sess.run(q.dequeue(), options=_timeout(30))
        # The step timed out, not the dequeue: TensorFlow's message names no node.
        assert info.value.message == "Timed out waiting for notification"
        assert info.value.error_code == 4
        sess.run(q.enqueue_many([[1., 2.]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.enqueue(3.), options=_timeout(30))  # full
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(3), options=_timeout(30))
        assert sess.run(q.size()) == 2  # the timed-out dequeue_many gave both back, in order
        assert sess.run(q.dequeue_many(2)).tolist() == [1., 2.]
    config = tf.ConfigProto(operation_timeout_in_ms=30)
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting"):
            sess.run(q.dequeue())
        sess.run(q.enqueue(4.))
        assert sess.run(q.dequeue()) == 4.


def test_an_enqueue_and_a_dequeue_of_one_run_meet():
    # Independent blocking ops of one step run side by side: the dequeue waits for the
    # enqueue whichever comes first (a step of one thread would wait forever).
    q = tf.FIFOQueue(1, tf.float32, shapes=[()])
    dequeued, enqueue = q.dequeue(), q.enqueue(7.0)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=5000)) as sess:
        assert sess.run([dequeued, enqueue])[0] == 7.0
        assert sess.run([enqueue, dequeued])[1] == 7.0
        # A chain of blocking ops (dequeue, then enqueue what it gave) runs in order.
        sess.run(enqueue)
        assert sess.run(q.enqueue(dequeued + 1.0)) is None
        assert sess.run(dequeued) == 8.0


def test_dequeue_many_larger_than_the_capacity_completes():
    q = tf.FIFOQueue(2, tf.int32, shapes=[()])
    with tf.Session() as sess:
        thread, box = in_thread(lambda: sess.run(q.dequeue_many(5)))
        for i in range(5):
            sess.run(q.enqueue(i))
        thread.join(5)
        assert box["value"].tolist() == [0, 1, 2, 3, 4]


def test_close_waits_behind_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[()])
    enqueue_2, close, size = q.enqueue(2), q.close(), q.size()
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        pending, pending_box = in_thread(lambda: sess.run(enqueue_2))
        assert poll_for(lambda: not pending.is_alive(), timeout=0.1) is False
        closing, closing_box = in_thread(lambda: sess.run(close))
        assert poll_for(lambda: not closing.is_alive(), timeout=0.1) is False
        assert not sess.run(q.is_closed()) and sess.run(size) == 1
        assert sess.run(q.dequeue()) == 1  # room: the enqueue, then the close, go through
        pending.join(5)
        closing.join(5)
        assert pending_box == {"value": None} and closing_box == {"value": None}
        assert sess.run(q.is_closed())
        assert sess.run(q.dequeue()) == 2
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 1, current size 0"):
            sess.run(q.dequeue())


def test_close_with_cancel_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[()])
    enqueue_2 = q.enqueue(2)
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        pending, box = in_thread(lambda: sess.run(enqueue_2))
        poll_for(lambda: not pending.is_alive(), timeout=0.05)
        sess.run(q.close(cancel_pending_enqueues=True))
        pending.join(5)
        assert isinstance(box["error"], tf.errors.CancelledError)
        assert "Enqueue operation was cancelled" in box["error"].message
        assert sess.run(q.dequeue()) == 1


def test_session_close_cancels_a_blocked_dequeue():
    q = tf.FIFOQueue(1, tf.int32, shapes=[()])
    dequeue = q.dequeue()
    sess = tf.Session()
    sess.run(q.size())
    blocked, box = in_thread(lambda: sess.run(dequeue))
    assert poll_for(lambda: not blocked.is_alive(), timeout=0.1) is False
    sess.close()
    blocked.join(5)
    assert not blocked.is_alive()
    assert isinstance(box["error"], tf.errors.CancelledError)


def test_queue_events_on_the_monitor():
    q = tf.FIFOQueue(5, tf.int32, shapes=[()], shared_name="watched")
    with tf.Session() as sess:
        events = sess._master.events.subscribe(kinds=["queue"])
        sess.run(q.enqueue_many([[1, 2, 3]]))
        sess.run(q.dequeue())
        sess.run(q.close())
        seen = [events.get(1).queue for _ in range(3)]
        events.close()
    assert [(e.size, e.enqueued, e.dequeued, e.closed) for e in seen] == [
        (3, 3, 0, False), (2, 3, 1, False), (2, 3, 1, True)]
    assert seen[0].name == "watched" and seen[0].capacity == 5
    assert seen[0].summary == "queue/fifo_queue/fraction_of_5_full"
    assert seen[0].device.endswith("/device:CPU:0")


# -- sharing across sessions, containers and tasks -------------------------------------------

def _queue_graph(shared_name=None, container=None):
    graph = tf.Graph()
    with graph.as_default():
        if container is None:
            q = tf.FIFOQueue(10, tf.int32, shapes=[()], shared_name=shared_name)
        else:
            with tf.container(container):
                q = tf.FIFOQueue(10, tf.int32, shapes=[()], shared_name=shared_name)
    return graph, q


def test_sharing_by_shared_name_and_container_across_sessions(cluster):
    server = cluster({"local": 1})["local", 0]

    def size_after_enqueue_elsewhere(first, second):
        graph1, q1 = _queue_graph(*first)
        graph2, q2 = _queue_graph(*second)
        with tf.Session(server.target, graph=graph1) as sess1, \
                tf.Session(server.target, graph=graph2) as sess2:
            sess1.run(q1.enqueue(5))
            return sess2.run(q2.size())

    assert size_after_enqueue_elsewhere(("shared_q",), ("shared_q",)) == 1
    assert size_after_enqueue_elsewhere((None,), (None,)) == 0  # private per session
    assert size_after_enqueue_elsewhere(("c_q", "my_problem_1"), ("c_q", "my_problem_1")) == 1
    assert size_after_enqueue_elsewhere(("d_q", "c1"), ("d_q", "c2")) == 0


# -- conservation under random interleavings -------------------------------------------------

_OPS = st.sampled_from(["enqueue", "enqueue_many", "dequeue", "dequeue_many", "dequeue_up_to"])


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(scripts=st.lists(st.lists(st.tuples(_OPS, st.integers(1, 3)), min_size=1, max_size=6),
                        min_size=2, max_size=4),
       capacity=st.integers(1, 4), close_after=st.integers(0, 10))
def test_every_enqueued_item_is_dequeued_once_or_left(scripts, capacity, close_after):
    tf.reset_default_graph()
    q = tf.FIFOQueue(capacity, tf.int64, shapes=[()])
    one = tf.placeholder(tf.int64, ())
    many = tf.placeholder(tf.int64, (None,))
    n = tf.placeholder(tf.int32, ())
    ops = {"enqueue": q.enqueue(one), "enqueue_many": q.enqueue_many(many),
           "dequeue": q.dequeue(), "dequeue_many": q.dequeue_many(n),
           "dequeue_up_to": q.dequeue_up_to(n)}
    counter = iter(range(10**6))
    lock = threading.Lock()
    sent, maybe_sent, received = set(), set(), []
    runs = [0]
    with tf.Session() as sess:
        close = q.close()

        def play(script):
            for kind, k in script:
                with lock:
                    items = [next(counter) for _ in range(k if kind == "enqueue_many" else 1)]
                    runs[0] += 1
                    if runs[0] == close_after:
                        sess.run(close)
                feed = {one: items[0], many: items, n: k}
                try:
                    out = sess.run(ops[kind], feed_dict=feed, options=_timeout(15))
                except (tf.errors.DeadlineExceededError, tf.errors.OutOfRangeError,
                        tf.errors.CancelledError):
                    if kind.startswith("enqueue"):
                        with lock:
                            maybe_sent.update(items)  # a timed-out enqueue_many keeps a part
                    continue
                with lock:
                    if kind.startswith("enqueue"):
                        sent.update(items)
                    else:
                        received.extend(np.atleast_1d(out).tolist())

        threads = [threading.Thread(target=play, args=(s,)) for s in scripts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sess.run(q.close(cancel_pending_enqueues=True))
        left = []
        while True:
            try:
                left.extend(sess.run(ops["dequeue_up_to"], feed_dict={n: 100}).tolist())
            except tf.errors.OutOfRangeError:
                break
    everything = received + left
    assert len(everything) == len(set(everything)), "an item came out twice"
    assert sent <= set(everything), f"lost: {sorted(sent - set(everything))}"
    assert set(everything) <= sent | maybe_sent


def test_a_waiting_dequeue_many_is_woken_when_served_not_for_every_item():
    from dtfnb.resources.queues import FIFOQueue
    from dtfnb.runtime.step import Step
    queue = FIFOQueue("q", [tf.float32], [()], capacity=-1)
    wakes = []
    wait = queue._cond.wait

    def counted_wait(timeout=None):
        wakes.append(timeout)
        return wait(timeout)

    queue._cond.wait = counted_wait
    taken = []
    waiter = threading.Thread(target=lambda: taken.append(
        queue.dequeue_many(Step(0, {}, None), 50)), daemon=True)
    waiter.start()
    assert poll_for(lambda: wakes)   # it is waiting
    for i in range(50):
        queue.enqueue(Step(0, {}, None), [np.float32(i)])
        time.sleep(0.002)   # room for a woken waiter to wait again
    waiter.join(timeout=10)
    np.testing.assert_array_equal(taken[0][0], np.arange(50, dtype=np.float32))
    assert len(wakes) <= 3   # woken once per item, it would wait 50 times


def test_an_enqueue_many_that_times_out_or_is_cancelled_keeps_what_it_enqueued():
    """As in TensorFlow: the elements that fit stay in the queue, so a producer that
    retries the whole batch enqueues them twice (docs/reliability.md: enqueue batches that fit)."""
    queue = tf.FIFOQueue(2, tf.int32, shapes=[()])
    enqueue = queue.enqueue_many([[1, 2, 3, 4, 5]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(enqueue, options=_timeout(100))
        assert sess.run(queue.dequeue_many(2)).tolist() == [1, 2]
        thread, box = in_thread(lambda: sess.run(enqueue, options=_timeout(10000)))
        assert poll_for(lambda: sess.run(queue.size()) == 2)
        sess.run(queue.close(cancel_pending_enqueues=True))
        thread.join(10)
        assert isinstance(box.get("error"), tf.errors.CancelledError)
        assert sess.run(queue.dequeue_up_to(5)).tolist() == [1, 2]
