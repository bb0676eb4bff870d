"""BLAS threads give way to other processes' busy cores (dtfnb/runtime/blas.py): a step
of a local session beside a spinning process runs with fewer BLAS threads, and with all
of them again once the cores are free."""

import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest
import threadpoolctl

import dtfnb as tf
from dtfnb.base.cores import usable_cores, usable_cpus
from dtfnb.kernels import blas_work
from dtfnb.runtime import blas

SPIN = "while True: pass"
needs_two_cores = pytest.mark.skipif(usable_cores() < 2,
                                     reason="needs 2 cores to give one up")


@pytest.fixture
def busy_process():
    """One process that spins on a core for the test."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.2)
        yield spinner
    finally:
        spinner.kill()
        spinner.wait()


def _blas_threads():
    return min(info["num_threads"] for info in threadpoolctl.threadpool_info()
               if info["user_api"] == "blas")


def test_threads_are_as_configured_but_no_more_than_the_free_cores_and_at_least_one():
    assert blas.threads_for(4, 8) == 4
    assert blas.threads_for(4, 2) == 2
    assert blas.threads_for(4, 0) == blas.threads_for(4, -3) == 1


def test_other_processes_cores_are_the_busy_time_less_this_processs_own_per_second():
    assert blas.other_processes_cores((10.0, 100.0, 5.0), (10.5, 101.2, 5.7)) == \
        pytest.approx(1.0)
    # never less than none
    assert blas.other_processes_cores((10.0, 100.0, 5.0), (10.5, 100.4, 5.6)) == 0.0
    assert blas.other_processes_cores((10.0, 100.0, 5.0), (10.0, 100.0, 5.0)) == 0.0


def test_a_spinning_process_shows_as_a_core_other_processes_keep_busy(busy_process):
    cpus = usable_cpus()
    before = (time.monotonic(), blas.cpu_stat(cpus)[0], time.process_time())
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:   # this process busy too: it never counts
        pass
    after = (time.monotonic(), blas.cpu_stat(cpus)[0], time.process_time())
    assert 0.7 <= blas.other_processes_cores(before, after) <= len(cpus) + 0.3
    assert blas.cpu_stat(cpus)[1] >= 2   # the spinner and the thread that asks


def _run_until_decided(sess, product):
    """Three steps a look apart: the first looks at the cores, the others count what
    other processes took, the third decides on both counts."""
    for _ in range(2):
        sess.run(product)
        time.sleep(blas._CHECK_SECONDS)
    sess.run(product)


@needs_two_cores
def test_a_step_beside_a_busy_process_uses_fewer_blas_threads(busy_process):
    cores = usable_cores()
    x = tf.constant(np.ones((64, 64), np.float32))
    product = tf.matmul(x, x)
    with tf.Session() as sess:          # BLAS gets every core: a local session's share
        assert blas.current() == usable_cores()
        _run_until_decided(sess, product)
        assert blas.current() <= cores - 1
        assert _blas_threads() == blas.current()
    blas.configure(usable_cores())      # what a new session does: every core again
    assert _blas_threads() == usable_cores()


@needs_two_cores
def test_a_step_on_another_thread_than_the_sessions_limits_blas_too(busy_process):
    """OpenBLAS ignores a change from another thread once the main thread made one: the
    session is made on this (main) thread, its steps run on another."""
    x = tf.constant(np.ones((64, 64), np.float32))
    product = tf.matmul(x, x)
    with tf.Session() as sess:
        thread = threading.Thread(target=_run_until_decided, args=(sess, product))
        thread.start()
        thread.join()
        assert blas.current() < usable_cores()
        assert _blas_threads() == blas.current()
    blas.configure(usable_cores())
    assert _blas_threads() == usable_cores()


def _look(monkeypatch, others, running, after=blas._CHECK_SECONDS, busy=1.0):
    """One look of `adjust`, `after` seconds after the last, at which other processes kept
    `others` cores busy, `running` threads ran, and this process had used `busy` of a
    core since the last look: a CPU time the test keeps, which the suite's other work
    beside it cannot change as it changes the real one."""
    monkeypatch.setattr(blas, "cpu_stat", lambda cpus: (0.0, running))
    monkeypatch.setattr(blas, "other_processes_cores", lambda before, after: others)
    time.sleep(after)
    cpu = blas.time.process_time() + busy * after
    monkeypatch.setattr(blas, "time", types.SimpleNamespace(monotonic=time.monotonic,
                                                            process_time=lambda: cpu))
    blas.adjust()


def test_cores_count_as_taken_at_two_looks_in_a_row_neither_after_a_pause(monkeypatch):
    """As another program's threads spinning down after its own work (TensorFlow's
    between a benchmark's rounds): seen at one look, gone at the next."""
    blas.configure(2)
    _look(monkeypatch, 0.0, 1)             # the first look
    _look(monkeypatch, 1.0, 2)             # a core taken at this look only
    assert blas.current() == 2
    _look(monkeypatch, 0.0, 1)
    _look(monkeypatch, 1.0, 2)
    _look(monkeypatch, 1.0, 2)             # at two looks in a row
    assert blas.current() == 1
    # the steps pause: the next look decides nothing
    _look(monkeypatch, 0.0, 1, after=2 * blas._PAUSE_SECONDS, busy=0.0)
    assert blas.current() == 1
    _look(monkeypatch, 0.0, 1)
    assert blas.current() == 2
    _look(monkeypatch, 1.0, 2)
    # a pause in which one of its two BLAS threads spun on after the last step: a core
    # busy, but not the two that step kept busy; still a pause, which decides nothing
    _look(monkeypatch, 1.0, 2, after=2 * blas._PAUSE_SECONDS, busy=1.0)
    assert blas.current() == 2
    # a long step, both threads busy all through: no pause
    _look(monkeypatch, 1.0, 2, after=2 * blas._PAUSE_SECONDS, busy=2.0)
    assert blas.current() == 1


def test_measured_threads_try_half_as_many_and_keep_the_faster():
    measured = blas._Measured()
    assert measured.threads(2, 2, 100.0, now=0.0) == 1   # never compared: try fewer
    assert measured.threads(2, 1, 60.0, now=0.1) == 2    # slower: back, at best 100
    assert measured.threads(2, 2, 95.0, now=0.2) == 2    # within a fifth of the best
    assert measured.threads(2, 2, 70.0, now=0.25) == 2   # a fifth below at one look
    assert measured.threads(2, 2, 70.0, now=0.3) == 1    # and at the next: try fewer
    assert measured.threads(2, 1, 80.0, now=0.4) == 1    # faster: kept
    assert measured.threads(2, 1, 80.0, now=2.3) == 1    # for two seconds
    assert measured.threads(2, 1, 80.0, now=2.5) == 2    # then the threads allowed again
    assert measured.threads(2, 2, 120.0, now=2.6) == 2   # faster now: kept
    assert measured.threads(2, 2, None, now=2.7) == 2    # no big product: as it was
    assert measured.threads(8, 4, 50.0, now=2.8) == 8    # half of 8: try all of them
    assert measured.threads(1, 2, 50.0, now=2.9) == 1    # one core: nothing to choose
    assert measured.threads(2, 1, None, now=3.0) == 2    # cores back, nothing measured


def test_a_steps_big_products_count_as_work_and_small_ones_do_not():
    big = tf.matmul(tf.ones((128, 784)), tf.ones((784, 300)))
    batch = tf.matmul(tf.ones((3, 64, 64)), tf.ones((3, 64, 64)))
    small = tf.matmul(tf.ones((32, 32)), tf.ones((32, 32)))
    with tf.Session() as sess:
        blas_work.take()
        sess.run([big.op, batch.op, small.op])
        assert blas_work.take() == 128 * 784 * 300 + 3 * 64 * 64 * 64


def test_without_proc_the_threads_stay_as_configured(monkeypatch):
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")
    blas.configure(2)
    monkeypatch.setattr("builtins.open", no_proc)
    assert blas.cpu_stat({0}) is None
    time.sleep(blas._CHECK_SECONDS)
    blas.adjust()
    time.sleep(blas._CHECK_SECONDS)
    blas.adjust()
    assert blas.current() == 2


def test_a_process_kept_to_one_core_sizes_its_threads_to_it():
    """As TensorFlow counts schedulable CPUs: a local session's BLAS threads and inter-op
    pool, a task's share and the notebook's machine line follow the process's affinity,
    not the machine's cores."""
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "import dtfnb as tf\n"
        "from dtfnb.runtime import blas\n"
        "from dtfnb.notebook.experiment import machine\n"
        "from dtfnb.distributed_runtime.server_lib import _cores_per_task\n"
        "sess = tf.Session()\n"
        "spec = tf.train.ClusterSpec({'worker': ['127.0.0.1:1']})\n"
        "print(blas.current(), _cores_per_task(spec, '127.0.0.1:1'), machine())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out[:4] == ["1", "1", "1", "CPU"] and out[4] == "core,", out
