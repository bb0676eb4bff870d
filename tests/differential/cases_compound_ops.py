"""Ops TensorFlow builds in Python from others (reduce_logsumexp, count_nonzero, norm,
moments, batch_normalization, l2_normalize), and the elementwise tests and soft
activations: their graphs op for op, values at the edges, gradients and errors."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}

INF, NAN = np.inf, np.nan
X = np.array([[1.5, -2.0, 0.0], [3.0, 0.5, -1.0]], np.float32)
EDGES = np.array([0.0, -1.0, 30.0, -30.0, 100.0, -100.0, INF, -INF, NAN], np.float32)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def tests_and_soft_activations(tf):
    """is_nan, is_inf, is_finite (float tensors only, no gradient); softplus and softsign
    at the edges, their gradients (softplus's through a sigmoid, softsign's a
    SoftsignGrad that has none of its own)."""
    x = tf.placeholder(tf.float32, [9], name="x")
    tests = [tf.is_nan(x), tf.is_inf(x), tf.is_finite(x)]
    soft = [tf.nn.softplus(x), tf.nn.softsign(x), tf.nn.softplus(EDGES.astype(np.float64))]
    grads = [tf.gradients(f(x), x)[0] for f in (tf.nn.softplus, tf.nn.softsign)]
    second = tf.gradients(grads[0], x)
    with tf.Session() as sess:
        values = sess.run(tests + soft + grads + second, {x: EDGES})
    return (values, node_defs(tf.get_default_graph()), outcome(tf.is_nan, [1, 2]),
            outcome(tf.gradients, grads[1], x))


@case
def log_sum_exp_and_counts(tf):
    """reduce_logsumexp takes the finite maximum out (a row of -inf gives -inf, one with
    inf gives inf); count_nonzero counts what is not zero (not false), in `dtype`."""
    rows = np.array([[1.0, 2.0, 3.0], [-INF, -INF, -INF], [INF, 0.0, 1.0], [1e30, 1e30, 0]],
                    np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    built = [tf.reduce_logsumexp(x), tf.reduce_logsumexp(x, 1),
             tf.reduce_logsumexp(x, [0], keepdims=True), tf.reduce_logsumexp(X, 1),
             tf.count_nonzero(X), tf.count_nonzero(X, 1, keepdims=True, dtype=tf.int32),
             tf.count_nonzero([[True, False], [True, True]], axis=0),
             tf.count_nonzero(tf.constant([0, 3, -1]), reduction_indices=0)]
    grad = tf.gradients(built[1], x)
    with tf.Session() as sess:
        values = sess.run(built + grad, {x: rows})
    return (values, [t.shape.as_list() for t in built], node_defs(tf.get_default_graph()),
            outcome(tf.reduce_logsumexp, X, axis=1, reduction_indices=1))


@case
def norms(tf):
    """tf.norm: vector norms over all of a tensor or along an axis (euclidean, 1, inf, any
    p > 0), matrix norms over a pair of axes (Frobenius, 1, inf), kept dims, the
    gradient, and TensorFlow's errors for an ord or axis it does not take."""
    m = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11)
    built = [tf.norm(X), tf.norm(X, axis=1), tf.norm(X, ord=1, axis=0), tf.norm(X, ord=np.inf),
             tf.norm(X, ord=3, axis=-1, keepdims=True), tf.norm(m, ord="fro", axis=[1, 2]),
             tf.norm(m, ord=1, axis=(1, 2)), tf.norm(m, ord=np.inf, axis=(2, 0)),
             tf.norm(m, axis=(0, 2), keep_dims=True)]
    grad = tf.gradients(tf.norm(m), m)
    return (run(tf, built + grad), [t.shape.as_list() for t in built],
            node_defs(tf.get_default_graph()), outcome(tf.norm, X, ord=0),
            outcome(tf.norm, X, ord="fro"), outcome(tf.norm, X, axis=[0, 0]),
            outcome(tf.norm, X, axis=[0, 1, 2]), outcome(tf.norm, X, ord=-1, axis=(0, 1)))


@case
def batch_normalization(tf):
    """tf.nn.batch_normalization with and without scale and offset, of a batch's own
    moments (the chapter's batch norm by hand), float16 input, and its gradients."""
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    mean, variance = tf.nn.moments(x, [0])
    gamma, beta = tf.constant([1.0, 2.0, 0.5]), tf.constant([0.0, -1.0, 3.0])
    built = [tf.nn.batch_normalization(x, mean, variance, beta, gamma, 1e-3),
             tf.nn.batch_normalization(x, mean, variance, None, None, 1e-3, name="plain"),
             tf.nn.batch_normalization(x, 0.5, 2.0, beta, None, 0.0),
             tf.nn.batch_normalization(tf.constant(X, tf.float16), np.float16(0.5),
                                       np.float16(2.0), None, np.float16(3.0), 0.01)]
    grads = tf.gradients(built[0] * X, [x, gamma, beta])
    with tf.Session() as sess:
        values = sess.run([built, grads], {x: X})
    return values, node_defs(tf.get_default_graph())


@case
def moments_and_l2_normalize(tf):
    """tf.nn.moments (mean and variance, float16 through float32, keep_dims) and
    tf.nn.l2_normalize (over an axis or all, `dim` its old name), with gradients."""
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    mean, variance = tf.nn.moments(x, [0])
    kept = tf.nn.moments(X, [0, 1], keep_dims=True)
    half = tf.nn.moments(tf.constant(X, tf.float16), [1])
    normalized = [tf.nn.l2_normalize(x, 1), tf.nn.l2_normalize(X), tf.nn.l2_normalize(X, dim=0),
                  tf.nn.l2_normalize(np.zeros(3, np.float32), 0)]
    grads = tf.gradients([variance, normalized[0]], x)
    with tf.Session() as sess:
        values = sess.run([mean, variance, kept, half, normalized, grads], {x: X})
    return (values, [t.dtype.name for t in half], node_defs(tf.get_default_graph()),
            outcome(tf.nn.l2_normalize, X, axis=0, dim=0))


@case
def tensordot(tf):
    """tf.tensordot over a count of axes, axis pairs (negative ones too), a tensor of
    axes, known, partly known and unknown shapes; its graphs, gradients and errors."""
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mat = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = tf.placeholder(tf.float32, [None, 3, 4], name="a")
    b = tf.placeholder(tf.float32, None, name="b")
    built = [tf.tensordot(cube, mat, 1), tf.tensordot(cube, mat, [[2, 1], [0, 1]]),
             tf.tensordot(cube, mat, [[-1], [0]]), tf.tensordot(mat, mat, 0),
             tf.tensordot(a, mat, [[2], [0]]), tf.tensordot(a, b, 1, name="dynamic"),
             tf.tensordot(cube, b, [[0, 2], [1, 0]]),
             tf.tensordot(cube, mat, tf.constant([[2], [0]]))]
    grads = tf.gradients(tf.reduce_sum(built[4] * 2.0) + tf.reduce_sum(built[5]), [a, b])
    values = run(tf, built + grads, {a: cube, b: np.ones([4, 2, 2], np.float32)})
    errors = [outcome(tf.tensordot, cube, mat, -1), outcome(tf.tensordot, cube, mat, 4),
              outcome(tf.tensordot, cube, mat, [[1]]),
              outcome(tf.tensordot, cube, mat, [[1, 2], [0]])]
    # The shape of the last, whose axes are a tensor, TensorFlow's C++ shape inference
    # learns by evaluating the axes (a documented difference): not compared.
    return (values, [t.shape.as_list() if t.shape.ndims is not None else None
                     for t in built[:-1]], errors, node_defs(tf.get_default_graph()))
