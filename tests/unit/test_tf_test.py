"""tf.test.TestCase, as a user's own TF1 tests use it, and tf.compat's conversions."""

import logging
import unittest

import numpy as np
import pytest

import dtfnb as tf


def run_case(cls):
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(result)
    return result


def test_a_user_test_case_runs_with_sessions_and_assertions():
    seen = {}

    class QueueTest(tf.test.TestCase):
        def testDequeue(self):
            q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
            with self.cached_session() as sess:
                seen["session"] = sess
                self.assertIs(tf.get_default_session(), sess)
                q.enqueue_many([[1.0, 2.0]]).run()
                self.assertAllEqual([1.0, 2.0], q.dequeue_many(2).eval())
                self.assertAllClose({"a": [1.0, (2.0, 3.0)]},
                                    {"a": [1.0 + 1e-7, np.array([2.0, 3.0])]})
                q.close().run()
                with self.assertRaisesOpError("is closed and has insufficient elements"):
                    q.dequeue().eval()

    result = run_case(QueueTest)
    assert result.wasSuccessful(), result.failures + result.errors
    assert seen["session"]._closed, "the cached session is closed when the test ends"


def test_the_cached_session_is_the_same_in_every_thread_and_the_graph_is_seeded():
    seen = {}

    class Threaded(tf.test.TestCase):
        def testEvaluateInAThread(self):
            tf.get_default_graph().switch_to_thread_local()
            with self.cached_session() as sess:
                q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
                enqueue = q.enqueue([1.0])
                def enqueue_in_a_thread():
                    self.evaluate(enqueue)  # no default session here: the cached one
                    with self.cached_session() as in_thread:
                        seen["in thread"] = in_thread

                thread = self.checkedThread(enqueue_in_a_thread)
                thread.start()
                thread.join()
                seen["size"] = self.evaluate(q.size())
                seen["session"] = sess
                seen["seed"] = tf.get_default_graph().seed
            with self.assertRaisesRegex(ValueError, "graph used to get the cached session"):
                with self.cached_session(graph=tf.Graph()):
                    pass

    result = run_case(Threaded)
    assert result.wasSuccessful(), result.failures + result.errors
    assert seen["in thread"] is seen["session"] and seen["size"] == 1
    assert seen["seed"] == 87654321


def test_failures_are_reported():
    class Failing(tf.test.TestCase):
        def testThread(self):
            thread = self.checkedThread(lambda: 1 / 0)
            thread.start()
            thread.join()

        def testWrongMessage(self):
            with self.assertRaisesOpError("no such words"):
                raise tf.errors.OutOfRangeError(None, None, "other words")

        def testNotClose(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])

    result = run_case(Failing)
    failed = sorted(test.id().rsplit(".", 1)[1] for test, _ in result.failures + result.errors)
    assert failed == ["testNotClose", "testThread", "testWrongMessage"]


def test_a_test_named_test_session_is_skipped_as_in_tensorflow():
    class Named(tf.test.TestCase):
        pass

    result = run_case(Named)
    assert [t.id().rsplit(".", 1)[1] for t, _ in result.skipped] == ["test_session"]


def test_compat_converts_text_and_bytes():
    assert tf.compat.as_bytes("é") == "é".encode()
    assert tf.compat.as_text(b"abc") == "abc"
    assert tf.compat.as_str_any(3) == "3"
    assert tf.compat.v1 is tf
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.compat.as_bytes(3)
    assert not tf.executing_eagerly()


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def tf_log():
    """What tf.logging writes, at INFO and above, during the test."""
    records = _Records()
    logger = tf.logging.get_logger()
    logger.addHandler(records)
    tf.logging.set_verbosity(tf.logging.INFO)
    yield records.messages
    tf.logging.set_verbosity(tf.logging.WARN)
    logger.removeHandler(records)


def test_benchmark_times_an_op_and_reports_it(tf_log):
    class QueueBenchmark(tf.test.Benchmark):
        def benchmark_enqueue(self):
            q = tf.FIFOQueue(100, tf.float32, shapes=[[]])
            with tf.Session() as sess:
                return self.run_op_benchmark(sess, q.enqueue([1.0]), burn_iters=1,
                                             min_iters=5, name="enqueue"), sess.run(q.size())

    report, size = QueueBenchmark().benchmark_enqueue()
    assert size == 6 and report["iters"] == 5 and report["wall_time"] > 0
    assert any(m.startswith("Benchmark enqueue: {'iters': 5, 'wall_time'") for m in tf_log)


def test_logging_counts_calls_per_line(tf_log):
    for i in range(5):
        tf.logging.log_every_n(tf.logging.WARN, "every %d", 2, i)
        tf.logging.log_first_n(tf.logging.WARN, "first %d", 1, i)
    assert tf_log == ["every 0", "first 0", "every 2", "every 4"]


def test_assert_all_equal_compares_ragged_nests():
    class Ragged(tf.test.TestCase):
        def testEqual(self):
            self.assertAllEqual([[[15]], 15, [15]], [[[15]], 15, [15]])

        def testUnequal(self):
            self.assertAllEqual([[[15]], 15, [15]], [[[15]], 16, [15]])

    result = run_case(Ragged)
    assert [t.id().rsplit(".", 1)[1] for t, _ in result.failures] == ["testUnequal"]
    assert not result.errors
