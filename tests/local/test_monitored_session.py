"""MonitoredSession, MonitoredTrainingSession, Scaffold and the standard hooks; recovery
from a restarted ps task or worker task, with tasks as real processes."""

import logging
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import dtfnb as tf
from tests.helpers import Cluster, cluster_dict, start_task, stop_processes, wait_for_port


def _model(device=None):
    """x → 0 by gradient descent on x², counting global steps; returns (step, x, loss, train)."""
    with tf.device(device):
        step = tf.train.get_or_create_global_step()
        x = tf.Variable(4.0, name="x")
        loss = tf.square(x, name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, x, loss, train


class RecordingHook(tf.train.SessionRunHook):
    """Records every call; asks for `fetches` and feeds `feeds` on each run."""

    def __init__(self, calls, name, fetches=None, feeds=None):
        self.calls, self.name, self.fetches, self.feeds = calls, name, fetches, feeds
        self.results = []

    def begin(self):
        self.calls.append((self.name, "begin"))

    def after_create_session(self, session, coord):
        assert isinstance(coord, tf.train.Coordinator)
        self.calls.append((self.name, "after_create_session"))

    def before_run(self, run_context):
        self.calls.append((self.name, "before_run"))
        return tf.train.SessionRunArgs(self.fetches, self.feeds)

    def after_run(self, run_context, run_values):
        self.calls.append((self.name, "after_run"))
        self.results.append(run_values.results)

    def end(self, session):
        self.calls.append((self.name, "end"))


def test_hooks_run_in_order_around_each_run_with_their_fetches_and_feeds():
    step, x, loss, train = _model()
    fed = tf.placeholder_with_default(1.0, shape=(), name="fed")
    calls = []
    first = RecordingHook(calls, "a", fetches={"x": x})
    second = RecordingHook(calls, "b", fetches=fed * 2, feeds={fed: 5.0})
    with tf.train.MonitoredSession(hooks=[first, second]) as sess:
        assert tf.get_default_graph().finalized
        assert calls == [("a", "begin"), ("b", "begin"), ("a", "after_create_session"),
                         ("b", "after_create_session")]
        del calls[:]
        assert sess.run(loss) == 16.0
        assert sess.run(fed) == 5.0  # the hook's feed reaches the caller's fetch too
        assert calls == [("a", "before_run"), ("b", "before_run"), ("a", "after_run"),
                         ("b", "after_run")] * 2
    assert calls[-2:] == [("a", "end"), ("b", "end")]
    assert first.results == [{"x": 4.0}] * 2 and second.results == [10.0] * 2
    assert not tf.get_default_graph().finalized  # given back as it was


def test_conflicting_feeds_and_runs_after_a_stop_request_are_errors():
    _, x, _, _ = _model()
    fed = tf.placeholder_with_default(1.0, shape=())

    class StopHook(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()

    with tf.train.MonitoredSession(hooks=[RecordingHook([], "a", feeds={fed: 2.0})]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(x, feed_dict={fed: 3.0})
    with tf.train.MonitoredSession(hooks=[RecordingHook([], "a", feeds={fed: 2.0}),
                                          RecordingHook([], "b", feeds={fed: 2.0})]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            sess.run(x)
    with tf.train.MonitoredSession(hooks=[StopHook()]) as sess:
        assert not sess.should_stop()
        sess.run(x)
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(x)
    with pytest.raises(RuntimeError, match="Session is already closed"):
        sess.close()


def test_stop_at_step_hook_with_num_steps_or_last_step():
    step, _, _, train = _model()
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)
    runs = 0
    with tf.train.SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=7)]) as sess:
        while not sess.should_stop():
            sess.run(train)
            runs += 1
        assert runs == 7 and sess.raw_session().run(step) == 7
    with tf.Graph().as_default():
        step, _, _, train = _model()
        jump = tf.assign(step, 10)
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(jump))
        with tf.train.SingularMonitoredSession(  # num_steps counts from the step at creation
                hooks=[tf.train.StopAtStepHook(num_steps=3)], scaffold=scaffold) as sess:
            while not sess.should_stop():
                sess.run(train)
            assert sess.raw_session().run(step) == 13


def test_stop_at_step_hook_needs_a_global_step():
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_nan_tensor_hook_fails_or_stops(caplog):
    x = tf.Variable(1.0)
    loss = x * float("nan")
    ended = []
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss),
                                              RecordingHook(ended, "r")]) as sess:
            sess.run(x)
    assert ("r", "end") not in ended  # hooks end only after a clean run
    caplog.set_level(logging.WARNING, logger="dtfnb.train")
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, False)]) as sess:
        sess.run(x)
        assert sess.should_stop()
    assert "Model diverged with loss = NaN." in caplog.text


def test_logging_tensor_hook_logs_every_n_iter_and_at_end(caplog):
    caplog.set_level(logging.INFO, logger="dtfnb.train")
    step, _, loss, train = _model()
    hook = tf.train.LoggingTensorHook({"loss": loss, "step": "global_step"}, every_n_iter=2,
                                      at_end=True)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(train)
    lines = [r.getMessage() for r in caplog.records if r.name == "dtfnb.train"
             and r.getMessage().startswith("loss =")]
    assert lines[0] == "loss = 16.0, step = 0"
    assert lines[1].startswith("loss = 6.5536") and ", step = 2 (" in lines[1]
    assert lines[2].startswith("loss = 4.19430") and "step = 3" in lines[2]  # at end
    assert len(lines) == 3
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([loss])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook([loss], every_n_iter=0)


def test_logging_tensor_hook_formatter_and_names(caplog):
    caplog.set_level(logging.INFO, logger="dtfnb.train")
    _, _, loss, train = _model()
    hook = tf.train.LoggingTensorHook(["loss"], every_n_secs=3600,
                                      formatter=lambda v: f"custom {v['loss']:.1f}")
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(train)
        sess.run(train)  # within the hour: not logged
    assert [r.getMessage() for r in caplog.records if "custom" in r.getMessage()] == \
        ["custom 16.0"]


def test_step_counter_hook_logs_global_steps_per_second(caplog):
    caplog.set_level(logging.INFO, logger="dtfnb.train")
    _, _, _, train = _model()
    with tf.train.MonitoredSession(hooks=[tf.train.StepCounterHook(every_n_steps=2)]) as sess:
        for _ in range(5):
            sess.run(train)
    rates = [r.getMessage() for r in caplog.records
             if r.getMessage().startswith("global_step/sec: ")]
    assert len(rates) == 2 and all(float(r.split(": ")[1]) > 0 for r in rates)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)


def test_second_or_step_timer():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(0) and not timer.should_trigger_for_step(2)
    assert timer.should_trigger_for_step(3)
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(3)
    assert elapsed_steps == 3 and elapsed_secs >= 0 and timer.last_triggered_step() == 3
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_final_ops_and_feed_fn_hooks():
    _, x, _, train = _model()
    fed = tf.placeholder(tf.float32, shape=())
    final = tf.train.FinalOpsHook(x * fed, final_ops_feed_dict={fed: 10.0})
    feeding = tf.train.FeedFnHook(lambda: {fed: 3.0})
    doubled = fed * 2
    with tf.train.MonitoredSession(hooks=[final, feeding]) as sess:
        assert sess.run(doubled) == 6.0
        sess.run(train)
    assert final.final_ops_values == pytest.approx(32.0)


def test_scaffold_fills_in_tensorflow_defaults_and_uses_the_collections():
    _model()
    local = tf.Variable(0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    scaffold = tf.train.Scaffold()
    scaffold.finalize()
    assert tf.get_default_graph().finalized
    graph = tf.get_default_graph()
    assert graph.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
    assert graph.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]
    assert graph.get_collection(tf.GraphKeys.LOCAL_INIT_OP) == [scaffold.local_init_op]
    assert graph.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
    assert scaffold.saver.saver_def.sharded
    with tf.Session() as sess:
        assert sorted(sess.run(scaffold.ready_op)) == [b"global_step", b"local", b"x"]
        assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"global_step", b"x"]
        sess.run(scaffold.init_op)
        sess.run(scaffold.local_init_op)
        assert sess.run(local) == 0 and sess.run(scaffold.ready_op).size == 0
    copy = tf.train.Scaffold(init_op=scaffold.local_init_op, copy_from_scaffold=scaffold)
    assert copy.init_op is scaffold.local_init_op  # what is given wins over the copy
    assert copy.ready_op is scaffold.ready_op and copy.saver is scaffold.saver
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance"):
        tf.train.Scaffold(copy_from_scaffold=object())


def test_scaffold_init_fn_gets_the_scaffold_and_several_ops_in_a_collection_are_an_error():
    _, x, _, _ = _model()
    seen = []

    def init_fn(scaffold, sess):
        seen.append(scaffold)
        sess.run(tf.train.get_global_step().initializer)
        sess.run(x.initializer)

    scaffold = tf.train.Scaffold(init_op=tf.no_op(), init_fn=init_fn)
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold)) as sess:
        assert sess.run(x) == 4.0
    assert seen == [scaffold]
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables())
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables())
    with pytest.raises(RuntimeError, match='More than one item in the collection "ready_op"'):
        tf.train.Scaffold().finalize()


def test_queue_runners_start_and_an_exhausted_input_ends_the_with_block():
    number = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
    got = []
    with tf.train.MonitoredSession() as sess:  # local_init_op initialises the epoch counter
        while not sess.should_stop():
            got.append(sess.run(number))
    assert got == [0, 1, 2, 3, 4]


def test_a_queue_runner_error_stops_the_session_and_is_raised_on_close():
    never_fed = tf.placeholder(tf.float32, shape=())
    queue = tf.FIFOQueue(5, [tf.float32], shapes=[()])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(never_fed)]))
    size = queue.size()
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
        with tf.train.MonitoredSession() as sess:
            while not sess.should_stop():
                sess.run(size)


def test_checkpoints_are_written_and_a_new_session_resumes_from_them(tmp_path):
    step, x, _, train = _model()
    saves = []

    class Listener(tf.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saves.append(global_step_value)

    final = tf.train.FinalOpsHook(x)
    hooks = [tf.train.StopAtStepHook(last_step=7), final,
             tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[Listener()])]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                           save_checkpoint_secs=None) as sess:
        while not sess.should_stop():
            sess.run(train)
    trained = final.final_ops_values
    assert saves == [0, 3, 6, 7]  # at creation, every 3 steps, at the end
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-7")
    tf.reset_default_graph()
    step, x, _, train = _model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=2) as sess:
        assert sess.run(step) == 7 and sess.run(x) == pytest.approx(trained)
        sess.run(train)
        sess.run(train)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-9")


def test_monitored_training_session_defaults():
    step, _, _, train = _model()
    with tf.train.MonitoredTrainingSession() as sess:  # no checkpoint_dir: no saver hook
        sess.run(train)
        assert sess.run(step) == 1
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook("/tmp", save_steps=1, saver=object(),
                                     scaffold=tf.train.Scaffold())


def test_a_non_chief_gives_up_when_no_chief_initialises_within_max_wait_secs():
    _model()
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting 1 secs"):
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=1)
    assert time.monotonic() - start < 10  # the next poll (in 30 s) would come too late


def test_a_reset_master_aborts_the_session_and_the_chief_restores_the_checkpoint(
        cluster, tmp_path):
    server = cluster({"local": 1})["local", 0]
    step, x, _, train = _model()
    with tf.train.MonitoredTrainingSession(server.target, checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=4) as sess:
        for _ in range(6):
            sess.run(train)
        # Frees every variable and closes the session: its next run is an AbortedError.
        tf.Session.reset(server.target)
        sess.run(train)
        assert sess.run(step) == 5  # from model.ckpt-4, then one more step
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")


def _train_chief_and_worker(build, **session_args):
    """A chief and a worker client, each in its own thread with its own graph built by
    `build(cluster, task) -> (global_step, train_op, hooks)`, train over servers of a
    1 ps + 2 worker cluster; returns {task: (runs, final global step)}."""
    chief_ready = threading.Event()
    results = {}

    def replica(task):
        with tf.Graph().as_default():
            step, train, hooks = build(tasks.spec, task)
            if task == 1:
                chief_ready.wait(30)
            final = tf.train.FinalOpsHook(step)
            with tf.train.MonitoredTrainingSession(tasks["worker", task].target,
                                                   is_chief=task == 0,
                                                   hooks=[*hooks, final],
                                                   **session_args) as sess:
                chief_ready.set()
                runs = 0
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
            results[task] = runs, final.final_ops_values

    with Cluster({"ps": 1, "worker": 2}) as tasks:
        threads = [threading.Thread(target=replica, args=(task,)) for task in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert sorted(results) == [0, 1]
    return results


def test_between_graph_chief_and_worker_train_together():
    def build(cluster, task):
        step, _, _, train = _model(tf.train.replica_device_setter(cluster=cluster))
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
        return step, train, [sync.make_session_run_hook(task == 0),
                             tf.train.StopAtStepHook(last_step=6)]

    # The chief's aggregation thread stays blocked until the session closes.
    results = _train_chief_and_worker(build, stop_grace_period_secs=0.5)
    assert [step for _, step in results.values()] == [6, 6]  # one update per 2 gradients
    assert sum(runs for runs, _ in results.values()) >= 2 * 6


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
    step, x, _, train = _model(tf.train.replica_device_setter(cluster=cluster))
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
    step, _, _, train = _model(tf.train.replica_device_setter(cluster=cluster))
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
    step, _, _, train = _model(tf.train.replica_device_setter(cluster=cluster))
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
