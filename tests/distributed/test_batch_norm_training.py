"""Chapter 11's batch-normalized network trained between graphs: the moving averages
live on the ps and their updates, under the training placeholder's cond, run there."""

import numpy as np

import dtfnb as tf


def _train(target, device_setter, steps=20):
    """Losses and final moving averages of a seeded run; `device_setter` None: local."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(device_setter):
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.int64, [None])
        training = tf.placeholder_with_default(False, [], name="training")
        hidden = tf.nn.elu(tf.layers.batch_normalization(
            tf.layers.dense(x, 8, name="hidden"), training=training, momentum=0.9))
        logits = tf.layers.dense(hidden, 2, name="outputs")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
        moving = [v for v in tf.global_variables() if "moving" in v.name]
        rng = np.random.default_rng(0)
        with tf.Session(target, graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(steps):
                bx = rng.normal(2.0, 3.0, size=(32, 4)).astype(np.float32)
                by = (bx[:, 0] > 2.0).astype(np.int64)
                losses.append(sess.run([train, loss], {x: bx, y: by, training: True})[1])
            return losses, sess.run(moving), [v.device for v in moving]


def test_moving_averages_update_on_the_ps_as_they_do_locally(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    local_losses, local_moving, _ = _train("", None)
    losses, moving, devices = _train(tasks.target("worker"),
                                     tf.train.replica_device_setter(cluster=tasks.spec))
    assert devices == ["/job:ps/task:0"] * 2
    np.testing.assert_allclose(losses, local_losses, rtol=1e-5)
    for remote, local in zip(moving, local_moving):
        np.testing.assert_allclose(remote, local, rtol=1e-5)
    assert losses[-1] < losses[0]
    # the averages left their initial zeros and ones
    assert not np.allclose(moving[0], 0.0) and not np.allclose(moving[1], 1.0)
