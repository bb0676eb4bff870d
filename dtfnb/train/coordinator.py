"""tf.train.Coordinator: threads agree to stop, and the first real error is re-raised."""

import contextlib
import sys
import threading
import time

from dtfnb.base import errors


class Coordinator:
    """Coordinates the termination of a set of threads, as TensorFlow's does.

    Any thread may `request_stop()`; the others poll `should_stop()`. An exception
    given to `request_stop` (other than the clean-stop types, OutOfRangeError by
    default) is kept and re-raised by `join()`. It is an event, a lock and a
    saved exception: nothing of it runs in a task.

    #### Usage:

    ```python
    coord = tf.train.Coordinator()

    def work(coord):
        try:
            while not coord.should_stop():
                ...                       # e.g. sess.run(enqueue_op)
        except Exception as error:
            coord.request_stop(error)     # join() re-raises it

    threads = [threading.Thread(target=work, args=(coord,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    coord.request_stop()                  # from any thread, when done
    coord.join(threads, stop_grace_period_secs=10)
    ```

    `with coord.stop_on_exception():` in a thread's body does the try/except above.

    Args:
      clean_stop_exception_types: the error types that stop the threads without
        being re-raised by `join()` (default: `(tf.errors.OutOfRangeError,)`).
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex = ex[1]
        return None if isinstance(ex, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None):
        """Asks every thread to stop; `ex` (an exception or an exc_info tuple) is kept."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined and ex is not None:
                # Too late to be re-raised by join: say so here.
                raise ex if isinstance(ex, BaseException) else ex[1]
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = ex if isinstance(ex, tuple) else (
                        type(ex), ex, ex.__traceback__)
                self._stop_event.set()

    def clear_stop(self):
        """Clears the stop request, so that the coordinator can be used again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        """Check if stop was requested: True once any thread called `request_stop()`."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context in which any exception requests a stop (and is kept for join)."""
        try:
            yield
        except BaseException:
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits until a stop is requested; True if it was, False on timeout."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        """Register this thread to be joined by `join()` along with the ones it is given."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads to end or a stop request, then `stop_grace_period_secs`
        for stragglers; re-raises a kept exception, else RuntimeError for stragglers."""
        with self._lock:
            threads = list(self._registered_threads.union(threads or ()))
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        if stragglers and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: "
                               + " ".join(stragglers))

    @property
    def joined(self):
        """Whether `join()` has returned."""
        return self._joined

    def raise_requested_exception(self):
        """Re-raises the kept exception, if any (a thread's way to fail fast)."""
        with self._lock:
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])


class LooperThread(threading.Thread):
    """A thread that calls `run_loop()` again and again until its coordinator stops:
    every `timer_interval_secs` seconds, or back to back when that is None. As in
    TensorFlow, it is a daemon registered with the coordinator, and an exception in it
    requests a stop (kept for `coord.join()`).

    Either pass `target` (called with `args` and `kwargs` as the loop body) or subclass
    and override `run_loop`, and optionally `start_loop` and `stop_loop`:

    ```python
    coord = tf.train.Coordinator()
    tf.train.LooperThread.loop(coord, 10, target=print_progress)  # every 10 s
    ...
    coord.request_stop()
    coord.join()
    ```
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if target is not None:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        self._coord.register_thread(self)

    @classmethod
    def loop(cls, coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target(*args, **kwargs)`; returns it."""
        looper = cls(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        """Calls `start_loop`, then `run_loop` until the coordinator stops, then `stop_loop`."""
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                # Times kept from the start, so that a slow body does not shift the beat.
                next_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts."""

    def stop_loop(self):
        """Called once when the loop ends (not after an exception)."""

    def run_loop(self):
        """The loop body: calls `target`, unless a subclass overrides it."""
        if self._target is not None:
            self._target(*self._args, **self._kwargs)
