"""A running step: deadline, cancellation, the first error, and its rendezvous."""

import os
import threading
import time

import numpy as np

from dtfnb.base.errors import CancelledError, DeadlineExceededError
from dtfnb.runtime.rendezvous import Rendezvous

# Step ids name a step on every task it touches, and a task trusts a tensor or a cleanup
# for a step only as far as its id is secret (a peer that knew it could feed or cancel
# that step): each is drawn from the OS's CSPRNG, eight bytes at a time from a buffer,
# which costs a tenth of a call to os.urandom per step. The buffer is dropped in a forked
# child (task processes may be forked from one that drew some), lest both draw alike.
_ID_BATCH_BYTES = 4096
_random_ids = iter(())


def _drop_random_ids():
    global _random_ids
    _random_ids = iter(())


def new_step_id():
    """A random, positive int64: unguessable, and unique among the steps of a cluster."""
    global _random_ids
    value = next(_random_ids, None)
    if value is None:  # two threads may both refill: each still gets a fresh draw
        _random_ids = iter(memoryview(os.urandom(_ID_BATCH_BYTES)).cast("Q"))
        value = next(_random_ids)
    return value >> 1


os.register_at_fork(after_in_child=_drop_random_ids)


# Longer limits are none: threads and gRPC cannot wait for centuries (they overflow).
_CENTURY_SECONDS = 100 * 365 * 86400


def deadline_seconds(timeout_ms):
    """A run's time limit in seconds from its `timeout_in_ms`, or None for none. As in
    TensorFlow, zero or less means none, and so does one beyond a century
    (RunOptions(timeout_in_ms=2**62) waits forever there too)."""
    seconds = timeout_ms / 1000
    return seconds if 0 < seconds <= _CENTURY_SECONDS else None


def _deadline(timeout_ms):
    seconds = deadline_seconds(timeout_ms)
    return None if seconds is None else time.monotonic() + seconds


TIMEOUT_MESSAGE = "Timed out waiting for notification"

# A step's deadline is decided in one place: by the kernel that waits on a resource (a
# queue, a reader, an accumulator), which gives back what it took when it gives up. Every
# other wait, for another partition or another task, lasts GRACE_SECONDS longer, only as
# a backstop against a peer that vanished: were it to expire at the deadline too, a
# dequeue that completed just in time on another task would have its elements dropped.
GRACE_SECONDS = 1.0


class Step:
    """State shared by every partition of one `run` on one task.

    The first error aborts the step: every blocked kernel wakes up (through the
    cancellation callbacks) and fails, so no partition waits forever. `outbound`,
    set by a worker of a cluster, carries sends to devices of other tasks: it may
    hold them until `flush()`, which an executor calls before its thread waits.

    A kernel waits through its step, so that a deadline or an abort ends the wait:

    ```python
    import threading
    from dtfnb.base.errors import CancelledError
    from dtfnb.runtime.step import Step

    step = Step(timeout_ms=5000)     # a RunOptions deadline
    cond = threading.Condition()
    threading.Timer(0.1, step.abort, [CancelledError(None, None, "stop")]).start()
    with cond:
        try:
            step.wait(cond, lambda: False)    # what a blocked dequeue does
        except CancelledError as error:
            print("woken:", error.message)
    ```

    Args:
      timeout_ms: the run's deadline in milliseconds (0: none).
      feeds: tensor name -> value, read by `_Feed` kernels.
      stats: a StepStatsCollector when the run is traced, else None.
      step_id: the id the master chose (a worker of a cluster passes it on).

    `sent`: None, or, in a step whose master publishes it to a watcher, the bytes its
    sends moved by rendezvous key (`count_sent`), summed over loop iterations.
    """

    __slots__ = ("id", "deadline", "feeds", "fetched", "stats", "error", "_rendezvous",
                 "outbound", "copy_fetches", "_lock", "_callbacks", "_succeeded", "cancelling",
                 "inter_op_pool", "sent")

    def __init__(self, timeout_ms=0, feeds=None, stats=None, step_id=None):
        self.id = new_step_id() if step_id is None else step_id
        self.deadline = _deadline(timeout_ms) if timeout_ms else None
        self.feeds = feeds or {}
        self.fetched = {}
        self.stats = stats
        self.error = None
        self._rendezvous = None  # made when a partition first sends or receives
        self.outbound = None
        # A fetch handed to the user is copied, so that changing it leaves variables be.
        self.copy_fetches = True
        self._lock = threading.Lock()
        self._callbacks = {}
        self._succeeded = False
        self.cancelling = None  # the error a cancel request (see `cancel`) would end it with
        # Where its ops that may run side by side go (runtime/pools.py): None, each
        # device's own inter-op pool.
        self.inter_op_pool = None
        self.sent = None  # measured only when asked: an unwatched step pays nothing

    # -- cancellation ------------------------------------------------------------------

    def abort(self, error):
        """Records the first error and wakes every kernel blocked in this step."""
        with self._lock:
            if self.error is not None or self._succeeded:
                return
            # A step asked to stop fails as cancelled, whatever broke next (its session's
            # graphs may be gone from its tasks by then).
            self.error = self.cancelling or error
            callbacks = [callback for callback, _ in self._callbacks.values()]
        for callback in callbacks:
            callback()

    def cancel(self, error):
        """Asks the step to stop (its session is closing) and leaves the verdict to its
        parts: a kernel still waiting gives up, failing the step with `error`, and other
        tasks are told; a kernel that is done stays done, so a step whose parts all end
        well succeeds, and what its dequeues took reaches the caller. Aborting at once
        instead would drop what another task had just dequeued for it."""
        with self._lock:
            if self.error is not None or self._succeeded or self.cancelling is not None:
                return
            self.cancelling = error
            callbacks = [callback for callback, on_cancel in self._callbacks.values()
                         if on_cancel]
        for callback in callbacks:
            callback()

    def succeed(self):
        """Ends the step well, unless it failed already (then False): from here on nothing
        aborts it, so what its kernels took is the caller's and is never given back."""
        with self._lock:
            if self.error is None:
                self._succeeded = True
                self._callbacks.clear()
            return self._succeeded

    def on_abort(self, callback, on_cancel=False):
        """Registers `callback` to run on abort (and, with `on_cancel`, on a cancel
        request too); returns a token for `remove_on_abort`."""
        token = object()
        with self._lock:
            if self.error is None and not (on_cancel and self.cancelling is not None):
                self._callbacks[token] = (callback, on_cancel)
                return token
        callback()
        return token

    def remove_on_abort(self, token):
        """Unregisters the callback that `on_abort` returned `token` for."""
        with self._lock:
            self._callbacks.pop(token, None)

    def remaining(self, grace=0.0):
        """Seconds until the deadline (+ `grace`): None without one, 0 once it has passed."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline + grace - time.monotonic())

    def expire(self):
        """Fails the step for its deadline. As in TensorFlow the error names no node: the
        step ran out of time, whichever kernel was waiting then (it fails as cancelled)."""
        self.abort(DeadlineExceededError(None, None, TIMEOUT_MESSAGE))

    def check(self, grace=0.0, cancellable=True):
        """Raises CancelledError if the step was aborted, or has expired at its deadline
        (+ `grace`), or (`cancellable`) was asked to stop."""
        if self.error is None and self.deadline is not None and self.remaining(grace) == 0:
            self.expire()
        if cancellable and self.cancelling is not None:
            self.abort(self.cancelling)
        if self.error is not None:
            raise CancelledError(None, None, "Step was cancelled")

    def wait(self, cond, ready, backstop=False):
        """Waits on `cond` (held by the caller) until `ready()`, an abort or the deadline;
        `backstop`: a wait for another partition, which does not decide the deadline and
        gives up GRACE_SECONDS after it."""
        if ready():
            return
        # A backstop wait ends with what it waits for, even when the step is asked to
        # stop: that part decides.
        grace = GRACE_SECONDS if backstop else 0.0
        token = self.on_abort(lambda: _notify(cond), on_cancel=not backstop)
        try:
            while not ready():
                self.check(grace, cancellable=not backstop)
                cond.wait(self.remaining(grace))
        finally:
            self.remove_on_abort(token)

    def sleep(self, seconds):
        """Waits `seconds` (a slow task's emulated compute), unless the step is aborted,
        asked to stop or reaches its deadline first: then raises as `check` does."""
        due = time.monotonic() + seconds
        cond = threading.Condition()
        with cond:
            token = self.on_abort(lambda: _notify(cond), on_cancel=True)
            try:
                while (left := due - time.monotonic()) > 0:
                    self.check()
                    remaining = self.remaining()
                    cond.wait(left if remaining is None else min(left, remaining))
                self.check()
            finally:
                self.remove_on_abort(token)

    # -- tensors between partitions ------------------------------------------------------

    @property
    def rendezvous(self):
        """Where this step's partitions exchange tensors: made on first use, or the task's
        one for this step id (set by a worker of a cluster).
        """
        if self._rendezvous is None:
            with self._lock:
                if self._rendezvous is None:
                    self._rendezvous = Rendezvous()
        return self._rendezvous

    @rendezvous.setter
    def rendezvous(self, rendezvous):
        self._rendezvous = rendezvous

    def send(self, key, value):
        """Sends a tensor to another partition: into the rendezvous, or held by `outbound`
        (which counts what it sends)."""
        if self.outbound is None:
            if self.sent is not None:
                self.count_sent(key, tensor_bytes(value))
            self.rendezvous.send(key, value)
        else:
            self.outbound.send(self, key, value)

    def count_sent(self, key, nbytes):
        """Adds `nbytes` to what the transfer under `key` moved in this step (`sent`)."""
        with self._lock:
            self.sent[key] = self.sent.get(key, 0) + nbytes

    def flush(self):
        """Passes on what `outbound` holds: this thread is about to wait, or to finish."""
        if self.outbound is not None:
            self.outbound.flush(self)

    def recv(self, key):
        """Receives the tensor under `key` from the rendezvous, waiting for it."""
        return self.rendezvous.recv(self, key)


_FLOAT32 = np.dtype(np.float32)


def tensor_bytes(value, float_type=None):
    """The bytes of a sent tensor's data, as on the wire: float32 values travel as
    `float_type` (a DType; ConfigProto.transfer_float_type) when one is given; a control
    edge's value (None) and a dead one have none."""
    nbytes = getattr(value, "nbytes", 0)
    if float_type is not None and getattr(value, "dtype", None) == _FLOAT32:
        return nbytes // 4 * float_type.size
    return nbytes


def _notify(cond):
    with cond:
        cond.notify_all()
