"""MonitoredSession, MonitoredTrainingSession, Scaffold and the standard hooks, on a local
session or a server of this process."""

import logging
import time

import pytest

import dtfnb as tf
from tests.helpers import square_descent


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
    step, x, loss, train = square_descent()
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
    _, x, _, _ = square_descent()
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
    step, _, _, train = square_descent()
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
        step, _, _, train = square_descent()
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
    step, _, loss, train = square_descent()
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
    _, _, loss, train = square_descent()
    hook = tf.train.LoggingTensorHook(["loss"], every_n_secs=3600,
                                      formatter=lambda v: f"custom {v['loss']:.1f}")
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(train)
        sess.run(train)  # within the hour: not logged
    assert [r.getMessage() for r in caplog.records if "custom" in r.getMessage()] == \
        ["custom 16.0"]


def test_step_counter_hook_logs_global_steps_per_second(caplog):
    caplog.set_level(logging.INFO, logger="dtfnb.train")
    _, _, _, train = square_descent()
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
    _, x, _, train = square_descent()
    fed = tf.placeholder(tf.float32, shape=())
    final = tf.train.FinalOpsHook(x * fed, final_ops_feed_dict={fed: 10.0})
    feeding = tf.train.FeedFnHook(lambda: {fed: 3.0})
    doubled = fed * 2
    with tf.train.MonitoredSession(hooks=[final, feeding]) as sess:
        assert sess.run(doubled) == 6.0
        sess.run(train)
    assert final.final_ops_values == pytest.approx(32.0)


def test_scaffold_fills_in_tensorflow_defaults_and_uses_the_collections():
    square_descent()
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
    _, x, _, _ = square_descent()
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
    step, x, _, train = square_descent()
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
    step, x, _, train = square_descent()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=2) as sess:
        assert sess.run(step) == 7 and sess.run(x) == pytest.approx(trained)
        sess.run(train)
        sess.run(train)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-9")


def test_monitored_training_session_defaults():
    step, _, _, train = square_descent()
    with tf.train.MonitoredTrainingSession() as sess:  # no checkpoint_dir: no saver hook
        sess.run(train)
        assert sess.run(step) == 1
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook("/tmp", save_steps=1, saver=object(),
                                     scaffold=tf.train.Scaffold())


def test_a_non_chief_gives_up_when_no_chief_initialises_within_max_wait_secs():
    square_descent()
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting 1 secs"):
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=1)
    assert time.monotonic() - start < 10  # the next poll (in 30 s) would come too late


def test_a_reset_master_aborts_the_session_and_the_chief_restores_the_checkpoint(
        cluster, tmp_path):
    server = cluster({"local": 1})["local", 0]
    step, x, _, train = square_descent()
    with tf.train.MonitoredTrainingSession(server.target, checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=4) as sess:
        for _ in range(6):
            sess.run(train)
        # Frees every variable and closes the session: its next run is an AbortedError.
        tf.Session.reset(server.target)
        sess.run(train)
        assert sess.run(step) == 5  # from model.ckpt-4, then one more step
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")
