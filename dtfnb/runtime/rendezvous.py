"""Rendezvous: the tensors of one step by key. A send never blocks; a receive may come first.

An executor asks `when_ready` instead of blocking a thread in `recv`: the send that
brings the tensor then runs its callback, on the sender's thread.

A local step keeps its own. A task of a cluster keeps a table of them by step id,
because a peer's tensor may arrive before the master's RunGraph call that starts
the step here: such early tensors are bounded in bytes and in time.
"""

import os
import threading
import time
import weakref

from dtfnb.base.errors import CancelledError, ResourceExhaustedError

LIMIT_VARIABLE = "DTFNB_EARLY_TENSOR_BYTES"
_EARLY_BYTES = 256 << 20
_SWEEP_SECONDS = 0.25


class Rendezvous:
    """Where the `_Send` and `_Recv` kernels of one step meet, by key.

    A send never blocks: the value waits in `items` until received. A receive
    either blocks in `recv` (under the step's deadline and cancellation) or, as an
    executor does, registers a callback with `when_ready`, which the send then runs
    on its own thread. Keys name the source device, destination device and tensor
    as TensorFlow's do; each is sent and received once.

    ```python
    from dtfnb.runtime.rendezvous import Rendezvous
    from dtfnb.runtime.step import Step

    rendezvous = Rendezvous()
    rendezvous.send("/cpu:0;/cpu:1;x:0", 1.0)
    print(rendezvous.recv(Step(), "/cpu:0;/cpu:1;x:0"))          # 1.0
    print(rendezvous.when_ready("y:0", lambda: print("arrived")))  # False
    rendezvous.send("y:0", 2.0)                                   # prints "arrived"
    ```
    """
    __slots__ = ("items", "cond", "_callbacks")

    def __init__(self):
        self.items = {}
        self.cond = threading.Condition()
        self._callbacks = {}

    def send(self, key, value):
        """Puts `value` under `key` and runs the receiver's callback, if one waits; never blocks."""
        with self.cond:
            self.items[key] = value
            callback = self._callbacks.pop(key, None)
            self.cond.notify_all()
        if callback is not None:
            callback()

    def recv(self, step, key):
        """Takes the value under `key`, waiting for it under the step's deadline and cancellation.
        """
        with self.cond:
            if key not in self.items:
                step.wait(self.cond, lambda: key in self.items, backstop=True)
            return self.items.pop(key)

    def when_ready(self, key, callback):
        """True if `key` is here already; else `callback()` runs once it is sent."""
        with self.cond:
            if key in self.items:
                return True
            self._callbacks[key] = callback
            return False


class RendezvousTable:
    """A task's rendezvous by step id.

    A tensor for a step that already ended here (it failed, or was cleaned up) is
    dropped. Tensors of a step that has not started here are early, and may be
    orphans: the master failed before calling, or a peer made the step id up. They
    are held within `limit_bytes` ($DTFNB_EARLY_TENSOR_BYTES), the oldest steps' dropped
    first (such a step fails with ResourceExhaustedError if it starts after all), and
    for `orphan_seconds` at most, swept by a thread that runs while there are any.

    ```python
    from dtfnb.runtime.rendezvous import RendezvousTable
    from dtfnb.runtime.step import Step

    table = RendezvousTable()
    table.deliver(7, "x:0", 1.0)     # a peer's tensor, before step 7 starts here
    rendezvous = table.start(7)      # the worker's RunGraph for step 7
    print(rendezvous.recv(Step(step_id=7), "x:0"))   # 1.0
    table.finish(7)                  # later tensors for step 7 are dropped
    ```
    """

    _FINISHED_KEPT = 4096
    _ENTRY_BYTES = 256   # what a tensor costs besides its data: empty ones count too

    def __init__(self, orphan_seconds=300.0, limit_bytes=None):
        self._orphan_seconds = orphan_seconds
        self._limit_bytes = early_bytes_limit() if limit_bytes is None else limit_bytes
        self._tables = {}       # step id -> [Rendezvous, created, started, early bytes]
        self._finished = {}     # step id -> why a late start fails (None: cleaned up)
        self._early_bytes = 0
        self._sweeping = False
        self._lock = threading.Lock()

    def deliver(self, step_id, key, value):
        """Sends a tensor from a peer into the rendezvous of step `step_id`, even before the
        step starts here; dropped if the step already ended.
        """
        with self._lock:
            if step_id in self._finished:
                return
            entry = self._tables.get(step_id)
            if entry is None:
                entry = self._tables[step_id] = [Rendezvous(), time.monotonic(), False, 0]
                self._sweep_soon()
            if not entry[2]:
                size = getattr(value, "nbytes", 0) + self._ENTRY_BYTES
                entry[3] += size
                self._early_bytes += size
                if self._early_bytes > self._limit_bytes:
                    self._drop_oldest()
                    if step_id in self._finished:
                        return
        entry[0].send(key, value)

    def start(self, step_id):
        """The rendezvous of a step that starts running here; raises CancelledError for a
        step already cleaned up (its master gave up before this call arrived), and
        ResourceExhaustedError for one whose early tensors were dropped."""
        with self._lock:
            if step_id in self._finished:
                reason = self._finished[step_id]
                if reason is not None:
                    raise ResourceExhaustedError(None, None, reason)
                raise CancelledError(None, None, f"Step {step_id} was cleaned up before it "
                                     "started on this task")
            entry = self._tables.get(step_id)
            if entry is None:
                entry = self._tables[step_id] = [Rendezvous(), time.monotonic(), True, 0]
            self._early_bytes -= entry[3]
            entry[2], entry[3] = True, 0
            return entry[0]

    def finish(self, step_id):
        """Forgets step `step_id`: its rendezvous goes, and later tensors for it are dropped."""
        with self._lock:
            self._drop(step_id, None)

    def _drop(self, step_id, reason):
        entry = self._tables.pop(step_id, None)
        if entry is not None:
            self._early_bytes -= entry[3]
        self._finished[step_id] = reason
        if len(self._finished) > self._FINISHED_KEPT:
            del self._finished[next(iter(self._finished))]

    def _drop_oldest(self):
        for step_id, (_, _, started, _) in list(self._tables.items()):
            if self._early_bytes <= self._limit_bytes:
                return
            if not started:
                self._drop(step_id, f"The tensors sent to step {step_id} before it started "
                           f"on this task were dropped: tensors of steps not yet started "
                           f"exceeded {self._limit_bytes} bytes ({LIMIT_VARIABLE})")

    def _sweep_soon(self):
        if not self._sweeping:
            self._sweeping = True
            threading.Thread(target=_sweep_while_early, args=(weakref.ref(self),),
                             daemon=True, name="dtfnb-rendezvous-sweep").start()

    def sweep(self):
        """Drops the tensors of steps that have not started for `orphan_seconds`; returns
        whether tensors of steps not yet started remain."""
        cutoff = time.monotonic() - self._orphan_seconds
        with self._lock:
            early = [(s, created) for s, (_, created, started, _) in self._tables.items()
                     if not started]
            for step_id, created in early:
                if created < cutoff:
                    self._drop(step_id, None)
            self._sweeping = any(created >= cutoff for _, created in early)
            return self._sweeping


def _sweep_while_early(table_ref):
    """The sweeping thread of a RendezvousTable: it ends once the table holds no early
    tensors, or is gone (only a weak reference keeps it from its task's end)."""
    while True:
        time.sleep(_SWEEP_SECONDS)
        table = table_ref()
        if table is None or not table.sweep():
            return
        del table


def early_bytes_limit():
    """$DTFNB_EARLY_TENSOR_BYTES, else 256 MiB."""
    value = os.environ.get(LIMIT_VARIABLE)
    if not value:
        return _EARLY_BYTES
    if not value.strip().isdigit():
        raise ValueError(f"{LIMIT_VARIABLE} must be a number of bytes, not {value!r}")
    return int(value)
