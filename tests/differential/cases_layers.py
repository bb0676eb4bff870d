"""tf.layers (TensorFlow 1's, which TensorFlow 2.21 keeps in its legacy Keras): the graphs
dense, dropout and flatten build, their variables and collections, values of seeded
layers, and their errors."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


_X = np.float32([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 3.0]])


def _variables(tf, key):
    return [(v.name, v.shape.as_list(), v.dtype.name) for v in tf.get_collection(key)]


@case
def dense_graphs_and_variables(tf):
    """dense with and without bias and activation, named and not, a scope's initializer,
    regularizers, rank 3 inputs, reuse of a named layer; the variables, the
    collections they join and the graph op for op."""
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    built = [tf.layers.dense(x, 3),
             tf.layers.dense(x, 2, activation=tf.nn.relu, name="hidden"),
             tf.layers.dense(x, 2, use_bias=False, name="no_bias"),
             tf.layers.dense(x, 2, name="hidden", reuse=True, activation=tf.nn.relu),
             tf.layers.dense(x, 2, kernel_regularizer=lambda w: tf.reduce_sum(w) * 0.1,
                             bias_initializer=tf.constant_initializer(0.5), name="reg")]
    with tf.variable_scope("outer", initializer=tf.ones_initializer()):
        built.append(tf.layers.dense(x, 2))
    cube = tf.placeholder(tf.float32, [None, 3, 4], name="cube")
    built.append(tf.layers.dense(cube, 2, name="on_cube"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(built, {x: _X, cube: np.stack([_X[:, :4]] * 3, 1)[:, :3]})
    return (values, [t.shape.as_list() for t in built],
            _variables(tf, tf.GraphKeys.GLOBAL_VARIABLES),
            _variables(tf, tf.GraphKeys.TRAINABLE_VARIABLES),
            [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)],
            node_defs(tf.get_default_graph()))


@case
def dense_errors(tf):
    """Inputs of rank 1 or of an unknown last dimension, units that are not positive, and
    a reused layer that does not exist."""
    return [outcome(tf.layers.dense, tf.constant([1.0, 2.0]), 3),
            outcome(tf.layers.dense, tf.placeholder(tf.float32, [None, None]), 3),
            outcome(tf.layers.dense, tf.constant(_X), 0),
            outcome(tf.layers.dense, tf.constant(_X), 2, name="nope", reuse=True)]


@case
def dropout_and_flatten(tf):
    """dropout with a Python bool (and rate 0), seeded so that its mask is TensorFlow's;
    flatten of known and unknown batch sizes; their graphs."""
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    built = [tf.layers.dropout(x, 0.5, seed=7, training=True),
             tf.layers.dropout(x, 0.5, training=False),
             tf.layers.dropout(x, 0.0, training=True, name="keep"),
             tf.layers.flatten(x),
             tf.layers.flatten(tf.placeholder_with_default(np.ones([2, 3, 4], np.float32),
                                                           [None, 3, 4]))]
    return run(tf, built), [t.shape.as_list() for t in built], node_defs(tf.get_default_graph())


@case
def dropout_chosen_at_run(tf):
    """The chapter's `training` placeholder: dropout active only when it is fed true."""
    training = tf.placeholder_with_default(False, [], name="training")
    x = tf.constant(np.ones([4, 5], np.float32))
    out = tf.layers.dropout(x, 0.4, seed=11, training=training)
    with tf.Session() as sess:
        values = [sess.run(out), sess.run(out, {training: True})]
    return values, out.shape.as_list(), node_defs(tf.get_default_graph())


@case
def dense_dtypes_regularizers_and_reuse(tf):
    """dense on float64 and (refused) int32 inputs; an activity regularizer (per example
    of the batch), a frozen layer, a kernel constraint, AUTO_REUSE of a layer and of one
    of another shape; units given as a float and as a negative number."""
    tf.set_random_seed(1)
    x = tf.constant([[1.0, 2.0]])
    built = [outcome(tf.layers.dense, tf.constant([[1, 2]]), 3),
             tf.layers.dense(tf.constant([[1.0, 2.0]], tf.float64), 3),
             tf.layers.dense(x, 3, activity_regularizer=tf.reduce_sum, name="act"),
             tf.layers.dense(x, 3, trainable=False, name="frozen"),
             tf.layers.dense(x, 3, kernel_constraint=lambda w: tf.clip_by_value(w, 0, 1),
                             name="constrained"),
             tf.layers.dense(x, 3, name="auto", reuse=tf.AUTO_REUSE),
             tf.layers.dense(x, 3, name="auto", reuse=tf.AUTO_REUSE),
             outcome(tf.layers.dense, tf.constant([[1.0, 2.0, 3.0]]), 3, name="auto",
                     reuse=tf.AUTO_REUSE),
             tf.layers.dense(x, 2.7),
             outcome(tf.layers.dense, x, -1)]
    tensors = [t for t in built if not isinstance(t, Exception)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([tf.shape(t) for t in tensors]
                          + tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    return ([t if isinstance(t, Exception) else (t.name, t.dtype.name) for t in built],
            values, _variables(tf, tf.GraphKeys.GLOBAL_VARIABLES),
            _variables(tf, tf.GraphKeys.TRAINABLE_VARIABLES),
            node_defs(tf.get_default_graph()))


@case
def dropout_and_flatten_variants(tf):
    """dropout with a noise shape, a constant `training` tensor, rate 0 beside a training
    placeholder, and invalid rates; flatten of a vector, of unknown dimensions, with the
    channels first, of a scalar, and an unknown data format."""
    training = tf.placeholder(tf.bool, [], name="training")
    x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
    built = [tf.layers.dropout(x, 0.3, noise_shape=[None, 1], seed=5, training=True),
             tf.layers.dropout(x, 0.3, seed=5, training=tf.constant(True)),
             tf.layers.dropout(x, 0.0, training=training),
             tf.layers.flatten(tf.constant([1.0, 2.0])),
             tf.layers.flatten(tf.placeholder_with_default(np.ones([2, 3, 2], np.float32),
                                                           [None, None, 2])),
             tf.layers.flatten(tf.placeholder_with_default(np.ones([3, 2, 2], np.float32),
                                                           [3, None, 2])),
             tf.layers.flatten(tf.constant(np.arange(24.0).reshape(2, 3, 4)),
                               data_format="channels_first")]
    errors = [outcome(tf.layers.dropout, x, 1.5), outcome(tf.layers.dropout, x, -0.1),
              outcome(tf.layers.flatten, tf.constant(1.0)),
              outcome(tf.layers.flatten, x, data_format="NCHW"),
              outcome(tf.layers.dropout, x, training="yes")]
    return (run(tf, built, {training: True}), [t.shape.as_list() for t in built], errors,
            node_defs(tf.get_default_graph()))


@case
def a_chapter_network_trains(tf):
    """The chapter's MLP in tf.layers with dropout behind a training placeholder, seeded:
    TensorFlow's initial weights, masks and losses over a few SGD steps."""
    tf.set_random_seed(42)
    x = tf.placeholder(tf.float32, [None, 4], name="X")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    hidden = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden1")
    hidden = tf.layers.dropout(hidden, 0.25, training=training)
    logits = tf.layers.dense(hidden, 3, name="outputs")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                        logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    labels = np.int64([0, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss], {x: _X, y: labels, training: True})[1]
                  for _ in range(5)]
        final = sess.run(loss, {x: _X, y: labels})
    return losses, final


def _bn_values(tf, built, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(built, feed)


@case
def batch_normalization_graphs(tf):
    """batch_normalization with the book's training placeholder, with Python True and
    False, over axis 1 of rank 3 inputs and over two axes, without center or scale, on
    float64 and float16, with regularizers and reuse: graphs, variables, UPDATE_OPS,
    REGULARIZATION_LOSSES and the values of one step each way."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    training = tf.placeholder_with_default(False, [], name="training")
    cube = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5)
    built = [tf.layers.batch_normalization(x, training=training, momentum=0.9),
             tf.layers.batch_normalization(x, training=True, name="always"),
             tf.layers.batch_normalization(x, training=False, name="never"),
             tf.layers.batch_normalization(cube, axis=1, training=training),
             tf.layers.batch_normalization(cube, axis=[1, 2], training=True,
                                           center=False),
             tf.layers.batch_normalization(x, scale=False, center=False, training=True,
                                           name="bare"),
             tf.layers.batch_normalization(tf.cast(x, tf.float64), training=training),
             tf.layers.batch_normalization(tf.cast(x, tf.float16), training=training),
             tf.layers.batch_normalization(
                 x, training=training, gamma_regularizer=lambda g: tf.reduce_sum(g),
                 beta_initializer=tf.constant_initializer(0.5), epsilon=0.1,
                 name="regularized"),
             tf.layers.batch_normalization(x, training=True, name="always", reuse=True)]
    updates = [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)]
    batch = _X[:, :3]
    values = [_bn_values(tf, built, {x: batch}), _bn_values(tf, built, {x: batch,
                                                                        training: True})]
    return (values, updates, _variables(tf, tf.GraphKeys.GLOBAL_VARIABLES),
            _variables(tf, tf.GraphKeys.TRAINABLE_VARIABLES),
            [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)],
            node_defs(tf.get_default_graph()))


@case
def batch_normalization_errors(tf):
    """Axes out of range or repeated, an undefined axis dimension, an unknown rank, a
    non-integer axis and a training flag that is not a bool."""
    x = tf.constant(_X)
    return [outcome(tf.layers.batch_normalization, x, axis=2),
            outcome(tf.layers.batch_normalization, x, axis=[1, -1]),
            outcome(tf.layers.batch_normalization, tf.placeholder(tf.float32, [2, None])),
            outcome(tf.layers.batch_normalization, tf.placeholder(tf.float32)),
            outcome(tf.layers.batch_normalization, x, axis="1"),
            outcome(tf.layers.batch_normalization, x, training="yes")]


@case
def a_batch_normalized_network_trains(tf):
    """Chapter 11's network: dense layers, batch normalization behind the training
    placeholder, ELU, and the training op under the UPDATE_OPS' control dependencies;
    TensorFlow's losses, moving averages and evaluation outputs after a few steps."""
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [None, 4], name="X")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    hidden = tf.layers.dense(x, 6, name="hidden1")
    hidden = tf.nn.elu(tf.layers.batch_normalization(hidden, training=training,
                                                     momentum=0.9))
    logits = tf.layers.batch_normalization(tf.layers.dense(hidden, 3, name="outputs"),
                                           training=training, momentum=0.9)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                        logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    batch = np.concatenate([_X, _X[::-1] * 0.5])
    labels = np.int64([0, 2, 1, 1])
    moving = [v for v in tf.global_variables() if "moving" in v.name]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss], {x: batch, y: labels, training: True})[1]
                  for _ in range(4)]
        return losses, sess.run(moving), sess.run(logits, {x: batch})


@case
def batch_normalization_of_images_unfused(tf):
    """4D inputs with fused=False (TensorFlow's graph without its fused kernel), over the
    channels last and first."""
    images = tf.constant(np.arange(48, dtype=np.float32).reshape(2, 2, 4, 3) % 7)
    training = tf.placeholder_with_default(True, [], name="training")
    built = [tf.layers.batch_normalization(images, training=training, fused=False),
             tf.layers.batch_normalization(images, axis=1, training=training, fused=False)]
    return _bn_values(tf, built), node_defs(tf.get_default_graph())
