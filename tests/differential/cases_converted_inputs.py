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


B = np.array([[True, False, True], [False, True, True]])


@case
def one_input_ops_of_values(tf):
    """A value given to a one-input op converts in the op's scope under the input's name
    ("Exp/x", "Relu/features", "Identity/input"); sign and round convert it first, and
    softmax unnamed, as TensorFlow's do."""
    built = [f(X) for f in (tf.exp, tf.log, tf.sqrt, tf.square, tf.abs, tf.negative,
                            tf.sign, tf.round, tf.reciprocal, tf.rsqrt, tf.floor, tf.ceil,
                            tf.log1p, tf.sigmoid, tf.tanh, tf.nn.relu, tf.nn.relu6,
                            tf.nn.elu, tf.nn.leaky_relu, tf.nn.softmax, tf.nn.log_softmax,
                            tf.identity, tf.stop_gradient, tf.nn.l2_loss, tf.zeros_like)]
    built += [tf.squeeze([[1.0], [2.0]]), tf.sign(np.array([-2, 0, 3], np.int32)),
              tf.round(np.array([1, 2], np.int32)), tf.nn.softmax(X, axis=0),
              tf.nn.log_softmax(X[None], axis=-2, name="lsm")]
    return (run(tf, built), [b.shape.as_list() for b in built], _graph(tf),
            outcome(tf.nn.softmax, X, axis=2))


@case
def choosing_and_logic_of_values(tf):
    """where, logical ops, div, segment sums, clipping, boolean_mask and a strided slice
    with default strides, given values: each converts them in its scope, as TensorFlow's."""
    built = [tf.where(B), tf.where(B, X, X * 2), tf.logical_and(B, B), tf.logical_not(B),
             tf.logical_xor(B, [[True] * 3] * 2), tf.div(X, 2.0),
             tf.div(np.array([7, -7], np.int32), 2), tf.segment_sum(X, [0, 0]),
             tf.clip_by_value(X, -1.0, 1.0), tf.clip_by_norm(X, 1.0),
             tf.boolean_mask(X, B), tf.strided_slice(X, [0], [1])]
    return (run(tf, built), _graph(tf),
            outcome(tf.clip_by_value, [1.0, 2.0], [[0.0], [1.0]], 5.0),
            outcome(tf.clip_by_norm, [1.0, 2.0], [[1.0], [2.0]]),
            outcome(tf.where, B, X, np.ones((2, 3), np.int32)))


@case
def dropout_graphs(tf):
    """dropout as TensorFlow 2.21 builds it: a Select of x times 1 / (1 - rate) (a
    constant worked out in Python for a number, a RealDiv for a tensor) where a uniform
    sample is at least the rate; keep_prob converts to rate = 1 - keep_prob. Its values
    are random: whether each kept element is x times that scale is compared."""
    keep = tf.placeholder_with_default(0.7, [], name="keep")
    built = [tf.nn.dropout(X, 0.7), tf.nn.dropout(X, rate=0.25, noise_shape=[2, 1]),
             tf.nn.dropout(X, keep), tf.nn.dropout(X, rate=0.0)]
    with tf.Session() as sess:
        values = sess.run(built[:3])
    scales = np.float32(1 / (1 - (1 - 0.7))), np.float32(1 / (1 - 0.25))
    kept = [bool(np.all((value == 0) | (value == X * scale)))
            for value, scale in zip(values, scales)]
    fed = values[2] != 0
    kept.append(bool(np.allclose(values[2][fed], (X / np.float32(0.7))[fed])))
    return (kept, [b.shape.as_list() for b in built], _graph(tf),
            outcome(tf.nn.dropout, X, 0.0), outcome(tf.nn.dropout, X, 0.5, rate=0.5),
            outcome(tf.nn.dropout, X), outcome(tf.nn.dropout, [1, 2], 0.5),
            outcome(tf.nn.dropout, X, rate=tf.constant([0.5, 0.5])),
            outcome(tf.nn.dropout, X, rate=tf.constant(0.5, tf.float64)))


@case
def more_builders_of_values(tf):
    """in_top_k, random_shuffle and a dataset's elements convert values under TensorFlow's
    names ("in_top_k/InTopKV2/predictions", "RandomShuffle/value",
    "normalize_element/component_0"); a reduction of a variable over all its axes takes
    them as a constant, as of a tensor."""
    v = tf.Variable(X, name="v")
    built = [tf.nn.in_top_k(X, [0, 1], 1), tf.random_shuffle(X, seed=1).shape,
             tf.reduce_sum(v), tf.reduce_mean(v, keepdims=True),
             tf.data.Dataset.from_tensor_slices((X, [1, 2])).output_shapes,
             tf.data.Dataset.from_tensors({"a": X, "b": 3.0}).output_types]
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = sess.run(built[:1] + built[2:4])
    return values, built[1].as_list(), str(built[4]), str(built[5]), _graph(tf)


@case
def clipping_by_global_norm(tf):
    """global_norm and clip_by_global_norm as TensorFlow builds them (an L2Loss per tensor,
    each clipped tensor an identity named after the scope); a norm that is not finite
    makes every clipped value NaN, as TensorFlow documents."""
    t = [X, None, X * 10]
    clipped, norm = tf.clip_by_global_norm(t, 5.0)
    inf_clipped, _ = tf.clip_by_global_norm([X], 1.0, use_norm=tf.constant(np.inf))
    named, _ = tf.clip_by_global_norm([X], 1.0, name="clip")
    with tf.Session() as sess:
        values = sess.run([clipped[0], clipped[2], norm, tf.global_norm(t), inf_clipped,
                           named])
    return (values, clipped[1], _graph(tf), outcome(tf.global_norm, X),
            outcome(tf.clip_by_global_norm, "abc", 1.0))


@case
def reflected_operators_of_values(tf):
    """A value on the left of a tensor's operator converts first, to the tensor's dtype, as
    "x" of the operator's scope ("matmul/x", "sub/x", "pow/x"), as TensorFlow's reflected
    operators do."""
    t = tf.constant(X, name="t")
    built = [X.T @ t, 1 - t, 2.0 ** t, 7 // tf.constant([2, 3]), [[1.0, 2.0, 3.0]] * t]
    return run(tf, built), _graph(tf), outcome(lambda: "a" + t)
