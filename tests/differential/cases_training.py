"""Training as the chapter's world does it: variables, gradients, optimizers, global
steps and savers, with constant initial values so that both sides agree. (tf.layers is
not compared: TensorFlow 2.21 with Keras 3 no longer has it.)"""

import itertools
import os
import tempfile

import numpy as np
from observe import cluster, node_defs, optimizers, outcome

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], np.float32)
Y = np.array([[1.0], [-2.0], [0.5]], np.float32)


def _linear_loss(tf):
    w = tf.Variable([[0.5], [-0.25]], name="w")
    b = tf.Variable([0.1], name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) + b - Y))
    return w, b, loss


def _train(name, with_global_step):
    def case(tf):
        w, b, loss = _linear_loss(tf)
        step = tf.train.get_or_create_global_step() if with_global_step else None
        train = optimizers(tf)[name]().minimize(loss, global_step=step)
        slots = sorted(v.op.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss])[1] for _ in range(5)]
            return (losses, sess.run([w, b]), slots,
                    sess.run(step) if with_global_step else None, train.type)
    return case


def gradients_of_a_small_network(tf):
    x = tf.constant(X)
    h = tf.nn.relu(tf.matmul(x, tf.constant([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]])))
    out = tf.reduce_sum(tf.nn.sigmoid(h) * tf.tanh(h), axis=1)
    loss = tf.reduce_mean(tf.square(out - tf.constant([1.0, 0.0, 0.5])))
    grads = tf.gradients(loss, [x, h])
    with tf.Session() as sess:
        return sess.run(grads), [g.dtype for g in grads], [g.get_shape() for g in grads]


def softmax_cross_entropy(tf):
    logits = tf.constant([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    labels = tf.constant([0, 1])
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.one_hot(labels, 3),
                                                       logits=logits)
    grad = tf.gradients(tf.reduce_sum(sparse), logits)[0]
    with tf.Session() as sess:
        return sess.run([sparse, dense, tf.nn.softmax(logits), grad]), sparse.op.type


def _sparse_xent(tf, logits_shape, labels_shape):
    logits = tf.placeholder(tf.float32, logits_shape, name="logits")
    labels = tf.placeholder(tf.int64, labels_shape, name="labels")
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return logits, labels, loss


def _sparse_xent_graph(logits_shape, labels_shape):
    """The ops the builder makes for logits of a rank: the op alone for a matrix, with
    reshapes around it (and a shape check where shapes are unknown) for others."""
    def case(tf):
        _, _, loss = _sparse_xent(tf, logits_shape, labels_shape)
        return loss, node_defs(tf.get_default_graph(), skip=("logits", "labels"))
    return case


def _sparse_xent_run(logits_value, labels_value, rank_known):
    """Its loss and gradient for fed values, or the kernel's error."""
    def case(tf):
        shape = np.shape(logits_value) if rank_known else None
        logits, labels, loss = _sparse_xent(
            tf, None if shape is None else [None] * len(shape),
            None if shape is None else [None] * (len(shape) - 1))
        grad = tf.gradients(tf.reduce_sum(loss), logits)[0]
        with tf.Session() as sess:
            return sess.run([loss, grad], {logits: logits_value, labels: labels_value})
    return case


def sparse_xent_float16(tf):
    """float16 logits: TensorFlow computes in float32 and casts the loss back."""
    logits = tf.placeholder(tf.float16, [None, 3], name="logits")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xent")
    with tf.Session() as sess:
        value = sess.run(loss, {logits: _LOGITS[0].astype(np.float16), labels: [0, 1]})
    return loss, value, node_defs(tf.get_default_graph(), skip=("logits", "labels"))


_LOGITS = np.array([[[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]], np.float32)   # 1 x 2 x 3


def variable_initializer_graph(tf):
    with tf.variable_scope("layer"):
        tf.get_variable("kernel", [2, 3], initializer=tf.zeros_initializer())
        tf.get_variable("bias", [3], initializer=tf.constant_initializer(1.0))
    return node_defs(tf.get_default_graph())


def global_step_and_count(tf):
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(inc)
        return sess.run(step), step.dtype, step.name, tf.train.global_step(sess, step)


def read_value_after_an_update_on_the_ps(tf):
    """A worker's read_value() of a ps variable under the update's control dependency
    reads the updated value (TensorFlow's partitioner makes such a ref read wait for
    the reader's other inputs)."""
    servers = cluster(tf)
    with tf.device(tf.train.replica_device_setter(ps_tasks=1,
                                                  worker_device="/job:worker/task:0")):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w),
                                                                global_step=step)
        with tf.control_dependencies([train]):
            after = step.read_value()
    with tf.Session(servers["worker"][0].target) as sess:
        sess.run(tf.global_variables_initializer())
        return [int(sess.run(after)) for _ in range(3)], after.device, round(
            float(sess.run(w)), 5)


def uninitialized_variable(tf):
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        return sess.run(tf.report_uninitialized_variables()), sess.run(v)


def saver_round_trip(tf):
    w, b, loss = _linear_loss(tf)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    saver = tf.train.Saver()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.ckpt")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            trained = sess.run([w, b])
            saved = saver.save(sess, path, global_step=7)
        with tf.Session() as sess:
            saver.restore(sess, saved)
            restored = sess.run([w, b])
        latest = tf.train.latest_checkpoint(folder)
        return (trained, restored, os.path.basename(saved), os.path.basename(latest),
                sorted(f for f in os.listdir(folder) if not f.startswith(".")))


def clip_gradients(tf):
    w, b, loss = _linear_loss(tf)
    grads = tf.gradients(loss * 100.0, [w, b])
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([clipped, norm, tf.clip_by_norm(grads[0], 0.5)])


def compute_and_apply_gradients(tf):
    w, b, loss = _linear_loss(tf)
    opt = tf.train.GradientDescentOptimizer(0.5)
    pairs = opt.compute_gradients(loss)
    apply = opt.apply_gradients([(g * 0.5, v) for g, v in pairs], name="apply")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(apply)
        return sess.run([w, b]), [v.op.name for _, v in pairs], apply.name, apply.type


CASES = {f"train_{name}{'_global_step' if step else ''}": _train(name, step)
         for name, step in itertools.product(
             ["sgd", "momentum", "nesterov", "adam", "rmsprop", "rmsprop_centered",
              "adagrad", "adadelta", "proximal_sgd", "proximal_sgd_l2", "proximal_adagrad",
              "proximal_adagrad_plain"], [False, True])}
CASES.update({f.__name__: f for f in (
    gradients_of_a_small_network, softmax_cross_entropy,
    variable_initializer_graph, global_step_and_count, read_value_after_an_update_on_the_ps,
    uninitialized_variable,
    saver_round_trip, clip_gradients, compute_and_apply_gradients)})
CASES.update({
    "sparse_xent_float16": sparse_xent_float16,
    "sparse_xent_graph_matrix": _sparse_xent_graph([None, 5], [None]),
    "sparse_xent_graph_rank_3": _sparse_xent_graph([2, None, 5], [2, None]),
    "sparse_xent_graph_rank_3_known": _sparse_xent_graph([2, 3, 5], [2, 3]),
    "sparse_xent_graph_rank_unknown": _sparse_xent_graph(None, None),
    "sparse_xent_run_matrix": _sparse_xent_run(_LOGITS[0], [0, 1], True),
    "sparse_xent_run_rank_3": _sparse_xent_run(_LOGITS, [[2, 1]], True),
    "sparse_xent_run_rank_unknown": _sparse_xent_run(_LOGITS, [[2, 1]], False),
    "sparse_xent_run_vector": _sparse_xent_run(_LOGITS[0, 0], 1, False),
    "sparse_xent_run_no_classes": _sparse_xent_run(np.zeros((2, 0), np.float32), [0, 0],
                                                   True),
    "sparse_xent_run_no_classes_nor_rows": _sparse_xent_run(np.zeros((0, 0), np.float32),
                                                            np.zeros(0, np.int64), False),
    "sparse_xent_run_no_rows": _sparse_xent_run(np.zeros((0, 3), np.float32),
                                                np.zeros(0, np.int64), True),
    "sparse_xent_run_label_out_of_range": _sparse_xent_run(_LOGITS[0], [0, 3], True),
    "sparse_xent_run_fewer_labels": _sparse_xent_run(_LOGITS[0], [0], True),
    "sparse_xent_run_fewer_labels_rank_unknown": _sparse_xent_run(_LOGITS, [[2]], False),
})


def exponential_decay(tf):
    """tf.train.exponential_decay, the book's learning rate schedule: TensorFlow's graph,
    its rate as the global step advances (smooth and staircase), and training with it."""
    global_step = tf.train.get_or_create_global_step()
    smooth = tf.train.exponential_decay(0.1, global_step, 3, 0.5)
    stairs = tf.train.exponential_decay(0.1, global_step, 3, 0.5, staircase=True,
                                        name="stairs")
    _, _, loss = _linear_loss(tf)
    train = tf.train.GradientDescentOptimizer(stairs).minimize(loss, global_step=global_step)
    rates = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(7):
            rates.append(sess.run([global_step, smooth, stairs]))
            sess.run(train)
    # (the rest of the graph differs as differences.md says: gating, staleness records)
    nodes = node_defs(tf.get_default_graph())
    return (rates, [n for n in nodes if n["name"].split("/")[0] in ("ExponentialDecay",
                                                                    "stairs")],
            [(n["name"], n["inputs"][1]) for n in nodes if n["type"] == "ApplyGradientDescent"])


CASES["exponential_decay"] = exponential_decay


def other_learning_rate_schedules(tf):
    """piecewise_constant, polynomial_decay (to the end, and cycling), natural_exp_decay
    and inverse_time_decay (smooth and staircase): TensorFlow's graphs, node for node,
    their rates along the steps, and piecewise_constant's dtype errors."""
    step = tf.placeholder(tf.int64, [], name="step")
    rates = [tf.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1]),
             tf.train.piecewise_constant(step, [7], [0.3, 0.2], name="two"),
             tf.train.polynomial_decay(0.1, step, 10, 0.01, power=0.5),
             tf.train.polynomial_decay(0.1, step, 10, cycle=True),
             tf.train.natural_exp_decay(0.1, step, 5, 0.5),
             tf.train.natural_exp_decay(0.1, step, 5, 0.5, staircase=True),
             tf.train.inverse_time_decay(0.1, step, 5, 0.5),
             tf.train.inverse_time_decay(0.1, step, 5, 0.5, staircase=True)]
    nodes = node_defs(tf.get_default_graph())
    with tf.Session() as sess:
        along = [sess.run(rates, {step: n}) for n in (0, 3, 5, 7, 10, 12, 25)]
    x = tf.constant(3, tf.int64)
    errors = [outcome(tf.train.piecewise_constant, x, [1.0], [1.0, 2.0]),
              outcome(tf.train.piecewise_constant, x, [1], [1.0, 2]),
              outcome(tf.train.piecewise_constant, tf.constant(3), [x], [1.0, 2.0])]
    return nodes, along, errors


CASES["other_learning_rate_schedules"] = other_learning_rate_schedules


def exponential_moving_average(tf):
    """tf.train.ExponentialMovingAverage of variables (with num_updates) and of a tensor:
    the shadows' graph (their initial values guarded as TensorFlow guards them), their
    values over a few updates, the names and variables_to_restore, and a non-float
    variable refused."""
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(3.0, name="b")
    step = tf.Variable(0, name="step", trainable=False)
    loss = tf.reduce_sum(w * w, name="loss")
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    update = ema.apply([w, b, loss])
    plain = tf.train.ExponentialMovingAverage(0.5, name="plain")
    plain_update = plain.apply()
    names = (update.name, ema.name, ema.average(w).name, ema.average(loss).name,
             ema.average_name(b), ema.average_name(step), plain.average(b).name,
             sorted(ema.variables_to_restore()),
             [v.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)])
    refused = outcome(ema.apply, [step])
    values = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([tf.assign_add(w, [1.0, -1.0]), tf.assign_add(step, 1)])
            sess.run([update, plain_update])
            values.append(sess.run([ema.average(w), ema.average(b), ema.average(loss),
                                    plain.average(w)]))
    return names, refused, values, node_defs(tf.get_default_graph())


CASES["exponential_moving_average"] = exponential_moving_average


def cosine_learning_rate_schedules(tf):
    """cosine_decay (with alpha), cosine_decay_restarts (geometric periods, and equal
    ones with m_mul), linear_cosine_decay and noisy_linear_cosine_decay (its graph, and
    its rate where the noise has vanished): TensorFlow's graphs and rates along the steps."""
    step = tf.placeholder(tf.int64, [], name="step")
    rates = [tf.train.cosine_decay(0.1, step, 10),
             tf.train.cosine_decay(0.1, step, 10, alpha=0.2, name="floor"),
             tf.train.cosine_decay_restarts(0.1, step, 4),
             tf.train.cosine_decay_restarts(0.1, step, 4, t_mul=1.0, m_mul=0.5, alpha=0.1),
             tf.train.linear_cosine_decay(0.1, step, 10),
             tf.train.linear_cosine_decay(0.1, step, 10, num_periods=2, alpha=0.1, beta=0.0)]
    noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 10, initial_variance=0.0)
    nodes = node_defs(tf.get_default_graph())
    with tf.Session() as sess:
        along = [sess.run(rates + [noisy], {step: n}) for n in (0, 2, 4, 5, 9, 12, 30)]
    return nodes, along


CASES["cosine_learning_rate_schedules"] = cosine_learning_rate_schedules
