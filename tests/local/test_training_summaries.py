"""What training writes for TensorBoard: MonitoredTrainingSession's summary, step-counter
and checkpoint hooks, SummarySaverHook alone, and Supervisor's summary services, read
back with TensorBoard's own loader. The tags, steps and session logs expected are those
TensorFlow 1 (2.21's tf.compat.v1) writes for the same script."""

import os
import time

import pytest

import dtfnb as tf
from tests.helpers import poll_for, square_descent

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")


# The hooks' cached writers are closed before reading, so that everything they were
# given is in the files (TensorBoard would see it within their `flush_secs`).

def _loaded(logdir):
    tf.summary.FileWriterCache.clear()
    accumulator = event_accumulator.EventAccumulator(str(logdir))
    accumulator.Reload()
    return accumulator


def _events(logdir):
    """Every event of `logdir`'s event files, the files in the order TensorBoard reads."""
    tf.summary.FileWriterCache.clear()
    return [event for name in sorted(os.listdir(logdir)) if "tfevents" in name
            for event in tf.train.summary_iterator(os.path.join(logdir, name))]


def _session_logs(logdir):
    return [(tf.SessionLog.SessionStatus.Name(e.session_log.status), e.step)
            for e in _events(logdir) if e.HasField("session_log")]


def _steps(scalars):
    return [s.step for s in scalars]


# -- the hooks alone -------------------------------------------------------------------

def test_summary_saver_hook_writes_its_ops_every_n_steps_to_its_writer(tmp_path):
    step, x, loss, train = square_descent()
    summaries = [tf.summary.scalar("x_value", x), tf.summary.scalar("loss_value", loss)]
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path))
    writer = tf.summary.FileWriter(str(tmp_path))
    hook = tf.train.SummarySaverHook(save_steps=2, summary_writer=writer, summary_op=summaries)
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=6)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    writer.close()
    loaded = _loaded(tmp_path)
    assert _steps(loaded.Scalars("x_value")) == _steps(loaded.Scalars("loss_value")) == [1, 3, 5]


def test_summary_saver_hook_every_n_secs(tmp_path):
    _, _, loss, train = square_descent()
    hook = tf.train.SummarySaverHook(save_secs=3600, output_dir=str(tmp_path),
                                     summary_op=tf.summary.scalar("loss_value", loss))
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert _steps(_loaded(tmp_path).Scalars("loss_value")) == [1]  # the first run, then not again


def test_step_counter_hook_writes_the_rate_to_its_output_dir(tmp_path):
    step = tf.train.get_or_create_global_step()
    count = tf.assign_add(step, 1)
    hook = tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(7):
            sess.run(count)
            time.sleep(0.01)
    rates = _loaded(tmp_path).Scalars("global_step/sec")
    assert _steps(rates) == [3, 5, 7]  # the first trigger (step 1) has no rate yet
    assert all(0 < s.value < 2 / 0.01 for s in rates)


# -- MonitoredTrainingSession ----------------------------------------------------------

def _train(logdir, last_step, **session_args):
    """square_descent with a summary of its loss, trained by a MonitoredTrainingSession
    to `last_step`; returns the loss summary's tag."""
    _, _, loss, train = square_descent()
    tag = tf.summary.scalar("x_squared", loss).op.name
    with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(logdir), hooks=[tf.train.StopAtStepHook(last_step=last_step)],
            **session_args) as sess:
        while not sess.should_stop():
            sess.run(train)
    return tag


def test_monitored_training_session_writes_summaries_rates_the_graph_and_checkpoints(
        tmp_path):
    tag = _train(tmp_path, 12, save_summaries_steps=5, log_step_count_steps=5)
    loaded = _loaded(tmp_path)
    # At the global step after the run that computed them, as TensorFlow writes them.
    assert _steps(loaded.Scalars(tag)) == [1, 6, 11]
    assert _steps(loaded.Scalars("global_step/sec")) == [6, 11]
    assert all(s.value > 0 for s in loaded.Scalars("global_step/sec"))
    nodes = {node.name for node in loaded.Graph().node}
    assert {"x", "global_step", "save/restore_all"} <= nodes
    assert loaded.MetaGraph().saver_def.save_tensor_name
    assert _session_logs(tmp_path) == [("CHECKPOINT", 0), ("START", 1), ("CHECKPOINT", 12)]
    checkpoints = [e.session_log.checkpoint_path for e in _events(tmp_path)
                   if e.session_log.status == tf.SessionLog.CHECKPOINT]
    assert checkpoints == [str(tmp_path / "model.ckpt")] * 2


def test_summary_dir_takes_the_summaries_and_checkpoint_dir_the_graph(tmp_path):
    checkpoints, summaries = tmp_path / "ckpt", tmp_path / "summaries"
    tag = _train(checkpoints, 3, summary_dir=str(summaries), save_summaries_steps=1)
    assert _steps(_loaded(summaries).Scalars(tag)) == [1, 2, 3]
    assert _session_logs(summaries) == [("START", 1)]
    assert _session_logs(checkpoints) == [("CHECKPOINT", 0), ("CHECKPOINT", 3)]
    assert "x" in {node.name for node in _loaded(checkpoints).Graph().node}
    assert _loaded(checkpoints).Tags()["scalars"] == []


def test_no_summaries_without_a_directory_or_with_both_frequencies_off(tmp_path):
    tf.summary.scalar("x_squared", square_descent()[2])
    with tf.train.MonitoredTrainingSession() as sess:  # no directory: nothing to write to
        sess.run(tf.train.get_global_step())
    tf.reset_default_graph()
    tag = _train(tmp_path, 3, save_summaries_steps=None, save_summaries_secs=None,
                 log_step_count_steps=None)
    assert tag not in _loaded(tmp_path).Tags()["scalars"]
    assert [status for status, _ in _session_logs(tmp_path)] == ["CHECKPOINT"] * 2


def test_a_restarted_jobs_start_drops_what_the_steps_after_its_checkpoint_wrote(tmp_path):
    class Crash(Exception):
        pass

    _, _, loss, train = square_descent()
    tag = tf.summary.scalar("x_squared", loss).op.name
    with pytest.raises(Crash), tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_checkpoint_steps=10,
            save_summaries_steps=1) as sess:
        for _ in range(15):
            sess.run(train)
        raise Crash  # no checkpoint after step 10's
    tf.summary.FileWriterCache.clear()  # a new process: a new event file
    tf.reset_default_graph()
    _train(tmp_path, 20, save_checkpoint_steps=10, save_summaries_steps=1)
    written = [e.step for e in _events(tmp_path) if e.HasField("summary")
               and e.summary.value[0].tag == tag]
    assert written == list(range(1, 16)) + list(range(11, 21))
    assert ("START", 11) in _session_logs(tmp_path)
    # TensorBoard drops the first job's steps 11 to 15, which its restart did again.
    assert _steps(_loaded(tmp_path).Scalars(tag)) == list(range(1, 21))


# -- Supervisor ------------------------------------------------------------------------

def test_supervisor_writes_the_graph_start_summaries_rates_checkpoints_and_stop(tmp_path):
    step, _, loss, train = square_descent()
    summary = tf.summary.scalar("loss_value", loss)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05,
                             save_model_secs=3600)
    assert sv.summary_op is not None and sv.summary_writer is not None
    with sv.managed_session() as sess:
        assert poll_for(lambda: tf.train.latest_checkpoint(str(tmp_path)), 10)
        for _ in range(5):
            sess.run(train)
            time.sleep(0.03)
        sv.summary_computed(sess, sess.run(summary))
        sv.summary_computed(sess, sess.run(summary), global_step=100)
    loaded = _loaded(tmp_path)
    assert {"x", "global_step"} <= {node.name for node in loaded.Graph().node}
    losses = loaded.Scalars("loss_value")
    computed = {s.step: s.value for s in losses if s.step in (5, 100)}
    assert computed == pytest.approx({5: 16 * 0.64 ** 5, 100: 16 * 0.64 ** 5})
    assert len(losses) >= 3  # the thread's too, at least as it starts
    assert loaded.Scalars("global_step/sec")
    assert _session_logs(tmp_path) == [("START", 0), ("CHECKPOINT", 0), ("STOP", 0)]


def test_a_new_supervisor_writes_a_new_file_starting_at_the_restored_step(tmp_path):
    step, _, _, train = square_descent()
    sv = tf.train.Supervisor(logdir=str(tmp_path), summary_op=None, save_model_secs=None)
    with sv.managed_session() as sess:
        for _ in range(4):
            sess.run(train)
        sv.saver.save(sess, sv.save_path, global_step=step)
    tf.reset_default_graph()
    square_descent()
    sv = tf.train.Supervisor(logdir=str(tmp_path), summary_op=None, save_model_secs=None)
    with sv.managed_session():
        pass
    files = sorted(name for name in os.listdir(tmp_path) if "tfevents" in name)
    assert len(files) == 2
    second = [(tf.SessionLog.SessionStatus.Name(e.session_log.status), e.step)
              for e in tf.train.summary_iterator(str(tmp_path / files[1]))
              if e.HasField("session_log")]
    assert second == [("START", 4), ("STOP", 0)]


def test_only_the_chief_supervisor_writes(tmp_path):
    tf.summary.scalar("loss_value", square_descent()[2])
    sv = tf.train.Supervisor(is_chief=False, logdir=str(tmp_path))
    assert sv.summary_writer is None and sv.save_path is None
    assert sv.summary_op is not None  # merged, but only a chief's thread would run it
    with pytest.raises(RuntimeError, match="requires a summary writer"):
        sv.summary_computed(None, b"")
    assert os.listdir(tmp_path) == []
