"""Random ops: distributions, the seed rules, and reproducibility across sessions."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.framework import random_seed


def _two_sessions(fetch, runs=2):
    """Runs `fetch` `runs` times in each of two sessions."""
    results = []
    for _ in range(2):
        with tf.Session() as sess:
            results.append([sess.run(fetch) for _ in range(runs)])
    return results


def test_op_seed_repeats_across_sessions_and_advances_within_one():
    x = tf.random_normal([5], seed=42)
    (a1, a2), (b1, b2) = _two_sessions(x)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)


def test_graph_seed_makes_each_op_different_but_the_graph_reproducible():
    def build():
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(1234)
            return graph, [tf.random_uniform([4]), tf.random_uniform([4])]

    values = []
    for _ in range(2):
        graph, ops = build()
        with tf.Session(graph=graph) as sess:
            values.append(sess.run(ops))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])
    assert not np.array_equal(values[0][0], values[0][1])


def test_unseeded_ops_differ_between_sessions():
    x = tf.random_uniform([8])
    (a,), (b,) = _two_sessions(x, runs=1)
    assert not np.array_equal(a, b)
    rnd = x.graph.get_operation_by_name("random_uniform/RandomUniform")
    assert (rnd.get_attr("seed"), rnd.get_attr("seed2")) == (0, 0)


def test_get_seed_rules():
    assert random_seed.get_seed(None) == (None, None)
    assert random_seed.get_seed(7) == (random_seed.DEFAULT_GRAPH_SEED, 7)
    tf.set_random_seed(5)
    tf.constant(1.0)
    assert random_seed.get_seed(None) == (5, 0)  # counts the ops seeded so, not all ops
    assert random_seed.get_seed(9) == (5, 9)
    assert random_seed.get_seed(None) == (5, 1)
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        assert random_seed.get_seed(None) == (5, 0)   # each graph counts its own
    tf.set_random_seed(0)
    assert random_seed.get_seed(0) == (0, 2**31 - 1)


def test_seed_attrs_on_the_op():
    tf.set_random_seed(10)
    x = tf.random_normal([2], seed=3, name="noise")
    op = x.graph.get_operation_by_name("noise/RandomStandardNormal")
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (10, 3)
    assert [o.name for o in x.graph.get_operations()] == [
        "noise/shape", "noise/mean", "noise/stddev", "noise/RandomStandardNormal", "noise/mul",
        "noise"]


def test_normal_and_truncated_normal_statistics():
    n = tf.random_normal([20000], mean=3.0, stddev=2.0, seed=1)
    t = tf.truncated_normal([20000], mean=-1.0, stddev=0.5, seed=2)
    with tf.Session() as sess:
        nv, tv = sess.run([n, t])
    assert nv.dtype == np.float32 and nv.shape == (20000,)
    assert abs(nv.mean() - 3.0) < 0.05 and abs(nv.std() - 2.0) < 0.05
    assert tv.min() >= -2.0 and tv.max() <= 0.0
    assert abs(tv.mean() + 1.0) < 0.02 and abs(tv.std() - 0.5 * 0.8796) < 0.02


def test_uniform_float_and_int():
    f = tf.random_uniform([1000], minval=-2.0, maxval=3.0, seed=1)
    i = tf.random_uniform([1000], minval=5, maxval=9, dtype=tf.int64, seed=1)
    d = tf.random_uniform([3, 2], dtype=tf.float64, seed=4)
    with tf.Session() as sess:
        fv, iv, dv = sess.run([f, i, d])
    assert fv.min() >= -2.0 and fv.max() < 3.0 and fv.std() > 1.0
    assert iv.dtype == np.int64 and set(iv.tolist()) == {5, 6, 7, 8}
    assert dv.dtype == np.float64 and dv.shape == (3, 2)
    assert i.op.type == "RandomUniformInt" and i.op.name.startswith("random_uniform_")


def test_uniform_errors():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    bad = tf.random_uniform([2], minval=4, maxval=4, dtype=tf.int32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Need minval < maxval, got 4 >= 4"):
            sess.run(bad)


def test_half_precision_and_dynamic_shapes():
    shape = tf.placeholder(tf.int32, [2])
    x = tf.random_normal(shape, dtype=tf.float16, seed=3)
    assert x.shape.as_list() == [None, None]
    assert tf.random_normal([2, 3]).shape.as_list() == [2, 3]
    rows = tf.placeholder(tf.float32, [None, 3])
    packed = tf.random_uniform([tf.shape(rows)[0], 3], seed=1)
    assert packed.shape.as_list() == [None, 3]
    assert tf.truncated_normal(tf.shape(rows)).shape.as_list() == [None, 3]
    with tf.Session() as sess:
        value = sess.run(x, {shape: [4, 5]})
        assert sess.run(packed, {rows: np.zeros((2, 3))}).shape == (2, 3)
    assert value.dtype == np.float16 and value.shape == (4, 5)


def test_random_shuffle_permutes_rows():
    data = np.arange(20).reshape(10, 2)
    shuffled = tf.random_shuffle(data, seed=5)
    with tf.Session() as sess:
        a, b = sess.run(shuffled), sess.run(shuffled)
    assert sorted(map(tuple, a.tolist())) == sorted(map(tuple, data.tolist()))
    assert not (np.array_equal(a, data) and np.array_equal(b, data))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(shuffled), a)


def test_random_ops_are_not_differentiable():
    mean = tf.constant(1.0)
    x = tf.random_normal([3], mean=mean)
    assert tf.gradients(x, mean)[0] is not None  # through the Add, not the sampler
    assert tf.random.normal is tf.random_normal
    assert tf.random.uniform is tf.random_uniform
