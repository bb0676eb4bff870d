"""Test-wide guards: every test starts from a fresh default graph and leaks no threads."""

import gc
import threading
import time

import pytest

import dtfnb as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def servers():
    """start(cluster, job, task): a tf.train.Server in this process, stopped after the test."""
    started = []

    def start(cluster, job="local", task=0, **kwargs):
        server = tf.train.Server(cluster, job, task, **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def poll_for(predicate, timeout=5.0, interval=0.01):
    """Waits until `predicate()` is true; returns its last value (False on time-out)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def in_thread(fn):
    """Runs fn() on a thread; returns (thread, box) where box gets its result or error."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except Exception as err:  # handed to the test
            box["error"] = err

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


@pytest.fixture(autouse=True)
def no_thread_leaks(request):
    """Fails a test that leaves threads behind (sessions must shut their pools down),
    unless it set `request.node.keeps_threads`: it ran on servers meant to live until
    the process exits."""
    before = set(threading.enumerate())
    yield
    if getattr(request.node, "keeps_threads", False):
        return

    def leaked():
        return [t for t in threading.enumerate() if t not in before and t.is_alive()]

    if not leaked():
        return  # the common case: a collection per test was half the suite's time
    # A session dropped without close() shuts its pools down when it is collected.
    gc.collect()
    poll_for(lambda: not leaked(), timeout=5.0)
    assert not leaked(), f"threads left running: {[t.name for t in leaked()]}"
