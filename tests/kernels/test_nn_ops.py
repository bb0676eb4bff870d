"""tf.nn ops: values against numpy, gradients against finite differences, TensorFlow's errors."""

import numpy as np
import pytest

import dtfnb as tf
from tests.kernels.gradient_check import check_op

RNG = np.random.default_rng(42)


def _away_from(x, points, margin=0.05):
    """Moves values that sit near a kink (where finite differences are meaningless)."""
    x = np.array(x)
    for p in points:
        near = np.abs(x - p) < margin
        x[near] = p + margin * 2 * np.where(x[near] >= p, 1, -1)
    return x


X = _away_from(RNG.standard_normal((3, 4)) * 3, [0.0, 6.0])


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax(x, axis=-1):
    return np.exp(_log_softmax(x, axis))


SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772

ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (tf.nn.elu, lambda x: np.where(x < 0, np.expm1(x), x)),
    "selu": (tf.nn.selu, lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * np.expm1(x), x)),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, np.float32(0.2) * x)),
    "sigmoid": (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (tf.tanh, np.tanh),
    "nn.sigmoid": (tf.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softmax": (tf.nn.softmax, _softmax),
    "log_softmax": (tf.nn.log_softmax, _log_softmax),
    "l2_loss": (tf.nn.l2_loss, lambda x: np.sum(x * x) / 2),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_gradients(name):
    fn, reference = ACTIVATIONS[name]
    check_op(fn, [X], reference, rtol=1e-6)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "softmax", "elu"])
def test_activations_keep_float32(name):
    fn, reference = ACTIVATIONS[name]
    value = check_op(fn, [X.astype(np.float32)], reference, grad=False, rtol=1e-5,
                     atol=1e-6, expect_dtype=tf.float32)
    assert value.dtype == np.float32


def test_relu_of_integers():
    with tf.Session() as sess:
        assert sess.run(tf.nn.relu([-2, 0, 3])).tolist() == [0, 0, 3]


def test_relu_keeps_nan_gives_plus_zero_and_leaves_its_input_alone_at_any_size():
    x = tf.placeholder(tf.float32)
    y = tf.nn.relu(x)
    special = np.float32([np.nan, -0.0, -np.inf, np.inf, -1.5, 2.5])
    with tf.Session() as sess:
        for shape in [(6,), (3, 2), (40, 6), (2, 3)]:   # the same shapes after bigger ones
            fed = np.resize(special, shape)
            kept = fed.copy()
            out = sess.run(y, {x: fed})
            np.testing.assert_array_equal(out, np.maximum(kept, 0))   # as TensorFlow: NaN
            assert not np.signbit(out[out == 0]).any()                 # and +0.0, never -0.0
            np.testing.assert_array_equal(fed, kept)
        transposed = np.resize(special, (3, 4)).T   # not contiguous
        np.testing.assert_array_equal(sess.run(y, {x: transposed}), np.maximum(transposed, 0))
        assert sess.run(y, {x: np.zeros((0, 3), np.float32)}).shape == (0, 3)
        assert sess.run(y, {x: np.float32(-2)}) == 0
        out = sess.run(y, {x: np.resize(special, (40, 6))})
        out[...] = 7   # a fetched value is the caller's to change
        assert sess.run(y, {x: np.float32([-1, -2])}).tolist() == [0, 0]


def test_softmax_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [-1e30, 1e30, 0.0]], np.float32)
    with tf.Session() as sess:
        soft, log_soft, sig = sess.run([tf.nn.softmax(logits), tf.nn.log_softmax(logits),
                                        tf.sigmoid(logits)])
    assert np.all(np.isfinite(soft)) and np.allclose(soft.sum(axis=1), 1)
    np.testing.assert_allclose(log_soft[0], [0.0, -1000.0, -2000.0])
    np.testing.assert_allclose(sig[0], [1.0, 0.5, 0.0])


def test_softmax_along_another_axis():
    x = RNG.standard_normal((3, 4, 2))
    check_op(lambda t: tf.nn.softmax(t, axis=1), [x], lambda v: _softmax(v, axis=1))
    check_op(lambda t: tf.nn.log_softmax(t, dim=0), [x], lambda v: _log_softmax(v, axis=0))


def test_second_derivative_of_sigmoid_and_tanh():
    for fn in (tf.sigmoid, tf.tanh):
        check_op(lambda t, fn=fn: tf.gradients(fn(t), t)[0], [X], None)


def test_softmax_cross_entropy_values_and_gradients():
    logits = RNG.standard_normal((4, 5))
    labels = _softmax(RNG.standard_normal((4, 5)))

    def reference(z, y):
        return -np.sum(y * _log_softmax(z), axis=-1)

    check_op(lambda z, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z),
             [logits, labels], reference)
    check_op(lambda z, y: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
             [logits, labels], reference, wrt=[0])


def test_softmax_cross_entropy_v1_stops_the_label_gradient():
    z = tf.constant(RNG.standard_normal((2, 3)))
    y = tf.constant(_softmax(RNG.standard_normal((2, 3))))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z)
    assert tf.gradients(v1, y) == [None]
    assert tf.gradients(v2, y)[0] is not None


def test_softmax_cross_entropy_along_axis_0():
    logits, labels = RNG.standard_normal((5, 3)), _softmax(RNG.standard_normal((5, 3)), axis=0)
    check_op(lambda z, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z,
                                                                    axis=0),
             [logits, labels], lambda z, y: -np.sum(y * _log_softmax(z, 0), axis=0))


def test_sparse_softmax_cross_entropy_values_and_gradients():
    logits = RNG.standard_normal((4, 5))
    labels = np.array([0, 4, 2, 2], np.int64)
    value = check_op(
        lambda z, y: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z),
        [logits, labels], lambda z, y: -_log_softmax(z)[np.arange(4), y])
    assert value.shape == (4,)


def test_sparse_softmax_cross_entropy_on_rank_3_logits():
    logits = RNG.standard_normal((2, 3, 4))
    labels = np.array([[0, 1, 3], [2, 2, 0]], np.int32)

    def reference(z, y):
        return -np.take_along_axis(_log_softmax(z), y[..., None], -1)[..., 0]

    check_op(lambda z, y: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z),
             [logits, labels], reference)


def test_sparse_softmax_cross_entropy_errors():
    logits = tf.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided for "
                                         "sparse_softmax_cross_entropy_with_logitsReceived: "
                                         "labels=None"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits)
    with pytest.raises(ValueError, match=r"Rank mismatch: Rank of labels \(received 2\) should "
                                         r"equal rank of logits minus 1 \(received 2\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1]], logits=logits)
    with pytest.raises(ValueError, match="Shape mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2], logits=logits)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3], logits=logits)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Received a label value of 3 which is outside the valid "
                                 r"range of \[0, 3\).  Label values: 0 3"):
            sess.run(loss)


def test_sigmoid_cross_entropy():
    logits, labels = RNG.standard_normal((3, 4)) * 4, RNG.uniform(size=(3, 4))

    def reference(x, z):
        return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))

    check_op(lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
             [logits, labels], reference)


def test_bias_add_values_gradients_and_formats():
    x, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(4)
    check_op(tf.nn.bias_add, [x, b], lambda v, c: v + c)
    x_nchw, c = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal(3)
    check_op(lambda v, w: tf.nn.bias_add(v, w, data_format="NCHW"), [x_nchw, c],
             lambda v, w: v + w[:, None, None])


def test_bias_add_shape_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 3"):
        tf.nn.bias_add(tf.zeros([2, 4]), tf.zeros([3]))
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.nn.bias_add(tf.zeros([2, 4]), tf.zeros([1, 4]))
    assert tf.nn.bias_add(tf.zeros([2, 4]), tf.zeros([4])).shape.as_list() == [2, 4]


def test_in_top_k():
    predictions = np.array([[0.1, 0.8, 0.1, 0.0], [0.3, 0.3, 0.2, 0.2], [1.0, 2.0, 3.0, 4.0]],
                           np.float32)
    with tf.Session() as sess:
        top1 = sess.run(tf.nn.in_top_k(predictions, [1, 1, 0], 1))
        top2 = sess.run(tf.nn.in_top_k(predictions, [0, 2, 2], 2))
        out_of_range = sess.run(tf.nn.in_top_k(predictions, [7, -1, 3], 4))
    assert top1.tolist() == [True, True, False]  # ties count as in the top k
    assert top2.tolist() == [True, False, True]
    assert out_of_range.tolist() == [False, False, True]


def test_dropout_keep_prob_and_rate():
    x = np.ones((200, 50), np.float32)
    tf.set_random_seed(3)
    dropped = tf.nn.dropout(x, 0.8)
    by_rate = tf.nn.dropout(x, rate=0.2)
    keep_prob = tf.placeholder(tf.float32)
    fed = tf.nn.dropout(x, keep_prob)
    assert dropped.shape.as_list() == [200, 50]
    with tf.Session() as sess:
        a, b = sess.run([dropped, by_rate])
        c = sess.run(fed, {keep_prob: 0.5})
        full = sess.run(fed, {keep_prob: 1.0})
    for value, keep in ((a, 0.8), (b, 0.8), (c, 0.5)):
        assert set(np.unique(value).tolist()) <= {0.0, np.float32(1 / keep)}
        assert abs((value != 0).mean() - keep) < 0.03
    assert np.all(full == 1.0)
    assert not np.array_equal(a, b)


def test_dropout_gradient_uses_the_same_mask():
    x = tf.constant(np.arange(1, 101, dtype=np.float32))
    y = tf.nn.dropout(x, 0.5, seed=7)
    grad = tf.gradients(tf.reduce_sum(y), x)[0]
    with tf.Session() as sess:
        value, g = sess.run([y, grad])
    np.testing.assert_allclose(g, np.where(value != 0, 2.0, 0.0))


def test_dropout_errors():
    with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in "
                                         r"the range \[0, 1\). Received: rate=1.0"):
        tf.nn.dropout(tf.zeros([2]), 0.0)
    with pytest.raises(ValueError, match="`x.dtype` must be a floating point tensor"):
        tf.nn.dropout(tf.zeros([2], tf.int32), 0.5)
    with pytest.raises(ValueError, match="`rate` must be provided. Received: rate=None"):
        tf.nn.dropout(tf.zeros([2]))
    with pytest.raises(ValueError, match="Cannot specify both 'keep_prob' and 'rate'."):
        tf.nn.dropout(tf.zeros([2]), 0.5, rate=0.5)
    with pytest.raises(ValueError, match="Shape \\(2,\\) must have rank 0"):
        tf.nn.dropout(tf.zeros([2]), rate=tf.constant([0.5, 0.5]))


def test_op_types_and_gradient_ops_match_tensorflow():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    for fn, op_type in ((tf.nn.relu, "Relu"), (tf.sigmoid, "Sigmoid"), (tf.tanh, "Tanh")):
        y = fn(x)
        assert y.op.type == op_type and y.op.name.startswith(op_type)
        assert tf.gradients(y, x)[0].op.type == op_type + "Grad"
    logits = tf.nn.bias_add(x, tf.zeros([3]))
    grad_b = tf.gradients(logits, logits.op.inputs[1])[0]
    assert grad_b.op.type == "BiasAddGrad"
