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
        with self._cond:
            return self.counter

    def set_global_step(self, new_global_step):
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

    Rows are summed per index; the mean divides each row by the number of gradients
    that touched it, as TensorFlow's does. Taken indices come sorted.
    """

    kind = "SparseConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN", on_apply=None):
        super().__init__(name, dtype, shape, reduction_type, on_apply)
        self._indices = self._values = self._counts = None

    def _validate(self, gradient):
        indices, values, dense_shape = gradient
        indices = np.asarray(indices, dtype=np.int64)
        values = np.asarray(values)
        self._check_dtype(values)
        if indices.ndim != 1 or values.ndim < 1 or values.shape[0] != len(indices):
            raise InvalidArgumentError(None, None, f"Shape mismatch: indices of shape "
                                       f"{shape_string(indices.shape)} do not index the rows "
                                       f"of values of shape {shape_string(values.shape)}")
        expected = self.shape or ()
        if dense_shape is not None:
            if len(expected) > len(dense_shape):
                raise InvalidArgumentError(None, None, f"Shape mismatch: expected shape rank "
                                           f"at least {len(expected)}, got {len(dense_shape)}")
            for i, (want, have) in enumerate(zip(expected, dense_shape)):
                if want is not None and want != have:
                    raise InvalidArgumentError(None, None, f"Shape mismatch: expected shape "
                                               f"dim {i} to be {want}, got {have}")
        if expected and expected[0] is not None:
            outside = np.flatnonzero((indices < 0) | (indices >= expected[0]))
            if outside.size:
                bad = int(outside[0])
                raise InvalidArgumentError(None, None, f"Shape mismatch: index of slice {bad} "
                                           f"exceeded limits of shape; index is "
                                           f"{indices[bad]} exceeded {expected[0]}")
        rows = self._values.shape[1:] if self.counter > 0 else expected[1:]
        if self.counter > 0 and values.ndim != self._values.ndim:
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected values rank "
                                       f"{self._values.ndim}, got {values.ndim}")
        if len(expected) > values.ndim:
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected values rank at "
                                       f"least {len(expected)}, got {values.ndim}")
        for i, (want, have) in enumerate(zip(rows, values.shape[1:]), start=1):
            if want is not None and want != have:
                raise InvalidArgumentError(None, None, f"Shape mismatch: expected values dim "
                                           f"{i} to be {want}, got {have}")
        return indices, values

    def _add(self, gradient):
        indices, values = gradient
        rows, values, _ = _sum_rows(indices, values, np.ones(len(indices), np.int64))
        # One count per gradient that touches a row, however often it repeats the index.
        counts = np.ones(len(rows), np.int64)
        if self.counter > 0:
            rows, values, counts = _sum_rows(np.concatenate([self._indices, rows]),
                                             np.concatenate([self._values, values]),
                                             np.concatenate([self._counts, counts]))
        self._indices, self._values, self._counts = rows, values, counts

    def _reduce(self):
        indices, values, counts = self._indices, self._values, self._counts
        self._indices = self._values = self._counts = None
        if self.reduction_type == "MEAN":
            scale = counts.reshape((-1,) + (1,) * (values.ndim - 1))
            values = (values / scale).astype(self.dtype.as_numpy_dtype, copy=False)
        first = self.shape[0] if self.shape and self.shape[0] is not None else -1
        dense_shape = np.array([first, *values.shape[1:]], dtype=np.int64)
        return indices, values, dense_shape


def _sum_rows(indices, values, counts):
    """The sorted distinct indices, with the rows and counts of each summed."""
    rows, where = np.unique(indices, return_inverse=True)
    where = where.reshape(-1)
    summed = np.zeros((len(rows), *values.shape[1:]), dtype=values.dtype)
    np.add.at(summed, where, values)
    total = np.zeros(len(rows), np.int64)
    np.add.at(total, where, counts)
    return rows, summed, total
