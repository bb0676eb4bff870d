"""MonitoredTrainingSession across tasks: a chief and a worker training between graphs on
servers of this process, with and without SyncReplicasOptimizer's hooks; with tasks as
real processes, the event files each worker writes, and recovery from a restarted ps
task, worker task or non-chief client."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import dtfnb as tf
from tests.helpers import (
    Cluster,
    cluster_dict,
    square_descent,
    start_task,
    stop_processes,
    wait_for_port,
)


def _train_chief_and_worker(build, processes=False, **session_args):
    """A chief and a worker client, each in its own thread with its own graph built by
    `build(cluster, task) -> (global_step, train_op, hooks)`, train over servers of a
    1 ps + 2 worker cluster (tasks as processes with `processes`); returns
    {task: (runs, final global step)}."""
    chief_ready = threading.Event()
    results = {}

    def replica(task):
        with tf.Graph().as_default():
            step, train, hooks = build(tasks.spec, task)
            if task == 1:
                chief_ready.wait(30)
            final = tf.train.FinalOpsHook(step)
            with tf.train.MonitoredTrainingSession(tasks.target("worker", task),
                                                   is_chief=task == 0,
                                                   hooks=[*hooks, final],
                                                   **session_args) as sess:
                chief_ready.set()
                runs = 0
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
            results[task] = runs, final.final_ops_values

    with Cluster({"ps": 1, "worker": 2}, processes=processes) as tasks:
        threads = [threading.Thread(target=replica, args=(task,)) for task in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert sorted(results) == [0, 1]
    return results


def test_between_graph_chief_and_worker_train_together():
    def build(cluster, task):
        step, _, _, train = square_descent(tf.train.replica_device_setter(cluster=cluster))
        return step, train, [tf.train.StopAtStepHook(last_step=20)]

    results = _train_chief_and_worker(build)
    assert sum(runs for runs, _ in results.values()) >= 20
    # Each stop check may read the step from before the other's updates, so the
    # replicas overshoot by a run or two, as TensorFlow's do.
    assert all(20 <= step <= 23 for _, step in results.values()), results


# As in TensorFlow, the chief's aggregation thread, cancelled by the close after the
# coordinator was joined, ends with a CancelledError traceback.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sync_replicas_hooks_run_inside_monitored_training_sessions():
    def build(cluster, task):
        with tf.device(tf.train.replica_device_setter(
                cluster=cluster, worker_device=f"/job:worker/task:{task}")):
            step = tf.train.get_or_create_global_step()
            x = tf.Variable(4.0, name="x")
            sync = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                                  replicas_to_aggregate=2,
                                                  total_num_replicas=2)
            train = sync.minimize(tf.square(x), global_step=step)
            # A replica that may have taken both tokens of the last update leaves the other
            # waiting for one, as in TensorFlow: the first to stop hands out tokens.
            release = tf.train.FinalOpsHook(sync.get_init_tokens_op(num_tokens=2))
        return step, train, [sync.make_session_run_hook(task == 0),
                             tf.train.StopAtStepHook(last_step=6), release]

    # The chief's aggregation thread stays blocked until the session closes.
    results = _train_chief_and_worker(build, stop_grace_period_secs=0.5)
    assert [step for _, step in results.values()] == [6, 6]  # one update per 2 gradients
    assert sum(runs for runs, _ in results.values()) >= 2 * 6


def test_each_worker_writes_a_run_of_its_own_that_tensorboard_loads(tmp_path):
    """The chief writes into `checkpoint_dir`, as TensorFlow's MonitoredTrainingSession
    does; the other worker, whose session writes nothing by default, adds a
    SummarySaverHook into a directory of its own: TensorBoard shows one run per task."""
    event_multiplexer = pytest.importorskip(
        "tensorboard.backend.event_processing.event_multiplexer")
    logdir = str(tmp_path)

    def build(cluster, task):
        step, _, loss, train = square_descent(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{task}"))
        tf.summary.scalar("x_squared", loss)
        hooks = [tf.train.StopAtStepHook(last_step=20)]
        if task != 0:
            hooks.append(tf.train.SummarySaverHook(
                save_steps=1, output_dir=os.path.join(logdir, f"worker_{task}"),
                summary_op=tf.summary.merge_all()))
        return step, train, hooks

    _train_chief_and_worker(build, processes=True, checkpoint_dir=logdir,
                            save_summaries_steps=1, log_step_count_steps=1)
    tf.summary.FileWriterCache.clear()  # what the hooks wrote, in the files
    runs = event_multiplexer.EventMultiplexer().AddRunsFromDirectory(logdir)
    runs.Reload()
    assert sorted(runs.Runs()) == [".", "worker_1"]
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    for run, task in ((".", 0), ("worker_1", 1)):
        steps = [s.step for s in runs.Scalars(run, "x_squared")]
        assert steps == sorted(set(steps)) and 1 <= steps[0] and steps[-1] <= 23, steps
        # Each run's graph is its own task's, as its session placed it.
        devices = {node.name: node.device for node in runs.Graph(run).node}
        assert devices["x"] == ps
        assert devices["loss"] == f"/job:worker/replica:0/task:{task}/device:CPU:0"
    assert runs.Scalars(".", "global_step/sec")  # the chief's alone
    assert "global_step/sec" not in runs.Runs()["worker_1"]["scalars"]


# -- tasks as processes: a ps task or a worker task restarts ---------------------------

@pytest.fixture(scope="module")
def tasks():
    """A ps task and two worker tasks, each its own process; the tests restart some."""
    cluster = cluster_dict(ps=1, worker=2)
    with Cluster(cluster, processes=True) as procs:
        yield cluster, procs


def _restart_later(cluster, procs, job, delay=0.5):
    """SIGKILLs a task now; starts it again on the same address after `delay` seconds."""
    procs[job, 0].kill()
    procs[job, 0].wait()

    def restart():
        time.sleep(delay)
        procs[job, 0] = start_task(cluster, job, 0)

    thread = threading.Thread(target=restart)
    thread.start()
    return thread


@pytest.mark.parametrize("job", ["ps", "worker"])
def test_a_restarted_task_rejoins_and_the_chief_resumes_from_the_checkpoint(
        tasks, tmp_path, job):
    cluster, procs = tasks
    step, x, _, train = square_descent(tf.train.replica_device_setter(cluster=cluster))
    target = "grpc://" + cluster["worker"][0]
    with tf.train.MonitoredTrainingSession(target, checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=5,
                                           stop_grace_period_secs=5) as sess:
        for _ in range(12):
            sess.run(train)
        saved = tf.train.latest_checkpoint(str(tmp_path))
        assert saved == str(tmp_path / "model.ckpt-10")
        restarting = _restart_later(cluster, procs, job)
        sess.run(train)  # fails on the killed task, then recovers on a new session
        restarting.join()
        wait_for_port(cluster[job][0], proc=procs[job, 0])
        assert sess.run(step) == 11  # the checkpoint's step 10, then this run's
        for _ in range(3):
            sess.run(train)
        assert sess.run(step) == 14
        assert sess.run(x) == pytest.approx(4.0 * 0.8 ** 14, rel=1e-5)


def test_a_ps_task_restarted_between_two_runs_is_noticed(tasks, tmp_path):
    cluster, procs = tasks
    step, _, _, train = square_descent(tf.train.replica_device_setter(cluster=cluster))
    with tf.train.MonitoredTrainingSession("grpc://" + cluster["worker"][0],
                                           checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=2) as sess:
        for _ in range(3):
            sess.run(train)
        _restart_later(cluster, procs, "ps", delay=0).join()
        wait_for_port(cluster["ps"][0], proc=procs["ps", 0])
        sess.run(train)
        assert sess.run(step) == 3


_NON_CHIEF = textwrap.dedent("""
    import dtfnb as tf
    cluster = {cluster!r}
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        step = tf.train.get_or_create_global_step()
        x = tf.Variable(4.0, name="x")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(x),
                                                                global_step=step)
    with tf.train.MonitoredTrainingSession("grpc://" + cluster["worker"][1],
                                           is_chief=False, max_wait_secs=60) as sess:
        print("joined at", sess.run(step), flush=True)
        while True:
            sess.run(train)
            print(sess.run(step), flush=True)
""")


def test_a_non_chief_worker_process_that_restarts_rejoins(tasks):
    cluster, _ = tasks
    script = _NON_CHIEF.format(cluster=cluster)
    step, _, _, train = square_descent(tf.train.replica_device_setter(cluster=cluster))
    with tf.train.MonitoredTrainingSession("grpc://" + cluster["worker"][0]) as sess:
        sess.run(train)
        clients, reached = [], 1
        try:
            for _ in range(2):  # the client, then its restart after a SIGKILL
                client = subprocess.Popen([sys.executable, "-c", script],
                                          stdout=subprocess.PIPE, text=True)
                clients.append(client)
                joined = client.stdout.readline()
                assert joined.startswith("joined at "), joined
                assert int(joined.split()[-1]) >= reached  # nothing was re-initialised
                for _ in range(3):
                    reached = int(client.stdout.readline())
                client.kill()
                client.wait()
                client.stdout.close()
            assert reached >= 7 and sess.run(step) >= reached
        finally:
            stop_processes(clients)
