"""Conditional accumulators as a task's resources: the gradients of one variable, reduced.

Shaped like TensorFlow's ConditionalAccumulatorBase: an accumulator keeps a global
step. A gradient computed at an older local step is stale and dropped; any other is
added. Takes wait in line, in order, until `num_required` gradients are in; the one
served gets their mean (or sum), the accumulator starts over and its global step
advances, so that the stragglers of the step just taken are dropped in turn.

`on_apply(accumulator, local_step, dropped, worker)` is called, under the lock, for
every gradient offered, whether added or dropped.
"""

import collections
import logging
import threading

import numpy as np

from dtfnb.base.dtypes import c_type_name
from dtfnb.base.errors import CancelledError, InvalidArgumentError
from dtfnb.base.locks import BackoffRLock
from dtfnb.base.shapes import as_shape
from dtfnb.resources.queues import shape_string

log = logging.getLogger("dtfnb.resources")

REDUCTION_TYPES = ("MEAN", "SUM")


class _Take:
    """One waiting take_grad of `step`."""

    __slots__ = ("step", "num_required", "done", "result", "error")

    def __init__(self, step, num_required):
        self.step = step
        self.num_required = num_required
        self.done = False
        self.result = None
        self.error = None


class Accumulator:
    """What dense and sparse accumulators share: the global step, the count, the takes.

    Subclasses check (`_validate`), add (`_add`) and reduce (`_reduce`) gradients.

    The state behind `tf.ConditionalAccumulator`, which SyncReplicasOptimizer puts
    beside each variable: a gradient computed at a step older than the global step
    is dropped (stale), and `take_grad` waits for `num_required` of them and
    returns their mean (or sum), starting a new round.

    ```python
    import numpy as np
    from dtfnb.base import dtypes
    from dtfnb.resources.accumulators import ConditionalAccumulator
    from dtfnb.runtime.step import Step

    acc = ConditionalAccumulator("acc", dtypes.float32, (2,))
    acc.apply_grad(0, np.float32([1, 2]))
    acc.apply_grad(0, np.float32([3, 4]))
    print(acc.take_grad(Step(), 2))             # [2. 3.]
    acc.set_global_step(1)
    acc.apply_grad(0, np.float32([9, 9]))       # stale: dropped
    print(acc.num_accumulated())                # 0
    ```
    """

    kind = None

    def __init__(self, name, dtype, shape, reduction_type="MEAN", on_apply=None):
        if reduction_type not in REDUCTION_TYPES:
            raise InvalidArgumentError(None, None, f"Unsupported reduction type "
                                       f"'{reduction_type}': use one of {REDUCTION_TYPES}")
        self.name = name
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.reduction_type = reduction_type
        self.global_step = 0
        self.counter = 0
        self._on_apply = on_apply
        # Re-entrant: a step's abort callback notifies the condition from any thread.
        self._cond = threading.Condition(BackoffRLock())
        self._takes = collections.deque()

    def matches(self, kind, dtype, shape, reduction_type):
        """Raises InvalidArgumentError unless a shared accumulator's creator asked for the same."""
        prefix = f"Shared accumulator '{self.name}' has"
        shape = None if shape is None else tuple(shape)
        for what, have, want in (("type", self.kind, kind),
                                 ("dtype", c_type_name(self.dtype), c_type_name(dtype)),
                                 ("shape", shape_string(self.shape), shape_string(shape)),
                                 ("reduction type", self.reduction_type, reduction_type)):
            if have != want:
                raise InvalidArgumentError(None, None, f"{prefix} {what} {have} but the "
                                           f"requested {what} was {want}")

    # -- what kernels call ---------------------------------------------------------------

    def num_accumulated(self):
        """How many gradients were added since the last take."""
        with self._cond:
            return self.counter

    def set_global_step(self, new_global_step):
        """Moves the global step on, so that gradients computed before it are dropped (a
        smaller one is logged and kept, as TensorFlow does).
        """
        with self._cond:
            if new_global_step < self.global_step:
                log.warning("Attempt to set the global step of accumulator '%s' to a smaller "
                            "value: %d < %d", self.name, new_global_step, self.global_step)
            self.global_step = new_global_step

    def apply_grad(self, local_step, gradient, worker=""):
        """Adds `gradient` unless it was computed before the global step (then drops it)."""
        with self._cond:
            dropped = local_step < self.global_step
            if not dropped:
                gradient = self._validate(gradient)
                self._add(gradient)
                self.counter += 1
            if self._on_apply is not None:
                self._on_apply(self, local_step, dropped, worker)
            self._flush()

    def take_grad(self, step, num_required):
        """Waits until `num_required` gradients are in; returns their reduction."""
        if num_required <= 0:
            raise InvalidArgumentError(None, None, "Argument num_required must be positive, "
                                       f"but was {num_required}")
        take = _Take(step, num_required)
        with self._cond:
            self._takes.append(take)
            self._flush()
            try:
                step.wait(self._cond, lambda: take.done)
            except BaseException:  # timed out or cancelled: leave the line
                if take in self._takes:
                    self._takes.remove(take)
                raise
        if take.error is not None:
            raise take.error
        return take.result

    def close_on_cleanup(self):
        """A reset of the container cancels every waiting take, leaving no waiter behind."""
        with self._cond:
            for take in self._takes:
                take.error = CancelledError(None, None, f"Accumulator '{self.name}' was reset")
                take.done = True
            self._takes.clear()
            self._cond.notify_all()

    # -- the line of takes ---------------------------------------------------------------

    def _flush(self):
        served = False
        while self._takes:
            take = self._takes[0]
            if take.step is not None and take.step.error is not None:
                # Its step failed while it waited: it must not consume gradients; its
                # kernel wakes up on the abort and raises the step's error.
                self._takes.popleft()
                continue
            if self.counter < take.num_required:
                break
            self._takes.popleft()
            self.global_step += 1
            take.result = self._reduce()
            self.counter = 0
            take.done = served = True
        if served:
            self._cond.notify_all()

    def _check_dtype(self, value):
        if value.dtype != self.dtype.as_numpy_dtype:
            raise InvalidArgumentError(None, None, f"Gradient of accumulator '{self.name}' has "
                                       f"type {c_type_name(value.dtype)}, expected "
                                       f"{c_type_name(self.dtype)}")


class ConditionalAccumulator(Accumulator):
    """Accumulates dense gradients of one shape."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN", on_apply=None):
        super().__init__(name, dtype, shape, reduction_type, on_apply)
        self._sum = None

    def _validate(self, gradient):
        gradient = np.asarray(gradient)
        self._check_dtype(gradient)
        if self.counter > 0 and gradient.shape != self._sum.shape:
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected "
                                       f"{shape_string(self._sum.shape)}, got "
                                       f"{shape_string(gradient.shape)}")
        if not as_shape(self.shape).is_compatible_with(as_shape(gradient.shape)):
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected "
                                       f"{shape_string(self.shape)}, got "
                                       f"{shape_string(gradient.shape)}")
        return gradient

    def _add(self, gradient):
        if self.counter == 0:
            self._sum = np.array(gradient, copy=True)
        else:
            self._sum += gradient

    def _reduce(self):
        total, self._sum = self._sum, None
        if self.reduction_type == "SUM":
            return total
        return (total / self.counter).astype(self.dtype.as_numpy_dtype, copy=False)


class SparseConditionalAccumulator(Accumulator):
    """Accumulates sparse gradients (indices, values, dense shape or None) row by row.

    Rows are merged as TensorFlow merges them (see `_merge`); the mean divides each row
    by the number of gradients that added to it, as TensorFlow's does.
    """

    kind = "SparseConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN", on_apply=None):
        super().__init__(name, dtype, shape, reduction_type, on_apply)
        self._indices = self._values = self._counts = None

    def _validate(self, gradient):
        """TensorFlow's checks, in its order and words."""
        indices, values, dense_shape = gradient
        indices = np.asarray(indices, dtype=np.int64)
        values = np.asarray(values)
        self._check_dtype(values)
        if indices.ndim != 1:
            raise _mismatch(f"Input indices should be vector but received shape: "
                            f"{shape_string(indices.shape)}")
        if values.ndim == 0:
            raise _mismatch("Values cannot be 0-dimensional.")
        if values.shape[0] != len(indices):
            raise _mismatch(f"Expected {len(indices)} non-empty input values, got "
                            f"{values.shape[0]}")
        expected = self.shape or ()
        if dense_shape is not None:
            if len(expected) > len(dense_shape):
                raise _mismatch(f"Shape mismatch: expected shape rank at least "
                                f"{len(expected)}, got {len(dense_shape)}")
            for i, (want, have) in enumerate(zip(expected, dense_shape)):
                if want is not None and want != have:
                    raise _mismatch(f"Shape mismatch: expected shape dim {i} to be {want}, "
                                    f"got {have}")
        if expected and expected[0] is not None:
            beyond = np.flatnonzero(indices >= expected[0])
            if beyond.size:
                bad = int(beyond[0])
                raise _mismatch(f"Shape mismatch: index of slice {bad} exceeded limits of "
                                f"shape; index is {indices[bad]} exceeded {expected[0]}")
        if self.counter > 0:  # against what is accumulated
            if values.ndim != self._values.ndim:
                raise _mismatch(f"Shape mismatch: expected values rank {self._values.ndim}, "
                                f"got {values.ndim}")
            rows = self._values.shape[1:]
        else:  # against the accumulator's shape
            if len(expected) > values.ndim:
                raise _mismatch(f"Shape mismatch: expected values rank at least "
                                f"{len(expected)}, got {values.ndim}")
            rows = expected[1:]
        for i, (want, have) in enumerate(zip(rows, values.shape[1:]), start=1):
            if want is not None and want != have:
                raise _mismatch(f"Shape mismatch: expected values dim {i} to be {want}, "
                                f"got {have}")
        return indices, values

    def _add(self, gradient):
        indices, values = gradient
        if self.counter == 0:
            self._indices, self._values = indices.copy(), values.copy()
            self._counts = np.ones(len(indices), np.int64)
            return
        from_sum, from_grad = _merge(self._indices.tolist(), indices.tolist())
        in_sum, in_grad = from_sum >= 0, from_grad >= 0
        merged = np.zeros((len(from_sum), *values.shape[1:]), values.dtype)
        merged[in_sum] = self._values[from_sum[in_sum]]
        merged[in_grad] += values[from_grad[in_grad]]
        merged_indices = np.empty(len(from_sum), np.int64)
        merged_indices[in_sum] = self._indices[from_sum[in_sum]]
        merged_indices[~in_sum] = indices[from_grad[~in_sum]]
        counts = np.zeros(len(from_sum), np.int64)
        counts[in_sum] = self._counts[from_sum[in_sum]]
        self._indices, self._values, self._counts = merged_indices, merged, counts + in_grad

    def _reduce(self):
        indices, values, counts = self._indices, self._values, self._counts
        self._indices = self._values = self._counts = None
        if self.reduction_type == "MEAN":
            scale = counts.reshape((-1,) + (1,) * (values.ndim - 1))
            values = (values / scale).astype(self.dtype.as_numpy_dtype, copy=False)
        first = self.shape[0] if self.shape and self.shape[0] is not None else -1
        dense_shape = np.array([first, *values.shape[1:]], dtype=np.int64)
        return indices, values, dense_shape


def _mismatch(message):
    return InvalidArgumentError(None, None, message)


def _merge(summed, new):
    """TensorFlow's merge of a gradient's rows into the sum: both lists are walked in
    order, as if sorted, and rows whose indices meet are added (a repeated or unsorted
    index simply makes another row). The sources of each merged row: its position in
    `summed` and in `new`, -1 where it has none."""
    from_sum, from_new = [], []
    i = j = 0
    while i < len(summed) and j < len(new):
        if summed[i] <= new[j]:
            from_sum.append(i)
            from_new.append(j if summed[i] == new[j] else -1)
            j += summed[i] == new[j]
            i += 1
        else:
            from_sum.append(-1)
            from_new.append(j)
            j += 1
    from_sum += list(range(i, len(summed))) + [-1] * (len(new) - j)
    from_new += [-1] * (len(summed) - i) + list(range(j, len(new)))
    return np.array(from_sum, np.int64), np.array(from_new, np.int64)
