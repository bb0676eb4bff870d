"""tf.losses as a learner uses it between graphs: the loss, its weights check and the
regularization built under replica_device_setter, run by a worker task process against
variables on a ps process."""

import numpy as np
import pytest

import dtfnb as tf


def _separable_batch(rng, n=64):
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return x, (x[:, 0] + x[:, 1] > 0).astype(np.int64)


def test_a_weighted_loss_trains_on_a_worker_and_checks_its_weights_there(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    with tf.device(tf.train.replica_device_setter(cluster=tasks.spec)):
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.int64, [None])
        weights = tf.placeholder(tf.float32)   # shape unknown: checked when the step runs
        logits = tf.layers.dense(x, 2, name="logits")
        kernel = tf.trainable_variables()[0]
        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES,
                             0.01 * tf.nn.l2_loss(kernel))
        data_loss = tf.losses.sparse_softmax_cross_entropy(y, logits, weights)
        total = tf.losses.get_total_loss()
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.5).minimize(total, global_step)
    assert kernel.device == "/job:ps/task:0"
    assert data_loss.device == "/job:worker"

    rng = np.random.default_rng(7)
    with tf.Session(tasks.target("worker")) as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(60):
            bx, by = _separable_batch(rng)
            feed = {x: bx, y: by, weights: np.ones([len(by), 1], np.float32)}
            losses.append(sess.run([train, total], feed)[1])
        bx, by = _separable_batch(rng, 256)
        # weights of zero leave examples out of the mean: the default reduction divides
        # by the number of nonzero weights
        half = np.float32([1.0, 0.0] * (len(by) // 2))
        z, weighted = sess.run([logits, data_loss], {x: bx, y: by, weights: half})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"weights can not be broadcast to values\..*\[3\].*\[256\]"):
            sess.run(data_loss, {x: bx, y: by, weights: np.ones(3, np.float32)})
        assert sess.run(global_step) == 60

    assert losses[-1] < losses[0] / 2
    assert (z.argmax(axis=1) == by).mean() > 0.9
    log_p = z - z.max(axis=1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    assert weighted == pytest.approx(-log_p[np.arange(256), by][::2].mean(), rel=1e-5)
