"""Stale gradients: what every optimizer reports, and StalenessAwareOptimizer's remedies.

Feeding the global step's snapshot (`global_step.value()`) stands for a replica that
read the parameters some steps ago: its gradient is that many steps stale.
"""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.extensions import StalenessAwareOptimizer


@pytest.fixture
def server(cluster):
    """One task: its event log is where the variable updates are published."""
    return cluster({"local": 1})["local", 0]


def _updates(subscription):
    events = []
    while (event := subscription.get(timeout=0.5)) is not None:
        events.append(event.variable_update)
    return events


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.5, name="b")
    loss = tf.reduce_sum(tf.square(w)) + tf.square(b)
    return step, w, b, loss


def test_every_applied_gradient_reports_the_step_it_was_computed_and_applied_at(server):
    step, w, b, loss = _model()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)  # nobody watches: nothing is published, nothing breaks
        watching = server.events.subscribe(kinds=["variable_update"])
        sess.run(train)
        sess.run(train, feed_dict={step.value(): 0})  # read two steps ago: 2 stale
        assert sess.run(step) == 3
    updates = _updates(watching)
    watching.close()
    assert [(u.variable, u.computed_at_step, u.applied_at_step, u.dropped) for u in updates] \
        == [("w", 1, 1, False), ("b", 1, 1, False), ("w", 0, 2, False), ("b", 0, 2, False)]
    # the loss minimize() took the gradients of, with w and b scaled by 0.8 each step
    assert [u.loss for u in updates] == pytest.approx([3.36, 3.36, 2.1504, 2.1504])
    assert {u.device for u in updates} == {"/job:local/replica:0/task:0/device:CPU:0"}
    assert {u.worker for u in updates} == {"/job:local/replica:0/task:0"}


def test_the_worker_is_the_task_that_computed_the_gradients(server):
    with tf.device("/job:local/task:0"):
        step, w, b, loss = _model()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        watching = server.events.subscribe(kinds=["variable_update"])
        sess.run(train)
    updates = _updates(watching)
    watching.close()
    assert [u.worker for u in updates] == ["/job:local/replica:0/task:0"] * 2
    assert [u.device for u in updates] == ["/job:local/task:0"] * 2


def test_gradients_staler_than_max_staleness_are_dropped(server):
    step, w, b, loss = _model()
    opt = StalenessAwareOptimizer(tf.train.GradientDescentOptimizer(0.5), max_staleness=2)
    train = opt.minimize(loss, global_step=step)
    assert train.type == "AssignAdd" and tf.get_collection(tf.GraphKeys.TRAIN_OP) == [train]
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert sess.run(step) == 3
        before = sess.run([w, b])
        watching = server.events.subscribe(kinds=["variable_update"])
        sess.run(train, feed_dict={step.value(): 0})  # 3 stale: dropped
        assert sess.run(step) == 3
        np.testing.assert_array_equal(sess.run(w), before[0])
        sess.run(train, feed_dict={step.value(): 1})  # 2 stale: applied
        assert sess.run(step) == 4
        np.testing.assert_allclose(sess.run(w), before[0] * 0.0)  # w -= 0.5 * 2w
    updates = _updates(watching)
    watching.close()
    assert [(u.variable, u.computed_at_step, u.applied_at_step, u.dropped) for u in updates] \
        == [("w", 0, 3, True), ("b", 0, 3, True), ("w", 1, 3, False), ("b", 1, 3, False)]


def test_scale_learning_rate_divides_by_the_staleness(server):
    step, w, b, loss = _model()
    opt = StalenessAwareOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                  scale_learning_rate=True)
    train = opt.minimize(loss, global_step=step)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step.assign(8))
        sess.run(train, feed_dict={step.value(): 4})  # 4 stale: learning rate 0.1 / 4
        np.testing.assert_allclose(sess.run(w), [1 - 0.025 * 2, 2 - 0.025 * 4])
        sess.run(train)  # fresh: staleness 0 counts as 1
        np.testing.assert_allclose(sess.run(w), np.array([0.95, 1.9]) * 0.8, rtol=1e-6)
        assert sess.run(step) == 10


def test_warmup_lets_only_replica_zero_update(server):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    loss = tf.square(w)
    trains = [StalenessAwareOptimizer(tf.train.GradientDescentOptimizer(0.25),
                                      warmup_steps=2, replica_id=i,
                                      name=f"replica{i}").minimize(loss, step)
              for i in range(2)]
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(trains[1])
        assert (sess.run(step), sess.run(w)) == (0, 1.0)  # warming up: replica 1 waits
        sess.run(trains[0])
        sess.run(trains[0])
        assert (sess.run(step), sess.run(w)) == (2, 0.25)
        sess.run(trains[1])
        assert (sess.run(step), sess.run(w)) == (3, 0.125)


def test_staleness_aware_optimizer_checks_its_arguments():
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(TypeError, match="must be an Optimizer"):
        StalenessAwareOptimizer(0.1)
    with pytest.raises(ValueError, match="max_staleness"):
        StalenessAwareOptimizer(sgd, max_staleness=-1)
    with pytest.raises(ValueError, match="warmup_steps"):
        StalenessAwareOptimizer(sgd, warmup_steps=-5)
    w = tf.Variable(1.0)
    with pytest.raises(ValueError, match="needs the global_step"):
        StalenessAwareOptimizer(sgd).minimize(tf.square(w))


def test_it_is_dtfnbs_own_and_so_not_in_tf_train():
    """TensorFlow has no StalenessAwareOptimizer: tf.train lacks it, as TensorFlow's does."""
    with pytest.raises(AttributeError):
        tf.train.StalenessAwareOptimizer  # noqa: B018


def test_slots_are_the_wrapped_optimizers():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    momentum = tf.train.MomentumOptimizer(0.1, 0.9)
    opt = StalenessAwareOptimizer(momentum)
    opt.minimize(tf.square(w), global_step=step)
    assert opt.get_slot_names() == ["momentum"]
    assert opt.get_slot(w, "momentum") is momentum.get_slot(w, "momentum")
    assert opt.variables() == momentum.variables()
