"""tf.nn.embedding_lookup as a model uses it: a table in parts, trained sparsely."""

import numpy as np
import pytest

import dtfnb as tf

TABLE = np.arange(10 * 3, dtype=np.float32).reshape(10, 3) / 10


def test_any_iterable_of_variables_is_the_list_of_parts():
    """A PartitionedVariable iterates into its variables; so may any iterable."""
    parts = [tf.Variable(TABLE[i::3], name=f"part_{i}") for i in range(3)]
    ids = [[9, 0], [4, 4]]
    looked_up = tf.nn.embedding_lookup((part for part in parts), ids)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(looked_up), TABLE[ids])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_training_changes_only_the_rows_looked_up(strategy):
    pieces = ([TABLE[i::3] for i in range(3)] if strategy == "mod"
              else np.split(TABLE, [4, 7]))
    parts = [tf.Variable(p, name=f"part_{i}") for i, p in enumerate(pieces)]
    ids = tf.placeholder(tf.int32, [None])
    rows = tf.nn.embedding_lookup(parts, ids, partition_strategy=strategy)
    loss = tf.reduce_sum(tf.square(rows - 1.0))
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    assert {op.type for op in tf.get_default_graph().get_operations()
            if op.type.startswith(("Apply", "SparseApply"))} == {"SparseApplyAdagrad"}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss], {ids: [2, 7, 2]})[1] for _ in range(40)]
        table = np.concatenate(sess.run(parts))
    if strategy == "mod":  # back to the table's row order
        table = table[np.argsort(np.concatenate([np.arange(10)[i::3] for i in range(3)]))]
    assert losses[-1] < losses[0] / 10
    untouched = [i for i in range(10) if i not in (2, 7)]
    np.testing.assert_array_equal(table[untouched], TABLE[untouched])
