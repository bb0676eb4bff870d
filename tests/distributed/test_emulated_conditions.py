"""Emulated links and slow tasks on real task processes (`python -m dtfnb.server --link
--slow`): a transfer never beats its link, over gRPC and Unix sockets, with shared
memory on and off; a ps link is shared by the workers that pull through it; slow tasks'
steps take at least what their spec adds. Only lower bounds: load can only add time."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import monitor
from dtfnb.runtime.step import GRACE_SECONDS
from tests.helpers import ROOT, cluster_dict

MEGABIT = 1e6 / 8   # bytes per second of 1 Mbit/s
N = 1_250_000       # bytes: 100 ms over 100 Mbit


def elapsed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


@pytest.mark.parametrize("shared_memory", [True, False], ids=["shm", "inline"])
@pytest.mark.parametrize("channel", ["unix", "grpc"])
def test_a_transfer_never_beats_the_slower_link_and_both_latencies(cluster, channel,
                                                                  shared_memory):
    # the ps sends fast, the worker takes 100 Mbit: each way, the worker's link decides
    tasks = cluster({"ps": 1, "worker": 1}, processes=True, channel=channel,
                    emulate={("ps", 0): dict(link="1Gbit,1ms"),
                             ("worker", 0): dict(link="100Mbit,5ms")})
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.zeros(N // 4, np.float32))
        tiny = tf.Variable(1.0)
        fed = tf.placeholder(tf.float32, [N // 4])
        fed_sum = tf.reduce_sum(fed)                     # fed by the master to the ps
    with tf.device("/job:worker/task:0"):
        pulled = tf.reduce_sum(v)                        # ps -> worker, N bytes
        pushed = v.assign_add(tf.ones([N // 4]))         # worker -> ps, N bytes
        tiny_back = tiny * 2.0                           # ps -> worker, 4 bytes
    config = tf.ConfigProto(disable_shared_memory=not shared_memory)
    with tf.Session(tasks.target("worker"), config=config) as sess:
        sess.run([v.initializer, tiny.initializer])
        least = N / (100 * MEGABIT) + 0.006
        feed = {fed: np.ones(N // 4, np.float32)}
        for _ in range(3):
            assert elapsed(lambda: sess.run(pulled.op)) >= least
            assert elapsed(lambda: sess.run(pushed.op)) >= least
            assert elapsed(lambda: sess.run(tiny_back)) >= 0.006
            assert elapsed(lambda: sess.run(v)) >= least   # fetched by the master from the ps
            assert elapsed(lambda: sess.run(fed_sum, feed)) >= least
        assert sess.run(tiny_back) == 2.0 and sess.run(pulled) == 3 * (N // 4)


def test_workers_pulling_from_one_ps_share_its_link(cluster):
    tasks = cluster({"ps": 1, "worker": 2}, processes=True,
                    emulate={("ps", 0): dict(link="100Mbit"),
                             ("worker", 0): dict(link="1Gbit"),
                             ("worker", 1): dict(link="1Gbit")})
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.ones(N // 4, np.float32))
    sums = []
    for index in range(2):
        with tf.device(f"/job:worker/task:{index}"):
            sums.append(tf.reduce_sum(v))
    sessions = [tf.Session(tasks.target("worker", index)) for index in range(2)]
    try:
        sessions[0].run(v.initializer)
        for sess, total in zip(sessions, sums):
            sess.run(total)   # connected and warm
        single = N / (100 * MEGABIT)
        assert elapsed(lambda: sessions[0].run(sums[0])) >= single
        barrier = threading.Barrier(2)

        def pull(index):
            barrier.wait()
            sessions[index].run(sums[index])

        def both():
            threads = [threading.Thread(target=pull, args=(i,)) for i in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert elapsed(both) >= 2 * single
    finally:
        for sess in sessions:
            sess.close()


def step_trace(sess, fetch):
    """(the step's seconds seen by the client, the seconds its worker's ops spanned)."""
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    start = time.perf_counter()
    sess.run(fetch, options=options, run_metadata=metadata)
    took = time.perf_counter() - start
    nodes = [node for device in metadata.step_stats.dev_stats
             if "/job:worker/" in device.device for node in device.node_stats]
    begin = min(node.all_start_micros for node in nodes)
    end = max(node.all_start_micros + node.all_end_rel_micros for node in nodes)
    return took, (end - begin) / 1e6


def test_slow_tasks_take_at_least_what_their_spec_adds(cluster):
    tasks = cluster({"ps": 1, "worker": 2}, processes=True,
                    emulate={("worker", 0): dict(slow="+20ms"), ("worker", 1): dict(slow="x3")})
    with tf.device("/job:worker/task:0"):
        light = tf.constant(1.0) + 1.0
    with tf.device("/job:worker/task:1"):
        x = tf.random_normal([300, 300], seed=1)
        heavy = tf.reduce_sum(tf.matmul(tf.matmul(x, x), x))
    with tf.device("/job:ps/task:0"):
        unslowed = tf.constant(1.0) + 1.0
    with tf.Session(tasks.target("worker", 0)) as sess:
        for _ in range(5):
            assert elapsed(lambda: sess.run(light)) >= 0.020
        sess.run(unslowed)
        assert min(elapsed(lambda: sess.run(unslowed)) for _ in range(5)) < 0.020
    with tf.Session(tasks.target("worker", 1)) as sess:
        for _ in range(5):
            took, ops = step_trace(sess, heavy)
            assert took >= 3 * ops


def test_a_slow_tasks_delay_ends_at_the_steps_deadline(cluster):
    """Emulated compute honours the step's deadline, as every blocking wait does."""
    tasks = cluster({"ps": 1, "worker": 1}, processes=True,
                    emulate={("worker", 0): dict(slow="+30s")})
    with tf.device("/job:worker/task:0"):
        light = tf.constant(1.0) + 1.0
    with tf.Session(tasks.target("worker", 0)) as sess:
        start = time.perf_counter()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(light, options=tf.RunOptions(timeout_in_ms=200))
        # the task failed the step at its deadline, not the client's backstop after its
        # grace (which is all that ended the wait while the task slept on)
        assert time.perf_counter() - start < 0.2 + GRACE_SECONDS


def test_dtfnb_server_refuses_a_bad_spec_naming_the_problem():
    spec = cluster_dict(worker=1)
    for flag, value, problem in [("--link", "100MB", "'100MB' is not a bandwidth"),
                                 ("--slow", "x0.5", "factor must be at least 1")]:
        done = subprocess.run([sys.executable, "-m", "dtfnb.server", "--cluster", str(spec)
                               .replace("'", '"'), "--job", "worker", "--task", "0", flag,
                               value], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and problem in done.stderr, done.stderr


def test_tasks_report_their_conditions_on_their_health_events(cluster):
    tasks = cluster({"worker": 1}, processes=True,
                    emulate={("worker", 0): dict(link="100Mbit,2ms", slow="+20ms")})
    with monitor.watch(tasks.target("worker"), kinds=["health"]) as events:
        health = next(events).health
    assert health.emulated == "100 Mbit/s, 2 ms · +20 ms/step"
