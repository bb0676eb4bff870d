"""Rendezvous: the tensors of one step by key. A send never blocks; a receive may come first.

An executor asks `when_ready` instead of blocking a thread in `recv`: the send that
brings the tensor then runs its callback, on the sender's thread.

A local step keeps its own. A task of a cluster keeps a table of them by step id,
because a peer's tensor may arrive before the master's RunGraph call that starts
the step here.
"""

import threading
import time

from dtfnb.base.errors import CancelledError


class Rendezvous:
    __slots__ = ("items", "cond", "_callbacks")

    def __init__(self):
        self.items = {}
        self.cond = threading.Condition()
        self._callbacks = {}

    def send(self, key, value):
        with self.cond:
            self.items[key] = value
            callback = self._callbacks.pop(key, None)
            self.cond.notify_all()
        if callback is not None:
            callback()

    def recv(self, step, key):
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
    dropped. One for a step that never starts here (its master failed before
    calling) is dropped after `orphan_seconds`.
    """

    _FINISHED_KEPT = 4096

    def __init__(self, orphan_seconds=300.0):
        self._orphan_seconds = orphan_seconds
        self._tables = {}       # step id -> (Rendezvous, created, started)
        self._finished = {}     # step id -> None, oldest first
        self._lock = threading.Lock()

    def deliver(self, step_id, key, value):
        with self._lock:
            if step_id in self._finished:
                return
            entry = self._tables.get(step_id)
            if entry is None:
                self._sweep()
                entry = self._tables[step_id] = [Rendezvous(), time.monotonic(), False]
        entry[0].send(key, value)

    def start(self, step_id):
        """The rendezvous of a step that starts running here; raises CancelledError for a
        step already cleaned up (its master gave up before this call arrived)."""
        with self._lock:
            if step_id in self._finished:
                raise CancelledError(None, None, f"Step {step_id} was cleaned up before it "
                                     "started on this task")
            entry = self._tables.get(step_id)
            if entry is None:
                entry = self._tables[step_id] = [Rendezvous(), time.monotonic(), True]
            entry[2] = True
            return entry[0]

    def finish(self, step_id):
        with self._lock:
            self._tables.pop(step_id, None)
            self._finished[step_id] = None
            if len(self._finished) > self._FINISHED_KEPT:
                del self._finished[next(iter(self._finished))]

    def _sweep(self):
        cutoff = time.monotonic() - self._orphan_seconds
        for step_id in [s for s, (_, created, started) in self._tables.items()
                        if not started and created < cutoff]:
            del self._tables[step_id]
