"""Nothing enqueued is ever lost or doubled: producers and consumers in many sessions on
a queue of a task process, with deadlines from 1 ms, queue closes and cancelled steps.

The queue lives on a ps task; every client session runs on the ps's own master or on a
worker's (whose steps reach the queue over the wire). Every element whose enqueue
succeeded must come out of exactly one successful dequeue, or still be in the queue at
the end; no element may come out twice.
"""

import contextlib
import random
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dtfnb as tf
from tests import helpers
from tests.helpers import poll_for

TIMEOUTS_MS = [1, 2, 5, 10, 30, 100, 300]


@pytest.fixture(scope="module")
def cluster():
    cluster = helpers.cluster_dict(ps=1, worker=1)
    with helpers.Cluster(cluster, processes=True):
        yield {job: "grpc://" + addresses[0] for job, addresses in cluster.items()}


class _Ledger:
    """What the clients saw: elements acknowledged as enqueued, every dequeued one, and
    any unexpected error of a client thread."""

    def __init__(self):
        self.acknowledged = set()
        self.attempted = set()
        self.dequeued = []
        self.failures = []
        self._lock = threading.Lock()

    def client(self, fn, *args):
        def run():
            try:
                fn(*args)
            except BaseException as err:
                self.failures.append(err)
        return threading.Thread(target=run)

    def enqueue_result(self, ids, ok):
        with self._lock:
            self.attempted.update(ids)
            if ok:
                self.acknowledged.update(ids)

    def took(self, ids):
        with self._lock:
            self.dequeued.extend(ids)


class _Pipeline:
    """One queue (unique shared name) and the ops the clients run on it."""

    def __init__(self, name, kind, capacity, min_after_dequeue):
        self.graph = tf.Graph()
        with self.graph.as_default():
            with tf.device("/job:ps/task:0"):
                if kind == "fifo":
                    queue = tf.FIFOQueue(capacity, tf.int64, shapes=[[]], shared_name=name)
                else:
                    queue = tf.RandomShuffleQueue(capacity, min_after_dequeue, tf.int64,
                                                  shapes=[[]], shared_name=name)
            self.ids = tf.placeholder(tf.int64, [None])
            self.n = tf.placeholder(tf.int32, [])
            self.enqueue_many = queue.enqueue_many(self.ids)
            self.dequeue = queue.dequeue()
            self.dequeue_many = queue.dequeue_many(self.n)
            self.dequeue_up_to = queue.dequeue_up_to(self.n)
            self.size = queue.size()
            self.close = queue.close()
            self.close_cancelling = queue.close(cancel_pending_enqueues=True)


def _produce(sess, pipe, ledger, first_id, batches, rng):
    next_id = first_id
    for size in batches:
        ids = list(range(next_id, next_id + size))
        next_id += size
        try:
            sess.run(pipe.enqueue_many, {pipe.ids: ids},
                     options=tf.RunOptions(timeout_in_ms=rng.choice(TIMEOUTS_MS)))
        except (tf.errors.DeadlineExceededError, tf.errors.CancelledError):
            ledger.enqueue_result(ids, ok=False)  # some may be in (TF's enqueue_many too)
            continue
        ledger.enqueue_result(ids, ok=True)


def _consume(sess, pipe, ledger, rng, stop, blocking_at_stop):
    """Dequeues until the queue is closed and empty, its session closed, or `stop`."""
    while True:
        if stop.is_set() and not blocking_at_stop:
            return
        op = rng.choice(["one", "many", "up_to"])
        # Once stopped, a blocking consumer waits long: its session's close must end it.
        timeout = 60_000 if stop.is_set() else rng.choice(TIMEOUTS_MS)
        options = tf.RunOptions(timeout_in_ms=timeout)
        try:
            if op == "one":
                ledger.took([int(sess.run(pipe.dequeue, options=options))])
            else:
                fetch = pipe.dequeue_many if op == "many" else pipe.dequeue_up_to
                ledger.took(sess.run(fetch, {pipe.n: rng.randint(1, 8)}, options=options)
                            .tolist())
        except tf.errors.DeadlineExceededError:
            continue
        except (tf.errors.OutOfRangeError, tf.errors.CancelledError):
            return  # the queue is closed and short, or this session was closed
        except RuntimeError as err:
            assert "closed Session" in str(err)
            return


scenarios = st.fixed_dictionaries({
    "kind": st.sampled_from(["fifo", "shuffle"]),
    "capacity": st.integers(2, 40),
    "min_after_dequeue": st.integers(0, 2),
    "producers": st.lists(st.tuples(st.sampled_from(["ps", "worker"]),
                                    st.lists(st.integers(1, 6), min_size=10, max_size=40)),
                          min_size=1, max_size=3),
    "consumers": st.lists(st.sampled_from(["ps", "worker"]), min_size=1, max_size=3),
    "ending": st.sampled_from(["close", "close_cancelling", "cancel_sessions", "drain"]),
    "seed": st.integers(0, 2**32 - 1),
})

_runs = iter(range(10**6))


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(scenario=scenarios)
@pytest.mark.timeout(600)
def test_every_acknowledged_element_is_dequeued_once_or_still_there(cluster, scenario):
    pipe = _Pipeline(f"conservation_{next(_runs)}", scenario["kind"], scenario["capacity"],
                     scenario["min_after_dequeue"])
    ledger = _Ledger()
    stop = threading.Event()
    rng = random.Random(scenario["seed"])
    with contextlib.ExitStack() as sessions:
        def session(job):
            return sessions.enter_context(tf.Session(cluster[job], graph=pipe.graph))

        consumer_sessions = [session(job) for job in scenario["consumers"]]
        blocking = scenario["ending"] == "cancel_sessions"
        threads = [ledger.client(_produce, session(job), pipe, ledger, k * 1_000_000, batches,
                                 random.Random(rng.random()))
                   for k, (job, batches) in enumerate(scenario["producers"])]
        producers = list(threads)
        # With "cancel_sessions", consumers end blocked (maybe with part of a batch taken)
        # until their sessions close, one after another: what one gives back may complete
        # another's step just as that one's session closes.
        threads += [ledger.client(_consume, sess, pipe, ledger, random.Random(rng.random()),
                                  stop, blocking)
                    for sess in consumer_sessions]
        for t in threads:
            t.start()
        for t in producers:
            t.join(120)
        owner = session("ps")
        if scenario["ending"] in ("close", "close_cancelling"):
            owner.run(getattr(pipe, scenario["ending"]))
        stop.set()
        if blocking:
            kept = scenario["min_after_dequeue"] if scenario["kind"] == "shuffle" else 0
            poll_for(lambda: owner.run(pipe.size) <= kept, timeout=10)
            for sess in consumer_sessions:
                sess.close()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "a client hung"
        assert ledger.failures == []

        # What is left: close (if not yet) and take everything, min_after_dequeue aside.
        if scenario["ending"] not in ("close", "close_cancelling"):
            owner.run(pipe.close)
        left = []
        while (size := owner.run(pipe.size)) > 0:
            left.extend(owner.run(pipe.dequeue_up_to, {pipe.n: size}).tolist())

    out = ledger.dequeued + left
    doubled = sorted(v for v, count in _counts(out).items() if count > 1)
    assert doubled == [], f"dequeued twice: {doubled[:10]}"
    lost = sorted(ledger.acknowledged - set(out))
    assert lost == [], f"{len(lost)} of {len(ledger.acknowledged)} acknowledged lost: {lost[:10]}"
    assert set(out) <= ledger.attempted


def _counts(values):
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def test_a_dequeue_whose_step_fails_later_for_its_deadline_gives_its_elements_back():
    # The dequeue completes; the step then fails at its deadline on another kernel.
    queue = tf.FIFOQueue(10, tf.int64, shapes=[[]])
    other = tf.FIFOQueue(10, tf.int64, shapes=[[]])
    with tf.control_dependencies([queue.dequeue_many(3)]):
        then_wait = other.dequeue()
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[1, 2, 3, 4]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(then_wait, options=tf.RunOptions(timeout_in_ms=50))
        assert sess.run(queue.size()) == 4
        np.testing.assert_array_equal(sess.run(queue.dequeue_many(4)), [1, 2, 3, 4])


def test_a_dequeue_whose_step_fails_on_the_data_keeps_its_elements_dequeued():
    # As in TensorFlow: a bad element must not come back to fail every later step.
    queue = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    quotient = tf.floordiv(10, queue.dequeue())
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[0, 5]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
            sess.run(quotient)
        assert sess.run(quotient) == 2


def _take(sess, pipe, ledger, n):
    try:
        ledger.took(sess.run(pipe.dequeue_many, {pipe.n: n}).tolist())
    except tf.errors.CancelledError:
        pass  # its session closed first


def test_closing_sessions_in_turn_loses_nothing_their_steps_were_given(cluster):
    # On the worker's master, A waits on the ps's queue for 3 elements with 2 taken, and
    # B waits behind it for 2. Closing A's session gives its 2 back, which completes B's
    # step on the ps just as B's session closes: that answer, and the elements in it,
    # must reach B's client or go back to the queue.
    pipe = _Pipeline("closing_in_turn", "fifo", 10, 0)
    with tf.Session(cluster["ps"], graph=pipe.graph) as owner:
        for round_ in range(20):
            ledger = _Ledger()
            a, b = (tf.Session(cluster["worker"], graph=pipe.graph) for _ in range(2))
            take_a = ledger.client(_take, a, pipe, ledger, 3)
            take_a.start()
            owner.run(pipe.enqueue_many, {pipe.ids: [2 * round_, 2 * round_ + 1]})
            poll_for(lambda: owner.run(pipe.size) == 0, timeout=10)
            take_b = ledger.client(_take, b, pipe, ledger, 2)
            take_b.start()
            time.sleep(0.05)  # B's dequeue waits behind A's
            a.close()
            b.close()
            for t in (take_a, take_b):
                t.join(30)
            assert ledger.failures == []
            size = owner.run(pipe.size)
            left = owner.run(pipe.dequeue_many, {pipe.n: size}).tolist() if size else []
            out = sorted(ledger.dequeued + left)
            assert out == [2 * round_, 2 * round_ + 1], f"round {round_}: {out}"
