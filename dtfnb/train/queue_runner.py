"""tf.train.QueueRunner: threads that run a queue's enqueue ops, and close it when done.

Client code over ordinary ops, as in TensorFlow: each thread runs one enqueue op in a
loop. When every thread has seen the queue closed (OutOfRangeError from its input,
e.g. an exhausted filename queue), the runner closes its queue, so that consumers get
OutOfRangeError in turn. Other errors go to the coordinator. A runner travels in a
meta graph as a QueueRunnerDef (`to_proto`, `from_proto`): the names of its ops.
"""

import logging
import threading
import weakref

from dtfnb.base import errors
from dtfnb.client.session import BaseSession
from dtfnb.framework import api
from dtfnb.framework.default_session import get_default_session
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.protos.queue_runner_pb2 import QueueRunnerDef

log = logging.getLogger("dtfnb.train")


class QueueRunner:
    """Holds a list of enqueue ops for a queue, each to be run in a thread.

    Queues are a convenient TensorFlow mechanism to compute tensors
    asynchronously using multiple threads. A QueueRunner is plain client code over
    ops: each of its threads runs one enqueue op again and again with
    `sess.run`, until the queue closes (an error of
    `queue_closed_exception_types`, OutOfRangeError by default, ends the thread
    quietly) or the coordinator asks to stop, which then runs `cancel_op`. Any
    other error is reported to the coordinator, which re-raises it in `join()`.

    #### Usage:

    ```python
    queue = tf.FIFOQueue(100, tf.float32, shapes=[[]])
    enqueue = queue.enqueue(tf.random_normal([]))
    qr = tf.train.QueueRunner(queue, [enqueue] * 4)   # four threads
    tf.train.add_queue_runner(qr)
    batch = queue.dequeue_many(10)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)   # or qr.create_threads
        print(sess.run(batch))
        coord.request_stop()
        coord.join(threads)
    ```

    Args:
      queue: a Queue.
      enqueue_ops: enqueue ops to run in threads later, one thread each.
      close_op: the op that closes the queue (default: `queue.close()`); run when all
        enqueue threads have ended.
      cancel_op: the op that closes it and cancels pending enqueues (default:
        `queue.close(cancel_pending_enqueues=True)`); run on a coordinator's stop.
      queue_closed_exception_types: a tuple of error types that mean "closed".
      queue_runner_def: a QueueRunnerDef to rebuild from (`from_proto`) instead.
      import_scope: the name scope that `queue_runner_def`'s names are under.
    """
    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
        else:
            self._init_from_args(queue, enqueue_ops, close_op, cancel_op,
                                 queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    def _init_from_args(self, queue, enqueue_ops, close_op, cancel_op,
                        queue_closed_exception_types):
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        if queue_closed_exception_types is not None and (
                not isinstance(queue_closed_exception_types, tuple)
                or not queue_closed_exception_types
                or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                           for t in queue_closed_exception_types)):
            # %-formatted as TensorFlow does: a tuple shows its items.
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "  # noqa: UP031
                            "tf.error types, but saw: %s" % queue_closed_exception_types)
        self._queue = queue
        self._enqueue_ops = enqueue_ops
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = \
            queue_closed_exception_types or (errors.OutOfRangeError,)

    def _init_from_proto(self, queue_runner_def, import_scope):
        # As in TensorFlow, `queue` is then the queue's op (its name is all a def keeps).
        graph = get_default_graph()

        def element(name):
            return graph.as_graph_element(api.prepend_name_scope(name, import_scope))

        self._queue = element(queue_runner_def.queue_name)
        self._enqueue_ops = [element(name) for name in queue_runner_def.enqueue_op_name]
        self._close_op = element(queue_runner_def.close_op_name)
        self._cancel_op = element(queue_runner_def.cancel_op_name)
        self._queue_closed_exception_types = tuple(
            errors.exception_type_from_error_code(code)
            for code in queue_runner_def.queue_closed_exception_types) or (
            errors.OutOfRangeError,)

    @property
    def queue(self):
        """The queue its threads fill."""
        return self._queue

    @property
    def enqueue_ops(self):
        """The enqueue ops, one thread each."""
        return self._enqueue_ops

    @property
    def close_op(self):
        """The op run when every enqueue thread has ended."""
        return self._close_op

    @property
    def cancel_op(self):
        """The op run when the coordinator requests a stop."""
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        """The error types that mean the queue is closed (the thread ends quietly)."""
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions of threads that ran without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self):
        """The string name of the underlying Queue."""
        return self._queue.name

    def _run(self, sess, enqueue_op, coord):
        counted = True
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    counted = False
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        last = self._runs_per_session[sess] == 0
                    if last:
                        self._run_quietly(sess, self._close_op)
                    return
        except Exception as err:
            if coord is None:
                log.error("Exception in QueueRunner: %s", err)
                with self._lock:
                    self._exceptions_raised.append(err)
                raise
            coord.request_stop(err)
        finally:
            if counted:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord):
        coord.wait_for_stop()
        self._run_quietly(sess, self._cancel_op)

    @staticmethod
    def _run_quietly(sess, op):
        try:
            sess.run(op)
        except Exception as err:  # the session may be closing, the queue closed already
            log.debug("Ignored exception: %s", err)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """One thread per enqueue op, plus one that closes the queue when `coord` stops
        (named `QueueRunnerThread-<queue>-<enqueue op>` and `…-close_on_stop`).

        Returns [] if this runner's threads already run for `sess`.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            name=f"QueueRunnerThread-{self.name}-close_on_stop",
                                            daemon=daemon))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if start:
                thread.start()
        return threads

    def to_proto(self, export_scope=None):
        """This runner as a QueueRunnerDef, names relative to `export_scope`; None if its
        queue is outside that scope."""
        if export_scope is not None and not self._queue.name.startswith(export_scope):
            return None
        return QueueRunnerDef(
            queue_name=api.strip_name_scope(self._queue.name, export_scope),
            enqueue_op_name=[api.strip_name_scope(op.name, export_scope)
                             for op in self._enqueue_ops],
            close_op_name=api.strip_name_scope(self._close_op.name, export_scope),
            cancel_op_name=api.strip_name_scope(self._cancel_op.name, export_scope),
            queue_closed_exception_types=[errors.error_code_from_exception_type(cls)
                                          for cls in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """The runner a QueueRunnerDef names, over the ops of the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds `qr` to a collection of the default graph (QUEUE_RUNNERS by default)."""
    api.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every queue runner in the collection; returns them all."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not isinstance(sess, BaseSession):
        # A monitored session started its runners itself.
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {sess.__class__}")
    return [thread for qr in sess.graph.get_collection(collection)
            for thread in qr.create_threads(sess, coord=coord, daemon=daemon, start=start)]
