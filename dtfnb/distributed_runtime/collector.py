"""What other processes leave on a task (a master's sessions, a worker's graphs) is not
kept for ever: what has been idle for long is collected, and a storm of new entries
closes the least recently used idle one instead of growing the task."""

import heapq
import logging
import threading
import time

from dtfnb.base.errors import ResourceExhaustedError

log = logging.getLogger("dtfnb.distributed_runtime")

_PERIOD_SECONDS = 10.0   # between looks for idle entries, as TensorFlow's master
_EVICTION_LOG_SECONDS = 60.0   # a storm is reported, not logged line by line


class IdleCollector:
    """Collects the entries of other processes from a table that its owner keeps.

    `entries` maps handles to entries and is guarded by `lock`, both the owner's. The
    entries with `remote` set are the collector's: each has `last_used`
    (time.monotonic()) and `busy` (a step runs). One idle for more than `idle_seconds`
    (0: never) is removed, and at most `capacity` are kept: adding one more removes the
    least recently used eighth of the idle ones, or fails if every one is busy (an
    eighth, so that a storm pays one look over the table per `capacity // 8` entries,
    not one per entry). `close(entry)`, if
    given, frees an entry removed here, without the lock. `noun` names an entry
    ("session"), `kind` the entries ("sessions of other processes"), `owner` the task's
    part that holds them ("master"), in what is logged and raised.
    """

    def __init__(self, entries, lock, idle_seconds, capacity, noun, kind, owner, close=None):
        self._entries = entries
        self._lock = lock
        self._idle_seconds = idle_seconds
        self._capacity = capacity
        self._noun, self._kind, self._owner = noun, kind, owner
        self._close = close
        self._stopping = threading.Event()
        self._thread = None      # the thread that collects idle entries, from the first
        self._evicted = 0        # entries removed to make room, since last logged
        self._evictions_logged = -_EVICTION_LOG_SECONDS

    def add(self, handle, entry):
        """Adds an entry; one of another process first makes room, or raises
        ResourceExhaustedError when every one kept is busy."""
        with self._lock:
            evicted = self._make_room() if entry.remote else []
            self._entries[handle] = entry
            if entry.remote and self._idle_seconds > 0 and self._thread is None:
                self._thread = threading.Thread(target=self._collect_idle, daemon=True,
                                                name=f"dtfnb-{self._noun}-gc")
                self._thread.start()
        for entry in evicted:
            if self._close is not None:
                self._close(entry)

    def _make_room(self):
        """With the lock held: if the entries of other processes are too many, removes and
        returns the least recently used eighth of the idle ones; raises if none is idle."""
        if len(self._entries) < self._capacity:
            return []
        remote = [(handle, e) for handle, e in self._entries.items() if e.remote]
        if len(remote) < self._capacity:
            return []
        idle = [(handle, e) for handle, e in remote if not e.busy]
        if not idle:
            raise ResourceExhaustedError(None, None, f"This {self._owner} holds its limit of "
                                         f"{len(remote)} {self._kind}, each running a step")
        oldest = heapq.nsmallest(max(1, self._capacity // 8), idle,
                                 key=lambda item: item[1].last_used)
        self._evicted += len(oldest)
        now = time.monotonic()
        if now - self._evictions_logged >= _EVICTION_LOG_SECONDS:
            log.warning("Closed %d idle %s to make room for new ones (the least recently "
                        "used, the last idle for %.0f seconds): this %s keeps at most %d",
                        self._evicted, self._kind, now - oldest[-1][1].last_used,
                        self._owner, self._capacity)
            self._evicted, self._evictions_logged = 0, now
        return [self._entries.pop(handle) for handle, _ in oldest]

    def _collect_idle(self):
        period = min(_PERIOD_SECONDS, self._idle_seconds / 2)
        while not self._stopping.wait(period):
            cutoff = time.monotonic() - self._idle_seconds
            with self._lock:
                idle = [(handle, self._entries.pop(handle)) for handle, e
                        in list(self._entries.items())
                        if e.remote and not e.busy and e.last_used < cutoff]
            for handle, entry in idle:
                log.warning("GC %s %s after %s seconds.  Note that if you are starting "
                            "multiple replicas on a staggered delay, session_gc_seconds may "
                            "need to be raised.", self._noun, handle, self._idle_seconds)
                if self._close is not None:
                    self._close(entry)

    def stop(self):
        """Stops collecting; what is left is the owner's to free."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
