"""tf.reduce_join (tf.strings.reduce_join) and Dataset.list_files: joined strings along
every axis order, shapes, graphs and errors; the files a pattern lists, in TensorFlow's
order for a seed, and the step that fails when nothing matches."""

import os
import tempfile

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


_WORDS = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)


@case
def reduce_join_values_shapes_and_graphs(tf):
    """All axes, one, both in either order (the first listed varies fastest), negative
    axes, keep_dims, no axes, an empty input, axes fed at run time, a scalar."""
    words = tf.constant(_WORDS)
    axes = tf.placeholder(tf.int32, [None])
    built = [tf.reduce_join(words), tf.reduce_join(words, 0),
             tf.reduce_join(words, 1, separator="-"), tf.strings.reduce_join(words, [0, 1]),
             tf.strings.reduce_join(words, [1, 0]), tf.reduce_join(words, -1, keep_dims=True),
             tf.reduce_join(words, [0, 1], keepdims=True), tf.reduce_join(words, []),
             tf.reduce_join(tf.zeros([0, 2], tf.string), 0), tf.reduce_join("x"),
             tf.reduce_join(words, axes), tf.reduce_join(words, axes, keep_dims=True)]
    values = run(tf, built, {axes: [-1, 0]})
    return (values, [str(t.shape) for t in built], node_defs(tf.get_default_graph()))


@case
def reduce_join_errors(tf):
    """Axes out of range at build and at run, a repeated axis, both spellings of an
    argument."""
    words = tf.constant(_WORDS)
    axes = tf.placeholder(tf.int32, [None])
    joined = tf.reduce_join(words, axes)
    with tf.Session() as sess:
        at_run = [outcome(sess.run, joined, {axes: a}) for a in ([0, 0], [2], [-3])]
    return (at_run, outcome(tf.reduce_join, words, 2), outcome(tf.reduce_join, words, [-3]),
            outcome(tf.reduce_join, words, 0, reduction_indices=0))


def _listed(tf, dataset, root, count=12):
    iterator = dataset.repeat(2).make_initializable_iterator()
    next_name = iterator.get_next()
    names = []
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        try:
            for _ in range(count):
                names.append(os.path.relpath(sess.run(next_name).decode(), root))
        except tf.errors.OutOfRangeError:
            names.append("end")
    return names


@case
def list_files(tf):
    """Sorted without shuffling, TensorFlow's order with a seed (the same each pass), a
    vector of patterns, and a pattern that matches nothing failing the step."""
    root = tempfile.mkdtemp()
    for name in ("b.txt", "a.txt", "c.txt", "d.csv", "e.txt"):
        with open(os.path.join(root, name), "w") as f:
            f.write(name)
    listed = [_listed(tf, tf.data.Dataset.list_files(os.path.join(root, "*.txt"),
                                                     shuffle=False), root),
              _listed(tf, tf.data.Dataset.list_files(os.path.join(root, "*.txt"), seed=4),
                      root),
              _listed(tf, tf.data.Dataset.list_files(
                  [os.path.join(root, "*.csv"), os.path.join(root, "a*")], shuffle=False),
                  root)]
    nothing = tf.data.Dataset.list_files(os.path.join(root, "*.none"))
    iterator = nothing.make_initializable_iterator()
    with tf.Session() as sess:
        failure = outcome(sess.run, iterator.initializer)
    message = str(failure).replace(root, "<root>").split("\n\t [[")[0].splitlines()[-1]
    return (listed, (nothing.output_types, nothing.output_shapes),
            type(failure).__name__, message)
