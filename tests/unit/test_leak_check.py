"""The thread-leak check every test runs after it (conftest.no_thread_leaks): it collects
garbage only when threads are left, and still catches a thread that stays."""

import gc
import threading

from tests.helpers import leaked_threads


def _started(wait_for):
    thread = threading.Thread(target=wait_for.wait, name="left-behind")
    thread.start()
    return thread


def test_a_thread_left_running_is_reported():
    before = set(threading.enumerate())
    release = threading.Event()
    thread = _started(release)
    try:
        assert leaked_threads(before, timeout=0.1) == [thread]
    finally:
        release.set()
        thread.join()


def test_a_thread_that_ends_soon_after_is_not_a_leak():
    before = set(threading.enumerate())
    release = threading.Event()
    _started(release)
    threading.Timer(0.05, release.set).start()
    assert leaked_threads(before) == []


class _Owner:
    """Ends its thread when collected, as a session dropped without close() does."""

    def __init__(self):
        self.release = threading.Event()
        self.thread = _started(self.release)
        self.cycle = self  # only a collection frees it

    def __del__(self):
        self.release.set()


def test_a_thread_whose_owner_is_garbage_ends_when_the_check_collects():
    before = set(threading.enumerate())
    gc.disable()  # no collection but the check's own
    try:
        _Owner()
        assert leaked_threads(before) == []
    finally:
        gc.enable()
