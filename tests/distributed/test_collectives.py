"""Collective ops between task processes, as between-graph replication uses them: each
member is a client with its own graph and its own session on its own worker task. Checked
against numpy, for group sizes 2…5 and tensor sizes that do not divide among the members;
the bytes each member sends; a member killed mid-training."""

import concurrent.futures
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch
from dtfnb.ops import collective_ops
from tests.helpers import Cluster

WORKERS = 5


def _on_members(tasks, n, build, runs=1, options=None):
    """Builds `build(i)` in member i's own graph under /job:worker/task:i and runs it `runs`
    times in a session on that task, the n members on n threads at once; returns each
    member's results, or raises the first member's error."""
    def member(i):
        with tf.Graph().as_default(), tf.device(f"/job:worker/task:{i}"):
            fetch = build(i)
            with tf.Session(tasks.target("worker", i)) as sess:
                return [sess.run(fetch, options=options) for _ in range(runs)]

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        return [future.result() for future in [pool.submit(member, i) for i in range(n)]]


@pytest.fixture(scope="module")
def workers():
    tasks = Cluster({"worker": WORKERS}, processes=True)
    yield tasks
    tasks.stop()


def _values(i, size, dtype=np.float32):
    return np.random.RandomState(i).uniform(-1, 1, size).astype(dtype)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_all_reduce_equals_numpys_sum_and_mean_for_sizes_the_ring_cannot_divide(workers, n):
    sizes = [1, n + 1, 1001, (3, 7)]   # fewer elements than members, remainders, a matrix

    def build(i):
        return [collective_ops.all_reduce(_values(i, size), n, 100 + n, k, "Add", final)
                for k, size in enumerate(sizes) for final in ("Id",)] + [
            collective_ops.all_reduce(_values(i, 10), n, 100 + n, 10, "Add", "Div"),
            collective_ops.all_reduce(_values(i, 10), n, 100 + n, 11, "Max")]

    results = _on_members(workers, n, build, runs=2)
    expected = [sum(_values(i, size) for i in range(n)) for size in sizes] + [
        sum(_values(i, 10) for i in range(n)) / n,
        np.max([_values(i, 10) for i in range(n)], axis=0)]
    for member in results:
        for run in member:
            for got, want in zip(run, expected):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the ring reduces each chunk once: every member holds the very same bits
    for run in range(2):
        for k in range(len(expected)):
            assert all(np.array_equal(m[run][k], results[0][run][k]) for m in results)


def test_all_gather_and_broadcast_between_processes(workers):
    n = 3

    def build(i):
        gathered = collective_ops.all_gather(np.full([i + 1, 2], i, np.int64), n, 200, 1)
        shape = tf.TensorShape([2, 2])
        if i == 1:
            sent = collective_ops.broadcast_send(tf.constant([[1., 2.], [3., 4.]]), shape,
                                                 tf.float32, n, 200, 2)
        else:
            sent = collective_ops.broadcast_recv(shape, tf.float32, n, 200, 2)
        return gathered, sent

    for ((gathered, broadcast),) in _on_members(workers, n, build):
        np.testing.assert_array_equal(gathered, [[0, 0], [1, 1], [1, 1], [2, 2], [2, 2], [2, 2]])
        np.testing.assert_array_equal(broadcast, [[1, 2], [3, 4]])


@pytest.mark.parametrize("n, elements", [(4, 1 << 18), (3, 100_003)])
def test_each_member_sends_2_n_minus_1_over_n_of_the_tensor(workers, n, elements):
    watches = [watch(workers.target("worker", i), ["traffic"], replay=False) for i in range(n)]
    _on_members(workers, n, lambda i: collective_ops.all_reduce(
        _values(i, elements), n, 300 + n, 1), runs=3)
    tensor_bytes = 4 * elements
    for i, events in enumerate(watches):
        steps = []
        for event in events:
            steps.append({link.peer: (link.sent, link.received) for link in event.traffic.link})
            if len(steps) == 3:
                break
        nxt = f"/job:worker/replica:0/task:{(i + 1) % n}"
        prev = f"/job:worker/replica:0/task:{(i - 1) % n}"
        for links in steps:   # to the next member only, from the previous only
            assert set(links) == {nxt, prev}
            sent, received = links[nxt][0], links[prev][1]
            assert abs(sent - 2 * (n - 1) / n * tensor_bytes) <= 2 * (n - 1) * 4
            assert abs(received - 2 * (n - 1) / n * tensor_bytes) <= 2 * (n - 1) * 4


def test_a_killed_member_fails_every_other_within_the_deadline():
    n = 3
    tasks = Cluster({"worker": n}, processes=True)
    try:
        def build(i):
            return collective_ops.all_reduce(np.ones(1000, np.float32), n, 400, 1)

        # the group formed, and ran once
        for (first,) in _on_members(tasks, n, build):
            np.testing.assert_array_equal(first, np.full(1000, 3.0))
        tasks["worker", 2].kill()
        tasks["worker", 2].wait()
        options = tf.RunOptions(timeout_in_ms=5000)

        def survivor(i):
            with tf.Graph().as_default(), tf.device(f"/job:worker/task:{i}"):
                fetch = build(i)
                with tf.Session(tasks.target("worker", i)) as sess:
                    start = time.monotonic()   # the second run: a member is gone
                    with pytest.raises((tf.errors.UnavailableError,
                                        tf.errors.DeadlineExceededError)):
                        sess.run(fetch, options=options)
                    return time.monotonic() - start

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(survivor, i) for i in range(2)]
            elapsed = [f.result(timeout=30) for f in futures]
        assert max(elapsed) < 5.0 + 2.0
        # a group the dead member never joins: each other member waits until its deadline
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            _on_members(tasks, 2, lambda i: collective_ops.all_reduce(
                np.ones(3, np.float32), n, 401, 1), options=tf.RunOptions(timeout_in_ms=1000))
        assert time.monotonic() - start < 1.0 + 2.0
    finally:
        tasks.stop()


def _model(X, y, vocabulary=None):
    """A linear model, or with `vocabulary` an embedding of ids before it; returns the loss."""
    if vocabulary is not None:
        table = tf.get_variable("table", [vocabulary, 3],
                                initializer=tf.random_normal_initializer())
        X = tf.reduce_sum(tf.nn.embedding_lookup(table, X), axis=1)
    w = tf.get_variable("w", [3, 1], initializer=tf.random_normal_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    return tf.reduce_mean(tf.square(tf.matmul(X, w) + b - y))


def _batches(i, vocabulary=None, steps=4):
    rng = np.random.RandomState(10 + i)
    X = (rng.randint(0, vocabulary, (steps, 8, 2)) if vocabulary
         else rng.normal(size=(steps, 8, 3)).astype(np.float32))
    return X, rng.normal(size=(steps, 8, 1)).astype(np.float32)


@pytest.mark.parametrize("sparse", [None, "gathered", "as dense"])
def test_all_reduce_training_equals_one_worker_on_the_members_batches_together(workers, sparse):
    """Three workers with their own variables, started from worker 0's by the broadcast,
    each training on its own batches, end with the same variables as one worker training
    on the three batches together: the mean of the three gradients."""
    from dtfnb.extensions import CollectiveAllReduceOptimizer
    n, vocabulary = 3, (50 if sparse else None)
    group = {None: 500, "gathered": 501, "as dense": 502}[sparse]

    def member(i):
        X, y = _batches(i, vocabulary)
        with tf.Graph().as_default(), tf.device(f"/job:worker/task:{i}"):
            tf.set_random_seed(i)   # different initial values: the broadcast makes them equal
            X_ = tf.placeholder(tf.int64 if sparse else tf.float32, [None] + list(X.shape[2:]))
            y_ = tf.placeholder(tf.float32, [None, 1])
            loss = _model(X_, y_, vocabulary)
            opt = CollectiveAllReduceOptimizer(tf.train.GradientDescentOptimizer(0.1), n,
                                               group, sparse_as_dense=(sparse == "as dense"))
            grads = opt.compute_gradients(loss)
            if sparse == "gathered":
                assert isinstance(grads[0][0], tf.IndexedSlices)
            train_op = opt.apply_gradients(grads)
            start = opt.broadcast_variables(is_source=(i == 0))
            with tf.Session(workers.target("worker", i)) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(start)
                initial = sess.run(tf.global_variables())
                for step in range(len(X)):
                    sess.run(train_op, {X_: X[step], y_: y[step]})
                return initial, sess.run(tf.global_variables())

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        results = [f.result() for f in [pool.submit(member, i) for i in range(n)]]
    for initial, final in results[1:]:
        for mine, source in zip(initial + final, results[0][0] + results[0][1]):
            np.testing.assert_allclose(mine, source, rtol=1e-6, atol=1e-7)

    batches = [_batches(i, vocabulary) for i in range(n)]
    with tf.Graph().as_default():
        X = np.concatenate([b[0] for b in batches], axis=1)
        y = np.concatenate([b[1] for b in batches], axis=1)
        X_ = tf.placeholder(tf.int64 if sparse else tf.float32, [None] + list(X.shape[2:]))
        y_ = tf.placeholder(tf.float32, [None, 1])
        loss = _model(X_, y_, vocabulary)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            for var, value in zip(tf.global_variables(), results[0][0]):
                var.load(value, sess)
            for step in range(len(X)):
                sess.run(train_op, {X_: X[step], y_: y[step]})
            for got, want in zip(results[0][1], sess.run(tf.global_variables())):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_in_graph_members_on_every_task_of_one_session(workers):
    n = 3
    reduced = []
    for i in range(n):
        with tf.device(f"/job:worker/task:{i}"):
            reduced.append(collective_ops.all_reduce(tf.constant(_values(i, 11)), n, 600, 1,
                                                     "Add", "Div"))
    with tf.Session(workers.target("worker", 0)) as sess:
        for _ in range(3):
            for value in sess.run(reduced):
                np.testing.assert_allclose(value, sum(_values(i, 11) for i in range(n)) / n,
                                           rtol=1e-6)
