"""BLAS threads give way to other processes' busy cores (dtfnb/runtime/blas.py): a step
of a local session beside a spinning process runs with fewer BLAS threads, and with all
of them again once the cores are free."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import threadpoolctl

import dtfnb as tf
from dtfnb.runtime import blas

SPIN = "while True: pass"


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


def test_a_spinning_process_takes_a_core_and_this_process_never_does(busy_process):
    cores = os.cpu_count()
    assert blas.free_cores(cores) <= cores - 1   # the spinner, whatever else runs
    assert blas.free_cores(1000) >= 1000 - 999   # this process's own threads never count
    assert blas._own_running_threads() >= 1      # (the thread that asks is running)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores to give one up")
def test_a_step_beside_a_busy_process_uses_fewer_blas_threads(busy_process):
    cores = os.cpu_count()
    x = tf.constant(np.ones((64, 64), np.float32))
    product = tf.matmul(x, x)
    with tf.Session() as sess:          # BLAS gets every core: a local session's share
        assert blas.current() == cores
        time.sleep(blas._CHECK_SECONDS)
        sess.run(product)               # each step looks at the cores first
        assert blas.current() <= cores - 1
        assert _blas_threads() == blas.current()
    busy_process.kill()
    busy_process.wait()
    blas.configure(cores)               # what a new session does: every core again
    assert _blas_threads() == cores


def test_without_proc_every_core_counts_as_free(monkeypatch):
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")
    monkeypatch.setattr("builtins.open", no_proc)
    assert blas.free_cores(8) == 8
