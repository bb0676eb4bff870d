"""What tests share: waiting without sleeping, threads, the leak check, the graphs and
checks that tests of one process and of a cluster both use, and real clusters (tasks as
in-process servers or as `python -m dtfnb.server` processes)."""

import contextlib
import gc
import glob
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.cluster import local_addresses
from dtfnb.protos import checkpoint_pb2

ROOT = pathlib.Path(__file__).resolve().parents[1]  # the repository


def tensorflow_python():
    """TensorFlow's own interpreter, for tests that compare with it: $DTFNB_TF_PYTHON, or
    .tfvenv/bin/python (`make tfvenv`, which .ci/run runs); None without one."""
    named = os.environ.get("DTFNB_TF_PYTHON")
    if named:
        return named
    venv = ROOT / ".tfvenv" / "bin" / "python"
    return str(venv) if venv.exists() else None


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


def leaked_threads(before, timeout=5.0):
    """The threads running now that were not in `before`, once given `timeout` seconds to end.

    Only when some are left does it collect garbage (a session dropped without close()
    shuts its pools down when it is collected) and wait: a collection after every test
    was half the suite's time."""
    def leaked():
        return [t for t in threading.enumerate() if t not in before and t.is_alive()]

    if leaked():
        gc.collect()
        poll_for(lambda: not leaked(), timeout)
    return leaked()


def chapter_pinning_graph():
    """The chapter's graph pinned across a 2 ps + 3 worker cluster; returns (a, c), c == 4."""
    with tf.device("/job:ps"):
        a = tf.Variable(1.0, name="a")
    with tf.device("/job:worker"):
        b = a + 2
    with tf.device("/job:worker/task:1"):
        c = a + b
    return a, c


def square_descent(device=None):
    """x → 0 by gradient descent on x², counting global steps; returns (step, x, loss, train)."""
    with tf.device(device):
        step = tf.train.get_or_create_global_step()
        x = tf.Variable(4.0, name="x")
        loss = tf.square(x, name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, x, loss, train


TRUE_W = np.array([[1.], [-2.], [3.]], np.float32)


def linear_data(task):
    """(x, y) of 64 examples for replica `task`: y = x @ TRUE_W, exactly."""
    x = np.random.RandomState(task).randn(64, 3).astype(np.float32)
    return x, x @ TRUE_W


def linear_model(task=0):
    """A linear regression on replica `task`'s data: returns (w, loss)."""
    x, y = linear_data(task)
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) - y))
    return w, loss


class SyncReplica:
    """One worker's own graph and session, as in between-graph replication, training `model`
    with SyncReplicasOptimizer (run them with train_sync_replicas)."""

    def __init__(self, cluster, task, replicas_to_aggregate, total_num_replicas, target,
                 model=linear_model):
        self.task = task
        self.graph = tf.Graph()
        with self.graph.as_default(), tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task}", cluster=cluster)):
            self.w, self.loss = model(task)
            self.global_step = tf.train.get_or_create_global_step()
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                                 replicas_to_aggregate, total_num_replicas)
            self.train_op = opt.minimize(self.loss, global_step=self.global_step)
            self.hook = opt.make_session_run_hook(is_chief=task == 0)
            self.hook.begin()
            self.init_op = tf.global_variables_initializer()
            # Spare tokens let the runs under way when training stops finish.
            self.release_op = opt.get_init_tokens_op(num_tokens=total_num_replicas)
        self.sess = tf.Session(target, graph=self.graph)
        self.runs = 0
        self.error = None

    def start(self, coord, stop, delay=0.0):
        """Runs the train op in a thread of its own until `stop` (pausing `delay` s before each)."""
        self.hook.after_create_session(self.sess, coord)
        self.thread = threading.Thread(target=self._loop, args=(stop, delay))
        self.thread.start()

    def _loop(self, stop, delay):
        try:
            while not stop.wait(delay):
                self.sess.run(self.train_op)
                self.runs += 1
        except Exception as err:  # handed to the test
            self.error = err


def train_sync_replicas(replicas, done, ps_target, delays=None):
    """Runs every replica until `done(global_step)`; returns the chief's loss before and
    after, and the global step. The chief starts first: the others find the variables
    ready."""
    chief = replicas[0]
    coord, stop = tf.train.Coordinator(), threading.Event()
    try:
        chief.sess.run(chief.init_op)
        before = chief.sess.run(chief.loss)
        for replica, delay in zip(replicas, delays or [0.0] * len(replicas)):
            replica.start(coord, stop, delay)
        assert poll_for(lambda: done(chief.sess.run(chief.global_step)), timeout=60)
        after, global_step = chief.sess.run([chief.loss, chief.global_step])
    finally:
        stop.set()
        coord.request_stop()
        # The replicas' runs end of themselves; then resetting the ps (as TensorFlow users
        # did) cancels the chief's runner, which waits for gradients that no longer come.
        chief.sess.run(chief.release_op)
        for replica in replicas:
            replica.thread.join(10)
        tf.Session.reset(ps_target)
        for replica in replicas:
            replica.sess.close()
    assert [r.error for r in replicas] == [None] * len(replicas)
    coord.join(stop_grace_period_secs=30)
    return before, after, global_step


def train_async_and_sync(spec, target):
    """Trains linear_model on the cluster `spec` (a ps and 2 workers; `target(job, task)`
    gives a task's session target) asynchronously, each worker applying its own gradients
    to the weight on the ps, then synchronously, SyncReplicasOptimizer aggregating both
    workers' gradients per step; asserts that each converges."""
    graphs = []
    for task in range(2):
        with tf.Graph().as_default() as graph, tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task}", cluster=spec)):
            _, loss = linear_model(task)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=tf.train.get_or_create_global_step())
            graphs.append((graph, loss, train, tf.global_variables_initializer()))
    sessions = [tf.Session(target("worker", task), graph=graph)
                for task, (graph, *_) in enumerate(graphs)]
    try:
        sessions[0].run(graphs[0][3])
        before = sessions[0].run(graphs[0][1])
        runs = [in_thread(lambda sess=sess, train=train: [sess.run(train) for _ in range(40)])
                for sess, (_, _, train, _) in zip(sessions, graphs)]
        for thread, box in runs:
            thread.join(60)
            assert "value" in box, box
        assert sessions[0].run(graphs[0][1]) < before / 100
    finally:
        for sess in sessions:
            sess.close()
    tf.Session.reset(target("ps", 0))
    replicas = [SyncReplica(spec, task, 2, 2, target("worker", task)) for task in range(2)]
    before, after, _ = train_sync_replicas(replicas, lambda step: step >= 10, target("ps", 0))
    assert after < before / 4
    assert all(replica.runs > 0 for replica in replicas)


def checkpoint_index(prefix):
    """The CheckpointIndex proto of the checkpoint at `prefix` (its .index file)."""
    with open(prefix + ".index", "rb") as f:
        body = f.read()[:-20]  # the footer: length, crc32, magic
    return checkpoint_pb2.CheckpointIndex.FromString(body)


def _first_runs_at_once(sess, n):
    """Adds a queue and its enqueue, runs the enqueue for the first time from n threads at
    once, and returns (their errors, what the queue then holds)."""
    x = tf.placeholder(tf.int32, [])
    queue = tf.FIFOQueue(n, tf.int32, shapes=[[]])
    enqueue = queue.enqueue(x)
    size = queue.size()
    start = threading.Barrier(n)
    errors = []

    def first_run(i):
        start.wait()
        try:
            sess.run(enqueue, {x: i})
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=first_run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors, sess.run(queue.dequeue_up_to(sess.run(size)))


def assert_concurrent_first_runs_lose_nothing(sess, rounds=100, n=100):
    """Grows the graph `rounds` times, each time running its new part first from `n`
    threads at once: the graph must cross to the master once, and each element arrive once."""
    for round_ in range(rounds):
        errors, got = _first_runs_at_once(sess, n)
        assert errors == [], f"round {round_}: {errors[:3]}"
        assert sorted(got) == list(range(n)), f"round {round_}"


def tls_certificates(directory, alt_names):
    """Writes into `directory` a CA (ca.pem, ca.key), a certificate it signs for `alt_names`
    ("IP:127.0.0.1,DNS:localhost") good for both ends (task.pem, task.key), and a rogue
    CA's (rogue-ca.pem, rogue.pem, rogue.key); returns `directory`. Skips the test
    without the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    (directory / "ext").write_text(f"subjectAltName={alt_names}\n"
                                   "extendedKeyUsage=serverAuth,clientAuth\n")
    for ca, name in (("ca", "task"), ("rogue-ca", "rogue")):
        openssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "1",
                "-subj", f"/CN=dtfnb test {ca}")
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj",
                "/CN=localhost")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "1", "-extfile", "ext")
    return directory



def cluster_dict(**jobs):
    """cluster_dict(ps=2, worker=3) -> {"ps": ["127.0.0.1:p0", ...], ...} on free ports."""
    addresses = iter(local_addresses(sum(jobs.values())))
    return {job: [next(addresses) for _ in range(n)] for job, n in jobs.items()}


class Cluster(dict):
    """The tasks of one cluster, started for a test: `jobs` is {job: count} (the tasks get
    free local ports) or {job: [address]}.

    It maps (job, index) to each task: a tf.train.Server of this process or, with
    `processes=True`, the Popen of a `python -m dtfnb.server` process (stderr captured);
    a test may put a restarted task in its place. `spec` is {job: [address]}. Tasks in
    `skip` are not started; `config` is the in-process servers' default session config;
    `emulate` maps (job, index) to a task's emulated conditions, dict(link=..., slow=...)
    (`--link` and `--slow` of a process)."""

    def __init__(self, jobs, processes=False, config=None, skip=(), emulate=None):
        fresh = cluster_dict(**{job: n for job, n in jobs.items() if isinstance(n, int)})
        self.spec = {job: fresh[job] if isinstance(n, int) else list(n) for job, n in jobs.items()}
        super().__init__()
        try:
            for job, addresses in self.spec.items():
                for index in range(len(addresses)):
                    if (job, index) in skip:
                        continue
                    conditions = (emulate or {}).get((job, index), {})
                    self[job, index] = (
                        start_task(self.spec, job, index,
                                   *[arg for name, spec in conditions.items()
                                     for arg in (f"--{name}", spec)]) if processes
                        else tf.train.Server(self.spec, job, index, config=config,
                                             emulate=conditions))
            if processes:
                for (job, index), proc in self.items():
                    wait_for_port(self.spec[job][index], proc=proc)
        except BaseException:
            self.stop()
            raise

    def target(self, job, index=0):
        return "grpc://" + self.spec[job][index]

    def stop(self):
        """Stops every task, processes by SIGTERM (each must exit cleanly on it)."""
        processes = []
        for task in self.values():
            if isinstance(task, subprocess.Popen):
                processes.append(task)
            else:
                task.stop()
        stop_processes(processes)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()


def wait_for_port(address, timeout=30.0, proc=None):
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"task at {address} exited with {proc.returncode}: "
                               f"{proc.stderr.read() if proc.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {address}")


def start_task(cluster, job, task, *args, env=None):
    """Starts one task as its own OS process; returns the Popen (stderr captured)."""
    return subprocess.Popen(
        [sys.executable, "-m", "dtfnb.server", "--cluster", json.dumps(cluster), "--job", job,
         "--task", str(task), *args],
        stderr=subprocess.PIPE, text=True, env=dict(os.environ, **(env or {})))


def freeze(proc, timeout=10.0):
    """SIGSTOPs `proc` and waits until each of its threads is stopped: the signal is only
    pending until the kernel schedules each thread, and on a busy machine a thread of a
    "stopped" task could still answer a request meanwhile."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while not all(_thread_state(stat) == "T"
                  for stat in glob.glob(f"/proc/{proc.pid}/task/*/stat")):
        if time.monotonic() > deadline:
            raise TimeoutError(f"task process {proc.pid} did not stop")
        time.sleep(0.005)


def _thread_state(stat_path):
    try:
        with open(stat_path) as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:  # the thread ended meanwhile
        return "T"


def stop_processes(procs):
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            if proc.stderr:  # a task that hangs in stop prints its threads' stacks there
                proc.stop_report = proc.stderr.read()[-6000:]
        if proc.stderr:
            proc.stderr.close()
