"""Queues as a task's resources: FIFO, RandomShuffle, PaddingFIFO and Priority queues.

Plain Python under one lock, shaped like TensorFlow's QueueBase: every enqueue,
dequeue and close is an *attempt* waiting in one of two lines (enqueues and
closes in one, dequeues in the other), and `_flush` serves each line strictly in
order whenever the queue changes. A dequeue of many takes elements as they come,
so it completes even when n exceeds the capacity. One deliberate difference: nothing
is lost to a deadline or a cancellation. An attempt that times out or is cancelled
puts what it had taken back in front, and so does a dequeue whose step fails
afterwards for its deadline, a cancellation or a lost task (TensorFlow loses those
elements). A step that fails on the data itself (an op after the dequeue raised)
keeps them dequeued, as in TensorFlow, so a bad element cannot come back forever.

Elements are tuples of numpy arrays, one per component, owned by the queue.
"""

import collections
import heapq
import itertools
import threading

import numpy as np

from dtfnb.base import philox
from dtfnb.base.dtypes import c_type_name
from dtfnb.base.errors import (
    AbortedError,
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    OutOfRangeError,
    UnavailableError,
)
from dtfnb.base.locks import BackoffRLock
from dtfnb.base.stacking import stack

_NO_PROGRESS, _PROGRESS, _COMPLETE = range(3)
# The step failures that say nothing about the elements a dequeue took: they go back.
_GIVE_BACK_ON = (DeadlineExceededError, CancelledError, UnavailableError, AbortedError)


class _Attempt:
    """One waiting operation of `step`: `run(attempt)` advances it under the queue's lock."""

    __slots__ = ("step", "run", "rows", "wanted", "taken", "allow_small", "batch", "done",
                 "error", "waiting")

    def __init__(self, step, run, rows=(), wanted=0, allow_small=False, batch=False):
        self.step = step
        self.run = run
        self.rows = collections.deque(rows)  # an enqueue's elements still to add
        self.wanted = wanted                 # a dequeue's elements still to take
        self.taken = []
        self.allow_small = allow_small
        self.batch = batch                   # a dequeue_many or dequeue_up_to
        self.done = False
        self.error = None
        self.waiting = False   # its thread waits on the queue's condition (see _flush)


def shape_string(shape):
    """TensorFlow's DebugString of a (partial) shape: [2,3], [?,2], <unknown>."""
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _fits(shape, expected):
    return expected is None or shape == expected or (len(shape) == len(expected) and all(
        e is None or e == d for d, e in zip(shape, expected)))


class FIFOQueue:
    """A bounded first-in first-out queue of tuples (capacity < 0: unbounded).

    `shapes` is a list of tuples (None for an unknown dimension), or empty when the
    components have no specified shapes. `on_change(queue)` is called, under the
    lock, whenever the size or the closed state changed.

    The state behind `tf.FIFOQueue`: its kernels call these methods with their step,
    and a blocked enqueue or dequeue waits under the step's deadline and
    cancellation. Closed and empty, a dequeue raises OutOfRangeError.

    ```python
    import numpy as np
    from dtfnb.base import dtypes
    from dtfnb.resources.queues import FIFOQueue
    from dtfnb.runtime.step import Step

    step = Step()
    queue = FIFOQueue("q", [dtypes.int32], [()], capacity=2)
    queue.enqueue_many(step, [np.int32([1, 2])])
    print(queue.size(), queue.dequeue(step))    # 2 (np.int32(1),)
    queue.close(step)
    print(queue.dequeue_many(step, 1))          # the rest; then OutOfRangeError
    ```
    """

    kind = "FIFOQueue"  # how its messages name it
    op = "FIFOQueueV2"  # the op that makes it; batch dequeues name it after the op

    def __init__(self, name, dtypes, shapes, capacity, on_change=None):
        self.name = name
        self.dtypes = list(dtypes)
        self.shapes = [tuple(s) if s is not None else None for s in shapes or ()]
        self._np_dtypes = [np.dtype(t.as_numpy_dtype) for t in self.dtypes]
        self.capacity = capacity
        self.closed = False
        self.enqueued = 0
        self.dequeued = 0
        self._on_change = on_change
        # Re-entrant: a step's abort callback notifies the condition from any thread,
        # including one already holding it. Queue runners take it for every element:
        # taken directly, it saves the Condition's Python-level __enter__ and __exit__.
        self._lock = BackoffRLock()
        self._cond = threading.Condition(self._lock)
        self._enqueues = collections.deque()
        self._dequeues = collections.deque()
        self._items = self._new_store()

    # -- storage: what the subclasses change --------------------------------------------

    def _new_store(self):
        return collections.deque()

    def _push(self, row):
        self._items.append(row)

    def _pop(self):
        return self._items.popleft()

    def _restore(self, rows):
        """Puts taken elements back where they came from: the front, in order."""
        self._items.extendleft(reversed(rows))

    def _available(self):
        return len(self._items)

    # -- what kernels call ---------------------------------------------------------------

    def __len__(self):
        return len(self._items)

    def size(self):
        """The number of elements in the queue now."""
        with self._lock:
            return len(self._items)

    def matches(self, op, dtypes, shapes, capacity, **_):
        """Raises InvalidArgumentError unless the op `op` asks for this shared queue."""
        self._match_op_and_capacity(op, capacity)
        self._match_components(dtypes, shapes)

    def _match_op_and_capacity(self, op, capacity):
        if op != self.op:
            raise InvalidArgumentError(None, None, f"Expected {self.op[:-2]}, found {op}")
        if capacity != self.capacity:
            raise InvalidArgumentError(None, None, f"Shared queue '{self.name}' has capacity "
                                       f"{self.capacity} but requested capacity was {capacity}")

    def _match_components(self, dtypes, shapes):
        prefix = f"Shared queue '{self.name}' has"
        if list(dtypes) != self.dtypes:
            have = ", ".join(c_type_name(t) for t in self.dtypes)
            want = ", ".join(c_type_name(t) for t in dtypes)
            raise InvalidArgumentError(None, None, f"{prefix} component types {have} but "
                                       f"requested component types were {want}")
        shapes = [tuple(s) if s is not None else None for s in shapes or ()]
        if not self._same_shapes(shapes):
            have = ", ".join(shape_string(s) for s in self.shapes)
            want = ", ".join(shape_string(s) for s in shapes)
            raise InvalidArgumentError(None, None, f"{prefix} component shapes [{have}] but "
                                       f"requested component shapes were [{want}]")

    def _same_shapes(self, shapes):
        return shapes == self.shapes

    def enqueue(self, step, components):
        """Adds one element (a tuple of components), waiting while the queue is full."""
        components = self._own(components)
        self._validate(components)
        self._wait(step, _Attempt(step, self._run_enqueue, rows=[tuple(components)]),
                   self._enqueues)

    def enqueue_many(self, step, components):
        """Adds the rows of `components` (each sliced along axis 0), waiting for room."""
        components = self._own(components)
        self._validate_many(components)
        if len(components[0]) == 0:  # zero rows succeed, even on a closed queue
            return
        self._wait(step, _Attempt(step, self._run_enqueue, rows=zip(*components)), self._enqueues)

    def dequeue(self, step):
        """One element, as a tuple of arrays."""
        return self._wait(step, _Attempt(step, self._run_dequeue, wanted=1), self._dequeues)[0]

    def dequeue_many(self, step, n, allow_small_batch=False):
        """n elements stacked per component; `allow_small_batch`: dequeue_up_to."""
        if n < 0:
            op = "DequeueUpToOp" if allow_small_batch else "DequeueManyOp"
            raise InvalidArgumentError(None, None, f"{op} requested {n} < 0 elements")
        if not self.shapes:
            raise InvalidArgumentError(None, None, f"{self.kind}'s DequeueMany and DequeueUpTo "
                                       "require the components to have specified shapes.")
        if n == 0:
            return self._batch([])
        attempt = _Attempt(step, self._run_dequeue, wanted=n, allow_small=allow_small_batch,
                           batch=True)
        return self._batch(self._wait(step, attempt, self._dequeues))

    def close(self, step, cancel_pending_enqueues=False):
        """Closes the queue once the pending enqueues are done, or at once cancelling them;
        dequeues then take what is left and fail with OutOfRangeError after.
        """
        if not cancel_pending_enqueues:  # queued behind the pending enqueues
            self._wait(step, _Attempt(step, self._run_close), self._enqueues)
            return
        with self._lock:
            self.closed = True
            for attempt in self._enqueues:
                attempt.error = attempt.error or CancelledError(
                    None, None, "Enqueue operation was cancelled")
                attempt.done = True
            self._enqueues.clear()
            self._flush(changed=True, wake=True)

    def is_closed(self):
        """Whether the queue was closed."""
        with self._lock:
            return self.closed

    def close_on_cleanup(self):
        """A reset of the container closes the queue, so that no waiter is left behind."""
        self.close(None, cancel_pending_enqueues=True)

    # -- validation and batching ---------------------------------------------------------

    def _own(self, components):
        if len(components) != len(self.dtypes):
            want = ", ".join(["resource"] + [c_type_name(t) for t in self.dtypes])
            have = ", ".join(["resource"] + [c_type_name(np.asarray(c).dtype) for c in components])
            raise InvalidArgumentError(None, None, f"Signature mismatch, have: {have}-> "
                                       f"expected: {want}->")
        return [np.array(c, dtype=t, copy=True) for c, t in zip(components, self._np_dtypes)]

    def _validate(self, components):
        for i, (value, expected) in enumerate(zip(components, self.shapes)):
            if not _fits(value.shape, expected):
                raise InvalidArgumentError(None, None, f"Shape mismatch in tuple component {i}. "
                                           f"Expected {shape_string(expected)}, got "
                                           f"{shape_string(value.shape)}")

    def _validate_many(self, components):
        for i, value in enumerate(components):
            if value.ndim == 0:
                raise InvalidArgumentError(None, None, f"Shape mismatch in tuple component {i}."
                                           " EnqueueMany needs a batch dimension, got []")
        batch = components[0].shape[0]
        for i, value in enumerate(components):
            if self.shapes:
                expected = self.shapes[i]
                if not _fits(value.shape, None if expected is None else (batch, *expected)):
                    raise InvalidArgumentError(
                        None, None, f"Shape mismatch in tuple component {i}. Expected "
                        f"{shape_string(None if expected is None else (batch, *expected))}, "
                        f"got {shape_string(value.shape)}")
            elif value.shape[0] != batch:
                raise InvalidArgumentError(
                    None, None, "All input tensors must have the same size in the 0th "
                    f"dimension. Component {i} has {value.shape[0]}, and should have {batch}")

    def _batch(self, rows):
        # rows that enqueue_many sliced hold bytes, not 0-d object arrays: astype keeps
        # a string batch an object array
        return tuple(stack([row[i] for row in rows]).astype(t, copy=False) if rows
                     else np.zeros((0, *self.shapes[i]), dtype=t)
                     for i, t in enumerate(self._np_dtypes))

    # -- the lines of attempts -----------------------------------------------------------

    def _wait(self, step, attempt, line):
        """Queues `attempt` and waits until it is served; returns the elements it took."""
        with self._lock:
            line.append(attempt)
            self._flush(first=line)
            if not attempt.done:
                attempt.waiting = True
                try:
                    step.wait(self._cond, lambda: attempt.done)
                except BaseException:  # timed out or cancelled: leave the line, give back
                    if attempt in line:
                        line.remove(attempt)
                    self._give_back(attempt)
                    self._flush(changed=True)
                    raise
        if attempt.error is not None:
            raise attempt.error
        if attempt.taken and step is not None:
            step.on_abort(lambda: self._take_back(attempt.taken, step.error))
        return attempt.taken

    def _take_back(self, rows, error):
        """The step that dequeued `rows` failed afterwards: they go back to the front,
        unless the failure may be their own fault."""
        if isinstance(error, _GIVE_BACK_ON):
            with self._lock:
                self._restore(rows)
                self.dequeued -= len(rows)
                self._flush(changed=True)

    def _give_back(self, attempt):
        self._restore(attempt.taken)
        self.dequeued -= len(attempt.taken)
        attempt.taken = []

    def _flush(self, changed=False, wake=False, first=None):
        """Serves both lines until neither moves (TensorFlow's FlushUnlocked). A line is
        served again only after the other moved; `first` names the one line that changed
        since the last flush, which left both where they could not move. Waiters are
        woken only when a waiting attempt is done (`wake`: the caller ended some): each
        waits for its own, and waking a dequeue_many's thread for every item moved costs
        a thread switch (tens of µs) per item."""
        lines = (self._enqueues, self._dequeues)
        stale = [first is None or first is line for line in lines]
        i = 0 if stale[0] else 1
        while stale[i]:
            stale[i] = False
            moved, woken = self._serve(lines[i])
            if moved:
                changed = stale[1 - i] = True
            wake = wake or woken
            i = 1 - i
        if changed and self._on_change is not None:
            self._on_change(self)
        if wake:
            self._cond.notify_all()

    def _serve(self, line):
        """Serves `line` in order; returns (whether anything moved, whether an attempt whose
        thread waits is done)."""
        progress = woken = False
        while line:
            attempt = line[0]
            if attempt.step is not None and attempt.step.error is not None:
                # Its step failed while it waited (its kernel has not woken up yet):
                # it must neither take nor add more.
                self._give_back(attempt)
                attempt.error = CancelledError(None, None, "Queue operation was cancelled")
                result = _COMPLETE
            else:
                result = attempt.run(attempt)
            if result != _COMPLETE:
                return progress or result == _PROGRESS, woken
            line.popleft()
            attempt.done = progress = True
            woken = woken or attempt.waiting
        return progress, woken

    def _run_enqueue(self, attempt):
        if self.closed:
            attempt.error = CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
            return _COMPLETE
        result = _NO_PROGRESS
        while self.capacity < 0 or len(self._items) < self.capacity:
            self._push(attempt.rows.popleft())
            self.enqueued += 1
            result = _PROGRESS
            if not attempt.rows:
                return _COMPLETE
        return result

    def _run_dequeue(self, attempt):
        size = len(self._items)
        if self.closed and size < attempt.wanted:
            requested = attempt.wanted
            self._give_back(attempt)
            if attempt.allow_small and self._items:
                attempt.wanted = len(self._items)
            else:
                kind = self.op[:-2] if attempt.batch else self.kind
                attempt.error = OutOfRangeError(
                    None, None, f"{kind} '{self.name}' is closed and has insufficient "
                    f"elements (requested {requested}, current size {size})")
                return _COMPLETE
        result = _NO_PROGRESS
        for _ in range(self._available()):
            attempt.taken.append(self._pop())
            attempt.wanted -= 1
            self.dequeued += 1
            result = _PROGRESS
            if attempt.wanted == 0:
                return _COMPLETE
        return result

    def _run_close(self, attempt):
        if self.closed:
            attempt.error = CancelledError(None, None, f"Queue '{self.name}' is already closed.")
        else:
            self.closed = True
        return _COMPLETE


class RandomShuffleQueue(FIFOQueue):
    """Dequeues a uniformly random element; keeps `min_after_dequeue` until closed."""

    kind = "RandomShuffleQueue"
    op = "RandomShuffleQueueV2"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue=0, seed=0, seed2=0,
                 on_change=None):
        super().__init__(name, dtypes, shapes, capacity, on_change)
        self.min_after_dequeue = min_after_dequeue
        self._seeds = (seed, seed2)
        # TensorFlow's generator, so that seeded queues hand out TensorFlow's orders.
        self._indices = philox.WordStream(seed, seed2)

    def matches(self, op, dtypes, shapes, capacity, min_after_dequeue=0, seed=0, seed2=0):
        """Also the same min_after_dequeue, and the same seeds unless (0, 0) asks for any."""
        self._match_op_and_capacity(op, capacity)
        prefix = f"Shared queue '{self.name}' has"
        if min_after_dequeue != self.min_after_dequeue:
            raise InvalidArgumentError(
                None, None, f"{prefix} min_after_dequeue {self.min_after_dequeue} but "
                f"requested min_after_dequeue was {min_after_dequeue}.")
        if (seed or seed2) and (seed, seed2) != self._seeds:
            raise InvalidArgumentError(
                None, None, f"{prefix} random seeds {self._seeds} but requested seeds are "
                f"{(seed, seed2)}.")
        self._match_components(dtypes, shapes)

    def _new_store(self):
        return []

    def _pop(self):
        items = self._items
        index = self._indices.below(len(items))
        items[index], items[-1] = items[-1], items[index]
        return items.pop()

    def _restore(self, rows):
        self._items.extend(rows)

    def _available(self):
        return len(self._items) - (0 if self.closed else self.min_after_dequeue)


class PaddingFIFOQueue(FIFOQueue):
    """A FIFO queue whose batches pad each unknown dimension to the batch maximum."""

    op = "PaddingFIFOQueueV2"

    def _same_shapes(self, shapes):
        """A shared PaddingFIFOQueue takes any compatible shapes."""
        return len(shapes) == len(self.shapes) and all(
            len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))
            for a, b in zip(shapes, self.shapes))

    def _batch(self, rows):
        out = []
        for i, dtype in enumerate(self.dtypes):
            shape = tuple(max((row[i].shape[d] for row in rows), default=0) if dim is None
                          else dim for d, dim in enumerate(self.shapes[i]))
            fill = b"" if dtype.as_numpy_dtype is object else 0
            batch = np.full((len(rows), *shape), fill, dtype=dtype.as_numpy_dtype)
            for k, row in enumerate(rows):
                batch[(k, *(slice(0, d) for d in row[i].shape))] = row[i]
            out.append(batch)
        return tuple(out)


class PriorityQueue(FIFOQueue):
    """Dequeues the element whose first component (an int64 scalar) is lowest."""

    kind = "PriorityQueue"
    op = "PriorityQueueV2"

    def __init__(self, name, dtypes, shapes, capacity, on_change=None):
        super().__init__(name, dtypes, shapes, capacity, on_change)
        self._order = itertools.count()  # equal priorities leave in arrival order

    def _push(self, row):
        heapq.heappush(self._items, (int(row[0]), next(self._order), row))

    def _pop(self):
        return heapq.heappop(self._items)[2]

    def _new_store(self):
        return []

    def _restore(self, rows):
        for row in rows:
            self._push(row)

    def _run_dequeue(self, attempt):
        """A batch is taken only when all of it is there (or the queue is closed), so that
        it comes out in priority order, as TensorFlow's PriorityQueue does."""
        if len(self._items) < attempt.wanted and not self.closed:
            return _NO_PROGRESS
        return super()._run_dequeue(attempt)
