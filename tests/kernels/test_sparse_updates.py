"""The sparse forms of the optimizer updates (SparseApplyAdagrad, …), against numpy: only
the rows indexed change, a repeated index is applied in turn, and a value read before
the update stays as it was. Also tf.unique, which optimizers use to sum repeated rows."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.ops import training_ops

VAR = np.arange(8, dtype=np.float32).reshape(4, 2) / 4
GRAD = np.array([[1.0, -2.0], [0.5, 0.25], [3.0, 1.0]], np.float32)
INDICES = np.array([3, 0, 3], np.int32)


def _rows_in_turn(arrays, rule):
    """numpy's reference: `rule` on each (index, gradient row) in turn."""
    arrays = [a.astype(np.float64) for a in arrays]
    for index, g in zip(INDICES, GRAD.astype(np.float64)):
        for a, new in zip(arrays, rule(*(a[index] for a in arrays), g)):
            a[index] = new
    return arrays


def _adagrad(a, v, g):
    a = a + g * g
    return a, v - 0.1 * g / np.sqrt(a)


def _momentum(a, v, g):
    a = a * 0.9 + g
    return a, v - 0.1 * a


def _rms_prop(s, u, v, g):
    s = s + (g * g - s) * (1 - 0.9)
    u = u * 0.5 + 0.1 * g / np.sqrt(s + 1e-7)
    return s, u, v - u


def _centered_rms_prop(m, s, u, v, g):
    s = s + (g * g - s) * (1 - 0.9)
    m = m + (g - m) * (1 - 0.9)
    u = u * 0.5 + 0.1 * g / np.sqrt(s - m * m + 1e-7)
    return m, s, u, v - u


@pytest.mark.parametrize("build,slots,rule", [
    (lambda v, s, g, i: training_ops.sparse_apply_adagrad(v, *s, 0.1, g, i), 1, _adagrad),
    (lambda v, s, g, i: training_ops.sparse_apply_momentum(v, *s, 0.1, g, i, 0.9), 1,
     _momentum),
    (lambda v, s, g, i: training_ops.sparse_apply_rms_prop(v, *s, 0.1, 0.9, 0.5, 1e-7, g, i),
     2, _rms_prop),
    (lambda v, s, g, i: training_ops.sparse_apply_centered_rms_prop(
        v, *s, 0.1, 0.9, 0.5, 1e-7, g, i), 3, _centered_rms_prop),
], ids=["adagrad", "momentum", "rms_prop", "centered_rms_prop"])
def test_rows_are_updated_in_turn(build, slots, rule):
    starts = [np.full((4, 2), 0.5 + k, np.float32) for k in range(slots)]
    var = tf.Variable(VAR, name="var")
    slot_vars = [tf.Variable(s, name=f"slot_{k}") for k, s in enumerate(starts)]
    update = build(var, slot_vars, tf.constant(GRAD), tf.constant(INDICES))
    assert update.op.type.startswith("SparseApply")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(var)
        sess.run(update)
        found = sess.run(slot_vars + [var])
    expected = _rows_in_turn(starts + [VAR], rule)
    for got, want in zip(found, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(found[-1][[1, 2]], VAR[[1, 2]])
    np.testing.assert_array_equal(before, VAR)


def test_bad_rows_fail_and_change_nothing():
    var, accum = tf.Variable(VAR), tf.Variable(np.ones((4, 2), np.float32))
    outside = training_ops.sparse_apply_adagrad(var, accum, 0.1, [[1.0, 1.0]], [4])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 1"):
        training_ops.sparse_apply_adagrad(var, accum, 0.1, [[1.0, 1.0]], [0, 1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="^Index 4 at offset 0 in indices is out of range"):
            sess.run(outside)
        np.testing.assert_array_equal(sess.run(var), VAR)


def test_unique_keeps_the_order_of_first_appearance():
    y, idx = tf.unique(tf.constant([4, 1, 4, 7, 1, 0]), out_idx=tf.int64)
    assert (y.shape.as_list(), idx.shape.as_list(), idx.dtype) == ([None], [6], tf.int64)
    with tf.Session() as sess:
        y, idx = sess.run([y, idx])
    assert y.tolist() == [4, 1, 7, 0] and idx.tolist() == [0, 1, 0, 2, 1, 3]
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.unique([[1, 2]])


def test_dynamic_stitch_interleaves_and_the_last_repeated_index_wins():
    merged = tf.dynamic_stitch([[0, 3], [1, 3]], [[[1.0], [2.0]], [[3.0], [4.0]]])
    assert merged.shape.as_list() == [4, 1]
    with tf.Session() as sess:
        assert sess.run(merged).ravel().tolist() == [1.0, 3.0, 0.0, 4.0]
