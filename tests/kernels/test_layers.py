"""tf.layers.dense (and dropout, flatten): variable names and shapes, outputs, sharing."""

import numpy as np
import pytest

import dtfnb as tf

X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed)


def test_dense_variables_and_output():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.layers.dense(x, 4, activation=tf.nn.relu)
    kernel, bias = tf.trainable_variables()
    assert (kernel.name, bias.name) == ("dense/kernel:0", "dense/bias:0")
    assert kernel.shape.as_list() == [3, 4] and bias.shape.as_list() == [4]
    assert y.shape.as_list() == [None, 4]
    assert y.op.name == "dense/Relu"
    assert {"dense/MatMul", "dense/BiasAdd"} <= {op.name for op in y.graph.get_operations()}
    out, k, b = _run(y, kernel, bias, feed={x: X})
    np.testing.assert_allclose(out, np.maximum(X @ k + b, 0), rtol=1e-6)
    assert np.all(b == 0) and np.abs(k).max() <= np.sqrt(6 / 7)


def test_default_names_count_up_and_names_can_be_shared():
    x = tf.constant(X)
    tf.layers.dense(x, 2)
    tf.layers.dense(x, 2)
    hidden = tf.layers.dense(x, 2, name="hidden")
    shared = tf.layers.dense(x, 2, name="hidden", reuse=True)
    names = [v.name for v in tf.global_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
                     "hidden/kernel:0", "hidden/bias:0"]
    a, b = _run(hidden, shared)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="Variable hidden/kernel already exists"):
        tf.layers.dense(x, 2, name="hidden")


def test_dense_inside_a_variable_scope_and_with_options():
    x = tf.constant(X)
    with tf.variable_scope("net"):
        y = tf.layers.dense(x, 3, use_bias=False, kernel_initializer=tf.ones_initializer(),
                            trainable=False)
    assert [v.name for v in tf.global_variables()] == ["net/dense/kernel:0"]
    assert tf.trainable_variables() == []
    (out,) = _run(y)
    np.testing.assert_allclose(out, np.repeat(X.sum(axis=1, keepdims=True), 3, axis=1),
                               rtol=1e-6)


def test_dense_on_rank_3_inputs():
    x = tf.placeholder(tf.float32, [None, 2, 3])
    y = tf.layers.dense(x, 5, bias_initializer=tf.constant_initializer(1.0))
    assert y.shape.as_list() == [None, 2, 5]
    data = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    out, kernel = _run(y, tf.trainable_variables()[0], feed={x: data})
    np.testing.assert_allclose(out, data @ kernel + 1.0, rtol=1e-5)


def test_dense_errors():
    with pytest.raises(ValueError, match="The last dimension of the inputs to a Dense layer "
                                         "should be defined. Found None."):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.constant([1.0, 2.0]), 2)


def test_dense_gradients_reach_both_variables():
    x = tf.constant(X)
    loss = tf.reduce_sum(tf.layers.dense(x, 2, activation=tf.tanh))
    grads = tf.gradients(loss, tf.trainable_variables())
    kernel_grad, bias_grad = _run(*grads)
    assert kernel_grad.shape == (3, 2) and bias_grad.shape == (2,)


def test_dropout_and_flatten_layers():
    x = tf.constant(np.ones((4, 2, 3), np.float32))
    flat = tf.layers.flatten(x)
    assert flat.shape.as_list() == [4, 6]
    off = tf.layers.dropout(flat, rate=0.5)
    on = tf.layers.dropout(flat, rate=0.5, training=True, seed=1)
    a, b, c = _run(flat, off, on)
    assert a.shape == (4, 6) and np.all(b == 1.0)
    assert set(np.unique(c).tolist()) <= {0.0, 2.0}


def test_dropout_without_a_training_flag_passes_its_input_through():
    x = tf.constant(np.ones((2, 3), np.float32))
    out, = _run(tf.layers.dropout(x, rate=0.9, training=None))
    assert np.all(out == 1.0)


def test_batch_normalization_names_what_dtfnb_does_not_build():
    images = tf.constant(np.ones((2, 2, 2, 3), np.float32))
    with pytest.raises(NotImplementedError, match=r"FusedBatchNormV3.*fused=False"):
        tf.layers.batch_normalization(images)
    with pytest.raises(NotImplementedError, match="does not support renorm"):
        tf.layers.batch_normalization(tf.constant(X), renorm=True)
