"""What training writes for TensorBoard: the events of MonitoredTrainingSession's hooks
(summaries, steps per second, checkpoints, a restarted job's START) and of Supervisor,
read back with tf.train.summary_iterator: their kinds, order, steps and tags.

Graph events are left out (dtfnb writes a placed graph again, docs/differences.md), and
so are values: a rate is a timing, and a summary run with the train op may read a
variable before or after its update, on either side. SummarySaverHook saves every step:
every N steps, it schedules its next save from the global step read in the same run as
the train op, which TensorFlow may read after the increment, a save a step early."""

import os
import shutil
import tempfile
import time

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _written(tf, train):
    """What `train(logdir)` left in a fresh directory and its subdirectories once the
    cached writers are closed: per event file (by path), each event's kind and step, a
    summary's tags, a session log's status and checkpoint file name."""
    logdir = tempfile.mkdtemp(prefix="dtfnb-training-")
    try:
        train(logdir)
        tf.summary.FileWriterCache.clear()
        written = {}
        for folder, _, names in sorted(os.walk(logdir)):
            for name in sorted(n for n in names if "tfevents" in n):
                events = tf.train.summary_iterator(os.path.join(folder, name))
                written.setdefault(os.path.relpath(folder, logdir), []).append(
                    [seen for seen in map(_event, events) if seen])
        return written
    finally:
        shutil.rmtree(logdir)


def _event(event):
    kind = event.WhichOneof("what")
    if kind == "summary":
        return [event.step, kind, [value.tag for value in event.summary.value]]
    if kind == "session_log":
        log = event.session_log
        return [event.step, kind, log.status, os.path.basename(log.checkpoint_path)]
    return [event.step, kind] if kind == "file_version" else None


def _model(tf):
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(4.0, name="x")
    loss = tf.square(x, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, loss, train


def _train_to(tf, last_step, **session_args):
    with tf.Graph().as_default():
        _, loss, train = _model(tf)
        tf.summary.scalar("loss", loss)
        with tf.train.MonitoredTrainingSession(
                hooks=[tf.train.StopAtStepHook(last_step=last_step)], **session_args) as sess:
            while not sess.should_stop():
                sess.run(train)


@case
def monitored_training_session_and_its_restart(tf):
    def train(logdir):
        for last_step in (12, 20):  # the second session restores the first's last checkpoint
            _train_to(tf, last_step, checkpoint_dir=logdir, save_summaries_steps=1,
                      log_step_count_steps=5)
    return _written(tf, train)


@case
def monitored_training_session_with_a_summary_dir(tf):
    def train(logdir):
        _train_to(tf, 4, checkpoint_dir=os.path.join(logdir, "ckpt"),
                  summary_dir=os.path.join(logdir, "summaries"), save_summaries_steps=1,
                  log_step_count_steps=None, save_checkpoint_steps=3)
    return _written(tf, train)


@case
def summary_saver_hook_of_a_list_of_ops(tf):
    def train(logdir):
        with tf.Graph().as_default():
            _, loss, train_op = _model(tf)
            ops = [tf.summary.scalar("loss", loss), tf.summary.scalar("half", loss / 2)]
            hooks = [tf.train.SummarySaverHook(save_steps=1, output_dir=logdir, summary_op=ops),
                     tf.train.StopAtStepHook(last_step=3)]
            with tf.train.MonitoredSession(hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run(train_op)
    return _written(tf, train)


@case
def supervisor_summary_computed_and_restart(tf):
    def train(logdir):
        for runs in (3, 2):  # the second Supervisor restores the first's checkpoint
            # Event files are named by the second: TensorFlow's second writer within the
            # same second would truncate the first's file.
            time.sleep(1.0 if runs == 2 else 0)
            with tf.Graph().as_default():
                step, loss, train_op = _model(tf)
                summary = tf.summary.scalar("loss", loss)
                # No timed services: what they write depends on the clock.
                sv = tf.train.Supervisor(logdir=logdir, save_summaries_secs=0,
                                         save_model_secs=0)
                with sv.managed_session() as sess:
                    for _ in range(runs):
                        sess.run(train_op)
                    sv.summary_computed(sess, sess.run(summary))
                    sv.summary_computed(sess, sess.run(summary), global_step=100)
                    sv.saver.save(sess, sv.save_path, global_step=step)
    return _written(tf, train)
