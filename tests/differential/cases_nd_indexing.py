"""gather_nd, scatter_nd and tf.nn.top_k: values, shapes, graphs, gradients and errors."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


_CUBE = np.arange(24.0).reshape(2, 3, 4).astype(np.float32)
_ROWS = np.float32([[1, 3, 2, 3, 0.5], [5, 4, 5, 1, 2]])


@case
def values_shapes_and_graphs(tf):
    """Index tuples of every depth, repeated scatter indices adding up, top_k's ties to
    the lower index, and TensorFlow's graphs for all of them."""
    cube = tf.constant(_CUBE)
    built = [tf.gather_nd(cube, [[0, 1], [1, 2]]), tf.gather_nd(cube, [[1]]),
             tf.gather_nd(cube, [[[0, 1, 2]], [[1, 0, 3]]]),
             tf.gather_nd(cube, np.int64([[1, 1, 1]])),
             tf.scatter_nd([[1], [3], [1]], [5.0, 6.0, 7.0], [5]),
             tf.scatter_nd([[0, 1], [1, 0]], [[1.0, 2.0], [3.0, 4.0]], [2, 2, 2])]
    top = tf.nn.top_k(_ROWS, k=3)
    top_int = tf.nn.top_k(np.int32([4, 9, 9, 1]), 2, name="ints")
    shapes = [t.shape.as_list() for t in built + list(top)]
    return (run(tf, built + [top.values, top.indices, top_int.values, top_int.indices]),
            shapes, type(top).__name__, top._fields, node_defs(tf.get_default_graph()))


@case
def gradients_and_their_graphs(tf):
    """Their gradients' values where shapes are known, and TensorFlow's gradient graphs
    where they are not: top_k's scatters to flat positions, gather_nd's to a ScatterNd
    (IndexedSlices for one-long tuples of a matrix), scatter_nd's gathers."""
    x = tf.constant(_ROWS)
    cube = tf.constant(_CUBE)
    table = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    updates = tf.constant([5.0, 6.0])
    loss = (tf.reduce_sum(tf.nn.top_k(x * 2, 2).values * [[1.0, 2.0]])
            + tf.reduce_sum(tf.gather_nd(cube * 1, [[0, 1], [1, 2]]) * 2.0)
            + tf.reduce_sum(tf.scatter_nd([[1], [3]], updates * 1, [5]) * [1., 2, 3, 4, 5])
            + tf.reduce_sum(tf.gather_nd(table, [[1], [0]])))
    grads = tf.gradients(loss, [x, cube, updates, table])
    with tf.Session() as sess:
        sess.run(table.initializer)
        values = sess.run([tf.convert_to_tensor(g) for g in grads])
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.placeholder(tf.float32, [None, None])
        params = tf.placeholder(tf.float32, [None, 3, 4])
        tuples = tf.placeholder(tf.int32, [None, 2])
        tf.gradients(tf.reduce_sum(tf.nn.top_k(rows, 2).values)
                     + tf.reduce_sum(tf.gather_nd(params, tuples)), [rows, params])
    return values, node_defs(graph)


@case
def errors_at_build_and_at_run(tf):
    cube = tf.constant(_CUBE)
    at_build = [outcome(tf.nn.top_k, [1.0, 2.0], 3),
                outcome(tf.gather_nd, cube, [[0, 1, 2, 3]]),
                outcome(tf.scatter_nd, [[1]], [1.0, 2.0], [3]),
                outcome(tf.nn.top_k, 1.0)]
    tuples, updates, k = tf.placeholder(tf.int32), tf.placeholder(tf.float32), \
        tf.placeholder(tf.int32)
    matrix = tf.constant(_CUBE[0])
    gathered = tf.gather_nd(matrix, tuples)
    scattered = tf.scatter_nd(tuples, updates, [3])
    values = tf.placeholder(tf.float32)
    top = tf.nn.top_k(values, k)
    at_run = [outcome(run, tf, gathered, {tuples: t}) for t in
              ([[5, 0]], [[0, -1]], [[0, 1, 2]], [[[0, 0], [2, 9]]])]
    at_run += [outcome(run, tf, scattered, {tuples: t, updates: u}) for t, u in
               (([[4]], [1.0]), ([[1]], [1.0, 2.0]))]
    at_run += [outcome(run, tf, top, {values: v, k: n}) for v, n in
               (([1.0, 2.0], -1), ([1.0, 2.0], 3), (1.0, 1))]
    return at_build, at_run
