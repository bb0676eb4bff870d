"""BackoffRLock: a re-entrant lock, and threading.Condition's lock, whose waiters back off."""

import threading
import time

import pytest

from dtfnb.base.locks import BackoffRLock


def _in_thread(target):
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _free(lock, seconds=1.0):
    """Whether another thread can take `lock` within `seconds`."""
    taken = threading.Event()
    _in_thread(lambda: (lock.acquire(), taken.set(), lock.release()))
    return taken.wait(seconds)


def test_it_excludes_other_threads():
    lock, total = BackoffRLock(), [0]

    def add():
        for _ in range(200):
            with lock:
                seen = total[0]
                time.sleep(0)  # hands the GIL over inside the lock
                total[0] = seen + 1

    threads = [_in_thread(add) for _ in range(4)]
    for thread in threads:
        thread.join(10)
    assert total[0] == 800


def test_a_waiter_gets_the_lock_once_it_is_released_and_not_before():
    lock, acquired = BackoffRLock(), []
    lock.acquire()
    waiter = _in_thread(lambda: (lock.acquire(), acquired.append(time.monotonic())))
    time.sleep(0.05)
    assert not acquired
    released = time.monotonic()
    lock.release()
    waiter.join(5)
    assert acquired and acquired[0] >= released


def test_it_is_re_entrant():
    lock = BackoffRLock()
    with lock, lock:
        pass
    lock.acquire()
    lock.acquire()
    lock.release()
    assert not _free(lock, 0.1)  # still held once
    lock.release()
    assert _free(lock)
    with pytest.raises(RuntimeError):
        lock.release()


def test_a_condition_wait_gives_up_every_level_and_takes_them_back():
    cond = threading.Condition(BackoffRLock())
    ready, woken, levels = threading.Event(), threading.Event(), []

    def wait_twice_held():
        with cond, cond:
            ready.set()
            cond.wait(5)
            cond.release()
            levels.append(cond._is_owned())  # still held: the wait took both levels back
            cond.acquire()
            woken.set()

    waiter = _in_thread(wait_twice_held)
    assert ready.wait(5)
    assert _free(cond)  # the wait gave up both levels
    with cond:
        cond.notify_all()
    assert woken.wait(5)
    waiter.join(5)
    assert levels == [True]
    assert _free(cond)
