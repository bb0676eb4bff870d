"""A re-entrant lock for locks that several busy Python threads take many times a second.

A thread blocked on a plain lock is handed it when it is released, and then holds it
while it waits for the GIL, up to the interpreter's switch interval. Every other thread
that comes to the lock meanwhile blocks too, and from then on they take turns: a thread
switch for every acquisition (a lock convoy), until one of them happens to give up the
GIL elsewhere. Two queue runners feeding one queue lost up to half their speed to it.
Here a thread that finds the lock taken sleeps, which gives the GIL to the holder, and
tries again: a thread only ever takes the lock while it holds the GIL.
"""

import threading
import time

_FIRST_BACKOFF = 20e-6  # seconds; the holders here keep it for microseconds
_MAX_BACKOFF = 1e-3


class BackoffRLock:
    """threading.RLock's interface as threading.Condition uses it, with waiters backing
    off instead of blocking."""

    __slots__ = ("_rlock", "release", "_is_owned", "_release_save")

    def __init__(self):
        self._rlock = threading.RLock()
        self.release = self._rlock.release
        self._is_owned = self._rlock._is_owned
        self._release_save = self._rlock._release_save

    def acquire(self):
        """Takes the lock, sleeping with a growing backoff (not blocking) while another thread holds
        it."""
        if self._rlock.acquire(False):
            return True
        backoff = _FIRST_BACKOFF
        while True:
            time.sleep(backoff)
            if self._rlock.acquire(False):
                return True
            backoff = min(2 * backoff, _MAX_BACKOFF)

    __enter__ = acquire

    def __exit__(self, *exc):
        self._rlock.release()

    def _acquire_restore(self, state):
        """Takes the lock back as many times as `_release_save` gave it up."""
        count, _ = state
        self.acquire()
        for _ in range(count - 1):
            self._rlock.acquire(False)  # re-entrant: ours now, it cannot fail
