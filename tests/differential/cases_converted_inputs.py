"""Builders given Python and numpy values rather than tensors: where they convert them
(in the op's name scope, under TensorFlow's names for the inputs: "MatMul/a",
"concat/values_0", "Sum/input"), the values they compute, and the errors they raise,
whose messages name those constants and list the input values shape inference read
("with computed input tensors: input[1] = <2>")."""

import numpy as np
from observe import outcome, run

CASES = {}

X = np.array([[1.5, -2.0, 0.0], [3.0, 0.5, -1.0]], np.float32)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _graph(tf):
    return [(op.name, op.type, list(op.node_def.input))
            for op in tf.get_default_graph().get_operations()]


@case
def matmul_of_values(tf):
    return (outcome(tf.matmul, X, X), outcome(run, tf, tf.matmul(X, X, transpose_b=True)),
            outcome(tf.matmul, [1.0, 2.0], X),
            outcome(tf.matmul, tf.constant(X), tf.constant(X, tf.float64)), _graph(tf))


@case
def reductions_of_values(tf):
    built = [tf.reduce_mean(X, [0, 1], keepdims=True), tf.reduce_sum(X),
             tf.reduce_all([[True, False]], 1), tf.reduce_mean(tf.constant([1, 2], tf.int32))]
    return (run(tf, built), outcome(tf.reduce_sum, X, 2), outcome(tf.reduce_max, X, [0, -3]),
            outcome(run, tf, tf.reduce_max(tf.zeros([0, 2]), 0)), _graph(tf))


@case
def arg_max_and_min(tf):
    return (outcome(run, tf, [tf.argmax(X, 1), tf.argmin(X, 0),
                              tf.argmax(X, 1, output_type=tf.int32)]),
            outcome(tf.argmax, X, 2), outcome(tf.argmin, X, -3),
            outcome(run, tf, tf.argmax(tf.zeros([0, 3]), 0)),
            outcome(run, tf, tf.argmin(tf.zeros([3, 0]), 1)), _graph(tf))


@case
def one_hot_indices(tf):
    built = (outcome(run, tf, [tf.one_hot([0, 2, -1, 5], 3),
                               tf.one_hot([[0, 2], [1, 1]], 3, on_value=5, off_value=-1,
                                          axis=0)]),
             tf.one_hot([1], 3, dtype=tf.int64).dtype, _graph(tf))
    # (Before TensorFlow refuses them, float indices leave constants in its graph that
    # only its retries at converting them name.)
    return built, outcome(tf.one_hot, [0.5], 3)


@case
def concat_and_split_values(tf):
    built = [tf.concat([X, X], -1), tf.split(X, [1, 2], 1), tf.split(X, 3, axis=1)]
    return (run(tf, built), outcome(tf.concat, [X, [[1.0]]], 0),
            outcome(tf.concat, [X, [[1.0, 2.0, 3.0, 4.0]]], 1),
            outcome(tf.concat, [X, [1.0, 2.0, 3.0]], 0), outcome(tf.split, X, 2, 1), _graph(tf))


@case
def stack_along_any_axis(tf):
    """tf.stack folds a list that converts as a whole only along axis 0, as TensorFlow:
    along another axis it packs, and the values really stack along it."""
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="t")
    built = [tf.stack([[1, 2], [3, 4]], axis=1), tf.stack([[1, 2], [3, 4]]),
             tf.stack([X, X], axis=1), tf.stack([X, X]), tf.stack([t, t], axis=-1),
             tf.stack([t, [[5.0, 6.0], [7.0, 8.0]]], axis=2), tf.stack([t, t]),
             tf.stack([1, t[0, 0]], axis=0), tf.stack([t[0, 0], 2])]
    return (run(tf, built), [b.shape.as_list() for b in built], _graph(tf),
            outcome(tf.stack, [t, t], axis=3), outcome(tf.stack, [[1, 2], [3, 4]], axis=-3))


@case
def assign_values(tf):
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        first = outcome(sess.run, v)
        sess.run(v.initializer)
        return (first, sess.run(v.assign_add([1.0, 1.0])), outcome(v.assign, [1.0, 2.0, 3.0]),
                outcome(tf.assign, v, [[1.0, 2.0]]),
                sess.run(tf.assign(v, [5.0, 6.0, 7.0], validate_shape=False)),
                sess.run(v.assign_sub([1.0, 1.0, 1.0])), _graph(tf))
