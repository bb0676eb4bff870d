"""What training writes for TensorBoard: MonitoredTrainingSession's summary, step-counter
and checkpoint hooks, SummarySaverHook alone, and Supervisor's summary services, read
back with TensorBoard's own loader. The tags, steps and session logs expected are those
TensorFlow 1 (2.21's tf.compat.v1) writes for the same script."""

import os
import time

import pytest

import dtfnb as tf
from tests.helpers import square_descent

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
