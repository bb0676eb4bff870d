"""Tasks that are separate OS processes: the chapter's multi-server examples, the server
command and its signals, killed, stopped and late tasks, and concurrent first runs."""

import ctypes
import json
import os
import platform
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dtfnb as tf
from tests.helpers import (
    ROOT,
    Cluster,
    assert_concurrent_first_runs_lose_nothing,
    chapter_pinning_graph,
    cluster_dict,
    freeze,
    local_addresses,
    start_task,
    stop_processes,
    wait_for_port,
)


@pytest.fixture(scope="module")
def chapter_cluster():
    """The chapter's cluster: 2 ps tasks and 3 workers, one process each."""
    cluster = cluster_dict(ps=2, worker=3)
    with Cluster(cluster, processes=True) as procs:
        yield cluster, procs
    for proc in procs.values():
        assert proc.returncode == 0, ("a task did not exit cleanly on SIGTERM:\n"
                                      + getattr(proc, "stop_report", ""))


def target(cluster, job, task):
    return "grpc://" + cluster[job][task]


def test_pinning_across_tasks_gives_4(chapter_cluster):
    cluster, _ = chapter_cluster
    a, c = chapter_pinning_graph()
    with tf.Session(target(cluster, "worker", 0)) as sess:
        sess.run(a.initializer)
        assert c.eval() == 4.0
        assert [d.name for d in sess.list_devices()] == [
            f"/job:{job}/replica:0/task:{i}/device:CPU:0"
            for job in ("worker",) for i in (0,)] + [
            f"/job:{job}/replica:0/task:{i}/device:CPU:0"
            for job, n in (("ps", 2), ("worker", 3)) for i in range(n)
            if (job, i) != ("worker", 0)]


def test_replica_device_setter_places_variables_round_robin_on_ps(chapter_cluster):
    cluster, _ = chapter_cluster
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        v1 = tf.Variable(1.0, name="v1")
        v2 = tf.Variable(2.0, name="v2")
        v3 = tf.Variable(3.0, name="v3")
        s = v1 + v2
        with tf.device("/task:1"):
            p1 = 2 * s
            with tf.device("/cpu:0"):
                p2 = 3 * s
    devices = {op.name: op.device for op in tf.get_default_graph().get_operations()}
    assert (devices["v1"], devices["v2"], devices["v3"]) == (
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0")
    assert devices["add"] == "/job:worker"
    assert devices["mul"] == "/job:worker/task:1"
    assert devices["mul_1"] == "/job:worker/task:1/device:CPU:0"
    metadata = tf.RunMetadata()
    with tf.Session(target(cluster, "worker", 2)) as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([p1, p2, v3], options=tf.RunOptions(output_partition_graphs=True),
                       run_metadata=metadata)
    assert got == [6.0, 9.0, 3.0]
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed["v2"] == "/job:ps/replica:0/task:1/device:CPU:0"
    assert placed["add"] == "/job:worker/replica:0/task:2/device:CPU:0"  # the master's task
    assert placed["mul_1"] == "/job:worker/replica:0/task:1/device:CPU:0"


SIMPLE_CLIENT = textwrap.dedent("""
    import sys
    import dtfnb as tf

    with tf.device("/job:ps/task:0"):
        x = tf.Variable(0.0, name="x")
    increment_x = tf.assign(x, x + 1)
    with tf.Session(sys.argv[1]) as sess:
        if sys.argv[2:] == ["init"]:
            sess.run(x.initializer)
        sess.run(increment_x)
        print(x.eval())
""")


def test_simple_client_processes_share_a_variable_on_ps(chapter_cluster, tmp_path):
    cluster, _ = chapter_cluster
    script = tmp_path / "simple_client.py"
    script.write_text(SIMPLE_CLIENT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def client(*args):
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                              text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert client(target(cluster, "worker", 0), "init") == "1.0"
    assert client(target(cluster, "worker", 1)) == "2.0"
    tf.Session.reset(target(cluster, "worker", 0))  # the default container, on every task


def test_containers_and_reset(chapter_cluster):
    cluster, _ = chapter_cluster
    with tf.container("my_problem_1"), tf.device("/job:ps/task:1"):
        x = tf.Variable(3.0, name="x")
    with tf.device("/job:ps/task:0"):
        y = tf.Variable(5.0, name="y")
    master, other = target(cluster, "worker", 0), target(cluster, "worker", 1)
    first, second = tf.Session(master), tf.Session(other)
    try:
        first.run([x.initializer, y.initializer])
        assert second.run(x) == 3.0
        tf.Session.reset(master, ["my_problem_1", "no_such_container"])
        with pytest.raises(tf.errors.AbortedError, match="is not found"):
            first.run(x)
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value x"):
            second.run(x)
        assert second.run(y) == 5.0  # another container keeps its state
        second.run(x.initializer)
        assert second.run(x) == 3.0
    finally:
        second.close()
        with pytest.raises(tf.errors.AbortedError):
            first.close()
        tf.Session.reset(master, ["my_problem_1", ""])


def test_server_command_reads_tf_config_and_exits_on_sigterm(tmp_path):
    cluster = cluster_dict(worker=1)
    env = {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker",
                                                                 "index": 0}})}
    proc = subprocess.Popen([sys.executable, "-m", "dtfnb.server"], stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, **env))
    try:
        wait_for_port(cluster["worker"][0], proc=proc)
        with tf.Session(target(cluster, "worker", 0)) as sess:
            assert sess.run(tf.constant(41) + 1) == 42
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        log = proc.stderr.read()
        assert "/job:worker/replica:0/task:0 serving at" in log
    finally:
        stop_processes([proc])


# tgkill sends a signal to one thread of a process; Python has no call for it.
_SYS_TGKILL = {"x86_64": 234, "aarch64": 131}


@pytest.mark.skipif(platform.machine() not in _SYS_TGKILL, reason="tgkill's number unknown")
def test_a_sigterm_that_reaches_any_thread_stops_the_task():
    """The kernel hands a process's signal to any of its threads; on a busy machine that
    is often not the main one, which must still notice and stop the task."""
    cluster = cluster_dict(worker=1)
    with Cluster(cluster, processes=True) as procs:
        proc = procs["worker", 0]
        others = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        libc = ctypes.CDLL(None, use_errno=True)
        tgkill = _SYS_TGKILL[platform.machine()]
        assert libc.syscall(tgkill, proc.pid, others[-1], signal.SIGTERM) == 0
        assert proc.wait(timeout=10) == 0


def test_server_command_exits_with_its_parent(tmp_path):
    cluster, log = cluster_dict(worker=1), tmp_path / "task.log"
    # The parent starts the task, naming itself, and leaves while the task starts up.
    parent = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, subprocess, sys
            task = subprocess.Popen([sys.executable, "-m", "dtfnb.server", "--cluster",
                                     {json.dumps(cluster)!r}, "--job", "worker", "--task",
                                     "0", f"--exit-with-parent={{os.getpid()}}"],
                                    stdout=subprocess.DEVNULL, stderr=open({str(log)!r}, "w"))
            print(task.pid)""")], capture_output=True, text=True, check=True, timeout=30)
    pid = int(parent.stdout)
    deadline = time.monotonic() + 30
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _running(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the task outlived its parent")
    text = log.read_text()
    assert "serving at" in text and "exited: stopping" in text, text


def _running(pid):
    """Alive and not a zombie (an orphan's exit may wait for a reaper that never comes)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
@pytest.mark.parametrize("switch, policy", [(None, "SCHED_BATCH"), ("0", "SCHED_OTHER")])
def test_a_task_process_schedules_its_threads_for_throughput(switch, policy):
    cluster = cluster_dict(worker=1)
    proc = start_task(cluster, "worker", 0,
                      env={} if switch is None else {"DTFNB_SCHED_BATCH": switch})
    try:
        wait_for_port(cluster["worker"][0], proc=proc)
        with tf.Session(target(cluster, "worker", 0)) as sess:  # threads of every kind
            sess.run(tf.matmul(tf.ones([64, 64]), tf.ones([64, 64])))
        threads = os.listdir(f"/proc/{proc.pid}/task")
        assert len(threads) > 3
        assert {os.sched_getscheduler(int(t)) for t in threads} == {getattr(os, policy)}
    finally:
        stop_processes([proc])


def test_server_command_rejects_a_bad_cluster():
    done = subprocess.run([sys.executable, "-m", "dtfnb.server", "--cluster", '{"ps": 5}',
                           "--job", "ps", "--task", "0"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "ps" in done.stderr


@pytest.mark.parametrize("jobs", ["ps", "ps=0", "ps=1,ps=2", "=2"])
def test_server_command_rejects_bad_slurm_jobs(jobs):
    done = subprocess.run([sys.executable, "-m", "dtfnb.server", "--jobs", jobs],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "expected JOB=N,... like ps=1,worker=2" in done.stderr


def test_a_killed_task_fails_the_step_with_unavailable_in_bounded_time():
    cluster = cluster_dict(ps=1, worker=1)
    with Cluster(cluster, processes=True) as procs:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.arange(4.0), name="v")
            doubled = v * 2
        with tf.Session(target(cluster, "worker", 0)) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(doubled), [0, 2, 4, 6])
            procs["ps", 0].kill()
            procs["ps", 0].wait()
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match=cluster["ps"][0]) as info:
                sess.run(doubled)
            assert time.monotonic() - start < 10
            assert "/job:ps/replica:0/task:0" in str(info.value)


def test_a_stopped_task_cannot_outlast_the_deadline():
    cluster = cluster_dict(ps=1, worker=1)
    with Cluster(cluster, processes=True) as procs:
        with tf.device("/job:ps/task:0"):
            out = tf.constant(1.0) + 1.0
        ps = procs["ps", 0]
        with tf.Session(target(cluster, "worker", 0)) as sess:
            assert sess.run(out) == 2.0
            freeze(ps)
            try:
                start = time.monotonic()
                with pytest.raises(tf.errors.DeadlineExceededError):
                    sess.run(out, options=tf.RunOptions(timeout_in_ms=500))
                assert time.monotonic() - start < 5
            finally:
                ps.send_signal(signal.SIGCONT)
            assert sess.run(out) == 2.0  # the session stays usable


def test_a_timed_out_dequeue_on_ps_fails_the_step_as_tensorflow_does(chapter_cluster):
    """The step times out, not the kernel: the same error however the deadline is met
    (by the ps's kernel, the ps's executor waiting on its receive, or the master)."""
    cluster, _ = chapter_cluster
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[2]], name="q", shared_name="timed_q")
    # `n` is placed on the master's task, so the ps's part of the step has a receive.
    dequeue_many = q.dequeue_many(2)
    with tf.Session(target(cluster, "worker", 1)) as sess:
        sess.run(q.enqueue([[1.0, 2.0]]))
        for _ in range(5):
            with pytest.raises(tf.errors.DeadlineExceededError) as info:
                sess.run(dequeue_many, options=tf.RunOptions(timeout_in_ms=200))
            assert info.value.message == "Timed out waiting for notification"
        assert sess.run(q.size()) == 1  # and the item it had taken is back


def test_concurrent_first_runs_on_a_task_process_lose_nothing():
    cluster = cluster_dict(local=1)
    with Cluster(cluster, processes=True), tf.Session(target(cluster, "local", 0)) as sess:
        assert_concurrent_first_runs_lose_nothing(sess)


def test_a_session_waits_for_a_task_that_starts_late():
    cluster = cluster_dict(ps=1, worker=1)
    with Cluster(cluster, processes=True, skip={("ps", 0)}):
        with tf.device("/job:ps/task:0"):
            out = tf.constant(20.0) + 1.0
        late = []
        try:
            with tf.Session(target(cluster, "worker", 0)) as sess:
                late.append(start_task(cluster, "ps", 0))
                assert sess.run(out) == 21.0
        finally:
            stop_processes(late)


def test_bind_serves_a_task_whose_own_address_does_not_resolve_yet():
    # A Kubernetes pod's service name may resolve only after its task starts.
    port = local_addresses(1)[0].rsplit(":", 1)[1]
    cluster = {"worker": [f"not-yet-resolvable.invalid:{port}"]}
    proc = start_task(cluster, "worker", 0, "--bind", "127.0.0.1")
    try:
        wait_for_port(f"127.0.0.1:{port}", proc=proc)
        with tf.device("/job:worker/task:0"):
            product = tf.constant(2.0) * 3.0
        with tf.Session(f"grpc://127.0.0.1:{port}") as sess:
            assert sess.run(product) == 6.0
    finally:
        stop_processes([proc])
