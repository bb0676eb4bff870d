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


@pytest.mark.parametrize("weighted", [False, True])
def test_a_bag_of_ids_trains_only_its_rows(weighted):
    """embedding_lookup_sparse: unweighted, a sparse segment mean of the table; weighted,
    the distinct ids looked up first. Either way the update is sparse."""
    table = tf.Variable(TABLE, name="table")
    indices = [[0, 0], [0, 1], [1, 0]]
    ids = tf.SparseTensor(indices, tf.placeholder(tf.int64, [None], name="ids"), [2, 2])
    weights = tf.SparseTensor(indices, [1.0, 3.0, 2.0], [2, 2]) if weighted else None
    bags = tf.nn.embedding_lookup_sparse(table, ids, weights)
    loss = tf.reduce_sum(tf.square(bags - 1.0))
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    reduced_by = {op.type for op in tf.get_default_graph().get_operations()}
    assert ("SegmentSum" if weighted else "SparseSegmentMean") in reduced_by
    assert "SparseApplyAdagrad" in reduced_by
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss], {ids.values: [4, 8, 4]})[1] for _ in range(40)]
        trained = sess.run(table)
    assert losses[-1] < losses[0] / 10
    untouched = [i for i in range(10) if i not in (4, 8)]
    np.testing.assert_array_equal(trained[untouched], TABLE[untouched])
