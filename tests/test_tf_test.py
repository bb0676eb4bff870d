"""tf.test.TestCase, as a user's own TF1 tests use it, and tf.compat's conversions."""

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
