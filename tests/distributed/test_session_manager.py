"""SessionManager and Supervisor: the chief initialises or restores, other workers wait."""

import logging
import threading
import time

import pytest

import dtfnb as tf
from tests.helpers import poll_for


def _model():
    """A global step, a variable and a local variable; returns (step, x, local, inc)."""
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(3.0, name="x")
    local = tf.Variable(7.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    inc = tf.group(tf.assign_add(x, 1.0), tf.assign_add(step, 1))
    return step, x, local, inc


def _manager(**kwargs):
    return tf.train.SessionManager(
        ready_op=tf.report_uninitialized_variables(),
        ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()),
        local_init_op=tf.local_variables_initializer(), **kwargs)


def test_prepare_session_runs_the_init_op_then_the_local_init_op():
    _, x, local, _ = _model()
    sess = _manager().prepare_session("", init_op=tf.global_variables_initializer())
    assert sess.run([x, local]) == [3.0, 7.0]
    sess.close()


def test_prepare_session_with_nothing_to_initialise_or_not_enough():
    _model()
    with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
        tf.train.SessionManager(ready_op=tf.report_uninitialized_variables()) \
            .prepare_session("")
    with pytest.raises(RuntimeError, match="did not make model ready for local_init"):
        _manager().prepare_session("", init_op=tf.no_op())
    with pytest.raises(RuntimeError, match="Variables not initialized: x") as info:
        tf.train.SessionManager(ready_op=tf.report_uninitialized_variables()).prepare_session(
            "", init_op=tf.variables_initializer([tf.train.get_global_step()]))
    assert "Init operations did not make model ready" in str(info.value)
    with pytest.raises(ValueError, match="you must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_init_fn_and_init_feed_dict():
    value = tf.placeholder(tf.float32, shape=())
    v = tf.Variable(value, name="v")
    w = tf.Variable(1.0, name="w")
    manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sess = manager.prepare_session("", init_op=v.initializer, init_feed_dict={value: 5.0},
                                   init_fn=lambda s: s.run(w.initializer))
    assert sess.run([v, w]) == [5.0, 1.0]
    sess.close()


def test_prepare_session_restores_the_latest_checkpoint_instead_of_initialising(tmp_path):
    step, x, local, inc = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(inc)
        sess.run(inc)
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    manager = _manager()
    sess = manager.prepare_session("", init_op=tf.global_variables_initializer(), saver=saver,
                                   checkpoint_dir=str(tmp_path))
    assert sess.run([step, x, local]) == [2, 5.0, 7.0]  # restored; local ones initialised
    sess.close()
    sess = manager.prepare_session("", init_op=tf.global_variables_initializer(), saver=saver,
                                   checkpoint_filename_with_path=str(tmp_path / "model.ckpt-2"))
    assert sess.run(x) == 5.0
    sess.close()
    with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and "):
        manager.prepare_session("", saver=saver, checkpoint_dir=str(tmp_path),
                                checkpoint_filename_with_path=str(tmp_path / "model.ckpt-2"))


def test_wait_for_checkpoint_gives_up_after_max_wait_secs(tmp_path):
    _, x, _, _ = _model()
    manager = _manager(recovery_wait_secs=0.05)
    start = time.monotonic()
    sess = manager.prepare_session("", init_op=tf.global_variables_initializer(),
                                   saver=tf.train.Saver(), checkpoint_dir=str(tmp_path),
                                   wait_for_checkpoint=True, max_wait_secs=0.3)
    assert 0.25 < time.monotonic() - start < 10
    assert sess.run(x) == 3.0  # no checkpoint came: initialised
    sess.close()


def test_recover_session_says_whether_it_restored(tmp_path):
    step, x, _, inc = _model()
    saver = tf.train.Saver()
    manager = _manager()
    sess, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert not restored
    sess.run(tf.global_variables_initializer())
    sess.run(inc)
    saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    sess.close()
    sess, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored and sess.run([step, x]) == [1, 4.0]
    sess.close()


def test_a_worker_waits_in_wait_for_session_until_the_chief_initialised(cluster):
    tasks = cluster({"ps": 1, "worker": 2})
    chief, worker = tasks["worker", 0], tasks["worker", 1]

    def model():
        with tf.device("/job:ps/task:0"):
            shared = tf.Variable(1.0, name="shared")
        local = tf.Variable(0.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        return shared, local, tf.assign_add(shared, 10.0)

    got, waited = [], []

    def non_chief():
        with tf.Graph().as_default():
            shared, local, _ = model()
            start = time.monotonic()
            sess = _manager(recovery_wait_secs=0.1).wait_for_session(worker.target,
                                                                     max_wait_secs=30)
            waited.append(time.monotonic() - start)
            got.append(sess.run([shared, local]))
            sess.close()

    thread = threading.Thread(target=non_chief)
    thread.start()
    time.sleep(0.5)  # the worker polls, not ready, meanwhile
    assert thread.is_alive()
    shared, _, add = model()
    sess = _manager().prepare_session(chief.target, init_op=tf.global_variables_initializer())
    sess.run(add)
    thread.join(30)
    assert got in ([[1.0, 0.0]], [[11.0, 0.0]])  # read before or after the add
    assert waited[0] > 0.4
    sess.close()


def test_wait_for_session_raises_deadline_exceeded_when_nobody_initialises(caplog):
    _model()
    caplog.set_level(logging.INFO, logger="dtfnb.train")
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting 0.5 secs"):
        _manager(recovery_wait_secs=0.1).wait_for_session("", max_wait_secs=0.5)
    assert time.monotonic() - start < 10
    assert "Waiting for model to be ready" in caplog.text
    assert "Variables not initialized" in caplog.text


# -- Supervisor ------------------------------------------------------------------------

def test_supervisor_initialises_saves_at_once_and_a_new_one_restores(tmp_path):
    step, x, _, inc = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=3600)
    assert tf.get_default_graph().finalized
    assert sv.global_step is step and sv.save_path == str(tmp_path / "model.ckpt")
    with sv.managed_session() as sess:
        first = str(tmp_path / "model.ckpt-0")  # written by the thread as it starts
        assert poll_for(lambda: tf.train.latest_checkpoint(str(tmp_path)) == first, 10)
        for _ in range(3):
            sess.run(inc)
        sv.saver.save(sess, sv.save_path, global_step=step)
        sess.run(inc)
    tf.reset_default_graph()
    step, x, _, inc = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=3600)
    with sv.managed_session() as sess:
        assert sess.run([step, x]) == [3, 6.0]  # from model.ckpt-3, not initialised


def test_supervisor_stops_cleanly_on_out_of_range_and_reraises_other_errors(tmp_path):
    _model()
    queue = tf.FIFOQueue(10, [tf.int32], shapes=[()])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue_many(
        [tf.train.limit_epochs(tf.range(4), num_epochs=1)])]))
    dequeue = queue.dequeue()
    sv = tf.train.Supervisor(logdir=None)
    got = []
    with sv.managed_session() as sess:
        while not sv.should_stop():
            got.append(sess.run(dequeue))  # ends with OutOfRangeError
    assert got == [0, 1, 2, 3] and sv.should_stop()
    with pytest.raises(ValueError, match="boom"), sv.managed_session():
        raise ValueError("boom")


def test_supervisor_non_chief_waits_for_the_chief(cluster):
    tasks = cluster({"ps": 1, "worker": 2})
    chief, worker = tasks["worker", 0], tasks["worker", 1]

    def model():
        with tf.device(tf.train.replica_device_setter(cluster=tasks.spec)):
            step = tf.train.get_or_create_global_step()
            return step, tf.assign_add(step, 1)

    got = []

    def non_chief():
        with tf.Graph().as_default():
            step, _ = model()
            sv = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.1)
            with sv.managed_session(worker.target) as sess:
                got.append(sess.run(step))

    thread = threading.Thread(target=non_chief)
    thread.start()
    step, inc = model()
    sv = tf.train.Supervisor(is_chief=True)
    with sv.managed_session(chief.target) as sess:
        for _ in range(5):
            sess.run(inc)
        thread.join(30)
    assert len(got) == 1 and 0 <= got[0] <= 5
    with pytest.raises(RuntimeError, match="Only chief supervisor"):
        tf.train.Supervisor(is_chief=False, graph=tf.Graph()).start_standard_services(None)


def test_supervisor_checkpoint_thread_saves_every_save_model_secs(tmp_path):
    _, _, _, inc = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.2)
    with sv.managed_session() as sess:
        sess.run(inc)
        assert poll_for(lambda: tf.train.latest_checkpoint(str(tmp_path))
                        == str(tmp_path / "model.ckpt-1"), 10)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.all_model_checkpoint_paths[0] == str(tmp_path / "model.ckpt-0")
