"""Sparse updates of ref variables: tf.scatter_update and its arithmetic siblings."""

import numpy as np
from observe import node_defs, outcome

INITIAL = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
KINDS = ("scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div",
         "scatter_max", "scatter_min")


def _values(kind, indices, updates):
    def case(tf):
        v = tf.Variable(INITIAL, name="v")
        op = getattr(tf, kind)(v, indices, updates)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return sess.run(op), sess.run(v), op.dtype, op.get_shape(), op.op.type
    return case


def _graph(kind):
    def case(tf):
        v = tf.Variable(INITIAL, name="v")
        with tf.device("/cpu:0"):
            getattr(tf, kind)(v, np.array([0, 2], np.int64), [[1.0, 1.0], [2.0, 2.0]],
                              name="update")
        return node_defs(tf.get_default_graph())
    return case


def _out_of_range(kind, indices):
    def case(tf):
        v = tf.Variable(INITIAL, name="v")
        op = getattr(tf, kind)(v, indices, [[1.0, 1.0]] * len(indices))
        with tf.Session() as sess:
            sess.run(v.initializer)
            # What the variable holds after the failure is not compared: TensorFlow has
            # written the rows before the bad index, dtfnb writes none.
            return outcome(sess.run, op)
    return case


def wrong_update_shapes(tf):
    v = tf.Variable(INITIAL, name="v")
    # Only the class: the message's node summary is TensorFlow's graph-wide format.
    return [type(outcome(fn, v, indices, updates)).__name__
            for fn, indices, updates in ((tf.scatter_update, [1, 2], [[1.0, 1.0]]),
                                         (tf.scatter_add, [1], [1.0, 1.0]))]


CASES = {f"{kind}:{label}": _values(kind, indices, updates)
         for kind in KINDS
         for label, indices, updates in (
             ("rows", [2, 0], [[9.0, 8.0], [7.0, 6.0]]),
             ("one_row", [1], [[0.5, 4.0]]),
             ("scalar_update", [0, 1], 2.0),
             ("int64_indices", np.array([[0], [2]], np.int64), [[[1.0, 1.0]], [[3.0, 3.0]]]))}
CASES.update({f"{kind}:graph": _graph(kind) for kind in KINDS})
CASES.update({"add_repeated_index": _values("scatter_add", [1, 1, 1], [[1.0, 1.0]] * 3)})
CASES.update({f"{kind}:out_of_range:{indices}": _out_of_range(kind, indices)
              for kind in ("scatter_update", "scatter_add")
              for indices in ((1, 5), (-1,))})
CASES["wrong_update_shapes"] = wrong_update_shapes
