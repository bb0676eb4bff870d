"""`tf.test`: unittest's TestCase with TensorFlow 1's session helpers and assertions.

Each test starts from a fresh default graph; `cached_session()` is one session per
test, closed when the test ends; `checkedThread` re-raises a thread's failure in the
test that joins it. The assertions compare nests of arrays the way TensorFlow's do.
"""

import contextlib
import os
import random
import re
import tempfile
import threading
import time
import unittest
from unittest import mock  # noqa: F401 - tf.test.mock

import numpy as np

from dtfnb import logging as tf_logging
from dtfnb.base import errors
from dtfnb.client.session import Session
from dtfnb.framework.api import set_random_seed
from dtfnb.framework.default_session import get_default_session
from dtfnb.framework.graph import get_default_graph, reset_default_graph
from dtfnb.framework.random_seed import DEFAULT_GRAPH_SEED
from dtfnb.runtime import devices


def main(argv=None):
    """Runs the tests of the calling module, as `tf.test.main()`."""
    unittest.main(argv=argv)


def get_temp_dir():
    """A folder for this process's test files, removed at exit by the OS's temp cleanup."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = tempfile.mkdtemp(prefix="dtfnb-test-")
    return _temp_dir


_temp_dir = None


def is_built_with_cuda():
    """Whether GPU kernels are available (here: whether a GPU is, through CuPy)."""
    return is_gpu_available()


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether CuPy sees a CUDA device (dtfnb's GPU kernels run on CuPy)."""
    return bool(devices.visible_cuda_devices())


def gpu_device_name():
    """The name of the first GPU device ("/device:GPU:0"), or "" if there is none."""
    return "/device:GPU:0" if is_gpu_available() else ""


class Benchmark:
    """A benchmark's base class: `run_op_benchmark` times an op in a session and
    `report_benchmark` logs the figures (tf.logging, INFO), as TensorFlow's."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None,
                         throughput=None, extras=None, name=None, metrics=None):
        """Logs a benchmark's figures (those given) under `name`."""
        figures = {"iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
                   "throughput": throughput, "extras": extras, "metrics": metrics}
        tf_logging.info("Benchmark %s: %s", name or type(self).__name__,
                        {k: v for k, v in figures.items() if v is not None})

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2,
                         min_iters=10, store_trace=False, store_memory_usage=True,
                         name=None, extras=None, mem_limit_bytes=None):
        """Runs `op_or_tensor` burn_iters times, then times min_iters runs; reports and
        returns the median wall time per run."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.perf_counter() - start)
        wall_time = float(np.median(times))
        self.report_benchmark(iters=min_iters, wall_time=wall_time, name=name,
                              extras=extras)
        return {"iters": min_iters, "wall_time": wall_time, "extras": extras or {},
                "name": name}

    def evaluate(self, tensors):
        """Runs `tensors` in the default session and returns their values."""
        return get_default_session().run(tensors)


class _CheckedThread:
    """A thread whose exception fails the test when it is joined."""

    def __init__(self, testcase, target, args=None, kwargs=None):
        self._testcase = testcase
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._error = None
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as err:  # reported by join()
            self._error = err

    def start(self):
        self._thread.start()

    def join(self):
        self._thread.join()
        if self._error is not None:
            self._testcase.fail(f"{type(self._error).__name__} in a checked thread: "
                                f"{self._error}")

    def is_alive(self):
        return self._thread.is_alive()


class TestCase(unittest.TestCase):
    """TensorFlow's test case for graph-mode code."""

    def setUp(self):
        """Each test starts from a new default graph, and seeds it, numpy and `random`
        with TensorFlow's default graph seed."""
        super().setUp()
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        set_random_seed(DEFAULT_GRAPH_SEED)
        self._cached = None
        self._threads = []

    def tearDown(self):
        """Fails if a checked thread was left running, and closes the cached session."""
        for thread in self._threads:
            if thread.is_alive():
                self.fail("a checked thread was not joined")
        if self._cached is not None:
            self._cached.close()
            self._cached = None
        super().tearDown()

    def get_temp_dir(self):
        """A temporary folder of this test's own, created if need be."""
        folder = os.path.join(get_temp_dir(), self.id())
        os.makedirs(folder, exist_ok=True)
        return folder

    # Sessions -----------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False, target=""):
        """A new session on `graph` (default: the default graph), made the default."""
        graph = graph if graph is not None else get_default_graph()
        with Session(target, graph=graph, config=config) as sess:
            with graph.as_default(), sess.as_default():
                yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """This test's one session, made the default with its graph; closed when the test
        ends. Asked with the same `graph` (None: the default graph when first asked), it is
        the same session in every thread."""
        if self._cached is None:
            self._cached = Session(graph=graph, config=config)
            self._cached_graph = graph
        elif self._cached_graph is not graph:
            raise ValueError("The graph used to get the cached session is different than the "
                             "one that was used to create the session. Maybe create a new "
                             "session with self.session()")
        with self._cached.graph.as_default(), self._cached.as_default():
            yield self._cached

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF1's older name for `cached_session`; a test so named is skipped, as in TF."""
        if self.id().endswith(".test_session"):
            self.skipTest('"test_session" is reserved for the session helper')
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def evaluate(self, tensors):
        """Runs `tensors` in the default session, or in this test's session."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802 - TF's name
        """A thread whose exception fails the test when it is joined; `tearDown` fails a test that
        did not join it."""
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # Assertions ---------------------------------------------------------------

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Asserts that two arrays (or nested lists) have the same shape and elements (NaN equals
        NaN)."""
        a, b = self._array(a), self._array(b)
        if a.shape != b.shape and a.size + b.size > 1:
            self.fail(_prefixed(msg, f"shapes differ: {a.shape} vs {b.shape}"))
        if not np.array_equal(a, b) and not (a.dtype.kind == b.dtype.kind == "f"
                                             and np.array_equal(a, b, equal_nan=True)):
            self.fail(_prefixed(msg, f"arrays differ:\n{a!r}\nvs\n{b!r}"))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """Asserts that two arrays differ in shape or in some element."""
        with self.assertRaises(AssertionError):
            self.assertAllEqual(a, b)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Asserts that two arrays, or dicts and lists of them, are elementwise close: `|a - b| <=
        atol + rtol * |b|`."""
        self._all_close(a, b, rtol, atol, msg, path="")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2,
                                      bfloat16_atol=1e-2, msg=None):
        """As assertAllClose, with tolerances no tighter than those given for the dtype (half or
        float32)."""
        a, b = self._array(a), self._array(b)
        if np.float16 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif np.float32 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """Asserts that the floats `f1` and `f2` differ by at most `err`."""
        self.assertTrue(abs(f1 - f2) <= err, _prefixed(msg, f"{f1} != {f2} +/- {err}"))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        """Asserts that two float lists have the same length and elements within `err` of each
        other."""
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        """Asserts that the norm of the difference of two arrays is at most `err`."""
        self.assertTrue(np.linalg.norm(ndarray1 - ndarray2) <= err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """Asserts that a numpy array and a tensor have the same shape."""
        self.assertEqual(list(np_array.shape), tf_tensor.get_shape().as_list(), msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        """Asserts that two device strings name the same device."""
        from dtfnb.base.device_spec import DeviceSpec
        self.assertEqual(DeviceSpec.from_string(device1 or "").to_string(),
                         DeviceSpec.from_string(device2 or "").to_string(), msg)

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        """Asserts that `actual` starts with `expected_start`."""
        self.assertTrue(actual.startswith(expected_start),
                        _prefixed(msg, f"{actual!r} does not start with {expected_start!r}"))

    def assertItemsEqual(self, first, second, msg=None):  # noqa: N802
        """Asserts that two sequences have the same items, in any order."""
        self.assertCountEqual(first, second, msg)

    def assertProtoEquals(self, expected, message, msg=None):  # noqa: N802
        """Asserts that `message` equals `expected`, a proto or its text format."""
        from google.protobuf import text_format
        if isinstance(expected, str):
            expected = text_format.Parse(expected, type(message)())
        self.assertEqual(expected, message, msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """The block raises `exception_type` whose message matches the regex (or for
        which the predicate holds); an op error's message names its op's origins too."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(err):
                return re.search(expected_err_re_or_predicate, _error_text(err))
        try:
            yield
        except Exception as err:
            if not isinstance(err, exception_type) or not predicate(err):
                raise AssertionError(f"Exception of type {type(err)}: {err}") from err
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """A context manager that expects an OpError matching a regular expression or a predicate.
        """
        return self.assertRaisesWithPredicateMatch(errors.OpError,
                                                   expected_err_re_or_predicate)

    # --------------------------------------------------------------------------

    def _all_close(self, a, b, rtol, atol, msg, path):
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, _prefixed(msg, path))
            self.assertIsInstance(b, dict, _prefixed(msg, path))
            self.assertEqual(set(a), set(b), _prefixed(msg, f"keys differ at {path}"))
            for key in a:
                self._all_close(a[key], b[key], rtol, atol, msg, f"{path}[{key!r}]")
        elif _is_nest(a) or _is_nest(b):
            a_array, b_array = _try_array(a), _try_array(b)
            if a_array is not None and b_array is not None:
                self._arrays_close(a_array, b_array, rtol, atol, msg, path)
                return
            self.assertEqual(len(a), len(b), _prefixed(msg, f"lengths differ at {path}"))
            for i, (x, y) in enumerate(zip(a, b)):
                self._all_close(x, y, rtol, atol, msg, f"{path}[{i}]")
        else:
            self._arrays_close(self._array(a), self._array(b), rtol, atol, msg, path)

    def _arrays_close(self, a, b, rtol, atol, msg, path):
        if a.shape != b.shape and a.size + b.size > 1:
            self.fail(_prefixed(msg, f"shapes differ at {path or 'top'}: {a.shape} vs "
                                     f"{b.shape}"))
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            self.fail(_prefixed(msg, f"not close at {path or 'top'} (rtol={rtol}, "
                                     f"atol={atol}):\n{a!r}\nvs\n{b!r}"))

    def _array(self, value):
        if hasattr(value, "eval") and hasattr(value, "graph"):  # a Tensor or Variable
            value = self.evaluate(value)
        try:
            return np.asarray(value)
        except ValueError:  # a ragged nest: its elements are compared as objects
            return np.asarray(value, dtype=object)


def _is_nest(value):
    return isinstance(value, (list, tuple))


def _try_array(value):
    try:
        array = np.asarray(value)
    except ValueError:  # ragged
        return None
    return array if array.dtype != object else None


def _error_text(err):
    text = err.message if isinstance(err, errors.OpError) else str(err)
    op = err.op if isinstance(err, errors.OpError) else None
    while op is not None:
        text += "\nCaused by: " + op.name
        op = getattr(op, "_original_op", None)
    return text


def _prefixed(msg, text):
    return f"{msg}: {text}" if msg else text

