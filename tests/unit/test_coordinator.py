"""tf.train.Coordinator: stop requests, the first real error re-raised by join."""

import threading
import time

import pytest

import dtfnb as tf
from tests.helpers import poll_for


def test_threads_stop_when_one_requests_it():
    coord = tf.train.Coordinator()
    counts = []

    def loop(i):
        n = 0
        while not coord.should_stop():
            n += 1
            if i == 0 and n == 50:
                coord.request_stop()
            time.sleep(0.001)
        counts.append(n)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    coord.join(threads)
    assert len(counts) == 3 and coord.should_stop() and coord.joined


def test_join_reraises_the_first_error_but_not_out_of_range():
    coord = tf.train.Coordinator()

    def fail(err):
        with coord.stop_on_exception():
            raise err

    first = threading.Thread(target=fail, args=(ValueError("first"),))
    first.start()
    first.join()
    second = threading.Thread(target=fail, args=(KeyError("second"),))
    second.start()
    with pytest.raises(ValueError, match="first"):
        coord.join([first, second])

    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "End of sequence"))
    clean.join()  # a clean stop: nothing to raise
    with pytest.raises(RuntimeError, match="first"):
        clean.request_stop(RuntimeError("first"))  # after join: raised at once


def test_stragglers_past_the_grace_period_are_a_runtime_error():
    coord = tf.train.Coordinator()
    release = threading.Event()
    straggler = threading.Thread(target=release.wait, name="straggler")
    straggler.start()
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError, match="still running: straggler"):
            coord.join([straggler], stop_grace_period_secs=0.05)
        coord.clear_stop()
        assert not coord.should_stop()
        coord.register_thread(straggler)
        coord.request_stop()
        coord.join(stop_grace_period_secs=0.05, ignore_live_threads=True)
    finally:
        release.set()
        straggler.join()


def test_wait_for_stop_and_raise_requested_exception():
    coord = tf.train.Coordinator()
    assert not coord.wait_for_stop(0.01)
    coord.raise_requested_exception()  # nothing yet
    threading.Timer(0.02, coord.request_stop, args=(OSError("disk"),)).start()
    assert coord.wait_for_stop(5)
    with pytest.raises(OSError, match="disk"):
        coord.raise_requested_exception()


def test_a_looper_thread_calls_its_target_on_a_timer_until_the_stop():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.01, target=calls.append, args=("tick",))
    assert looper.daemon and looper.is_alive()
    poll_for(lambda: len(calls) >= 3)
    coord.request_stop()
    coord.join()
    assert not looper.is_alive() and calls[:3] == ["tick"] * 3


def test_a_looper_subclass_starts_loops_back_to_back_and_stops():
    class Counter(tf.train.LooperThread):
        def __init__(self, coord):
            super().__init__(coord, None)
            self.events = []

        def start_loop(self):
            self.events.append("start")

        def run_loop(self):
            self.events.append("loop")
            if self.events.count("loop") == 5:
                self._coord.request_stop()

        def stop_loop(self):
            self.events.append("stop")

    coord = tf.train.Coordinator()
    counter = Counter(coord)
    counter.start()
    coord.join()
    assert counter.events == ["start"] + ["loop"] * 5 + ["stop"]


def test_an_error_in_a_looper_thread_stops_the_coordinator_and_is_raised_by_join():
    coord = tf.train.Coordinator()

    def fail():
        raise RuntimeError("boom")

    tf.train.LooperThread.loop(coord, None, target=fail)
    with pytest.raises(RuntimeError, match="boom"):
        coord.join()


def test_looper_thread_arguments_are_checked_as_in_tensorflow():
    with pytest.raises(ValueError, match="'coord' argument must be a Coordinator"):
        tf.train.LooperThread(None, 1)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), 1, args=(1,))
