"""tf.scatter_update and its siblings: sparse updates of a ref variable."""

import numpy as np
import pytest

import dtfnb as tf

INITIAL = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


@pytest.mark.parametrize("kind,expected", [
    ("scatter_update", [[7, 7], [3, 4], [9, 9]]),
    ("scatter_add", [[8, 9], [3, 4], [14, 15]]),
    ("scatter_sub", [[-6, -5], [3, 4], [-4, -3]]),
    ("scatter_mul", [[7, 14], [3, 4], [45, 54]]),
    ("scatter_div", [[1 / 7, 2 / 7], [3, 4], [5 / 9, 6 / 9]]),
    ("scatter_max", [[7, 7], [3, 4], [9, 9]]),
    ("scatter_min", [[1, 2], [3, 4], [5, 6]]),
])
def test_rows_are_combined_with_the_updates(kind, expected):
    v = tf.Variable(INITIAL)
    op = getattr(tf, kind)(v, [2, 0], [[9.0, 9.0], [7.0, 7.0]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(op), expected, rtol=1e-6)
        np.testing.assert_allclose(sess.run(v), expected, rtol=1e-6)


def test_repeated_indices_accumulate_and_a_bad_index_changes_nothing():
    v = tf.Variable(INITIAL)
    with tf.Session() as sess:
        sess.run(v.initializer)
        read_before = sess.run(v)
        assert sess.run(tf.scatter_add(v, [1, 1], [[1.0, 1.0], [1.0, 1.0]]))[1].tolist() \
            == [5.0, 6.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^indices\[1\] = 3 is "
                                                                 r"not in \[0, 3\)"):
            sess.run(tf.scatter_update(v, [0, 3], [[0.0, 0.0]] * 2))
        assert sess.run(v)[0].tolist() == [1.0, 2.0]
    assert read_before[1].tolist() == [3.0, 4.0], "a value read before is not written over"


def test_updates_must_have_the_indices_rows_shape():
    v = tf.Variable(INITIAL)
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but "
                                         r"are 1 and 2. Shapes are \[1,2\] and \[2,2\]"):
        tf.scatter_update(v, [0, 1], [[1.0, 1.0]])
    with pytest.raises(TypeError, match="requires that input 'ref' be a mutable tensor"):
        tf.scatter_add(tf.constant(INITIAL), [0], [[1.0, 1.0]])
