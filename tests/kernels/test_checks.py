"""tf.Assert: the op, and its messages as TensorFlow 2.21 writes them."""

import numpy as np
import pytest

import dtfnb as tf


def _failure(check):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(check)
    return info.value


def test_a_true_condition_passes_and_a_false_one_fails_with_its_data():
    x = tf.placeholder(tf.float32, [None])
    check = tf.Assert(tf.reduce_all(x > 0), ["x has a non-positive entry:", x], name="positive")
    # Data not all int32 or strings: as TensorFlow, the op runs in the false branch of a
    # cond, its inputs switched in, and tf.Assert gives the cond's Merge.
    assert (check.name, check.type) == ("positive/AssertGuard/Merge", "Merge")
    op = tf.get_default_graph().get_operation_by_name("positive/AssertGuard/Assert")
    assert [t.op.name for t in op.inputs] == [
        "positive/AssertGuard/Assert/Switch", "positive/AssertGuard/Assert/data_0",
        "positive/AssertGuard/Assert/Switch_1"]
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    with tf.Session() as sess:
        assert sess.run(y, {x: [1.0, 2.0]}).tolist() == [1.0, 2.0]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: [1.5, -2.0, 3.0, 4.0]})
    assert info.value.message.startswith(
        "assertion failed: [x has a non-positive entry:] [1.5 -2 3...]")
    assert info.value.op.name == "positive/AssertGuard/Assert"


def test_with_int32_and_string_data_the_op_stands_alone():
    n = tf.placeholder(tf.int32, [])
    check = tf.Assert(n > 0, ["n is", n], name="positive")
    assert (check.name, check.type) == ("positive/Assert", "Assert")
    assert [t.op.name for t in check.inputs[1:]] == ["positive/Assert/data_0", n.op.name]
    with tf.Session() as sess:
        sess.run(check, {n: 1})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[n is\] \[-1\]"):
            sess.run(check, {n: -1})


@pytest.mark.parametrize("data, summarize, text", [
    ([[1.5, 2.0], [0.1, 1e20]], 3, "[[1.5 2][0.1...]...]"),
    (np.arange(24.0).reshape(2, 3, 4), 7, "[[[0 1 2 3][4 5 6...]]...]"),
    (np.arange(6, dtype=np.uint8).reshape(2, 3), 3, "[[0 1 2]...]"),
    ([True, False], 3, "[1 0]"),
    ([1, 2, 3, 4, 5], -1, "[1 2 3 4 5]"),
    ([1e-7, 123456789.0, float("nan")], 3, "[1e-07 123456792 nan]"),
    (np.float64(0.1), 3, "[0.1]"),
    (np.float16(0.1), 3, "[0.0999755859]"),
    (7, 0, "[...]"),
    (np.zeros([2, 0, 3]), 4, "[]"),
    ([b"a\nb\t\x01\\", b"q'\"", "\u00e9".encode()], 5, "[a\\nb\\t\\001\\\\ q\\'\\\" \u00e9]"),
])
def test_data_is_summarized_as_tensorflow_does(data, summarize, text):
    check = tf.Assert(False, [tf.constant(data)], summarize=summarize)
    assert _failure(check).message.startswith(f"assertion failed: {text}\n")


def test_the_condition_must_be_a_scalar_and_data_is_required():
    assert _failure(tf.Assert([True, False], ["x"])).message.startswith(
        "In[0] should be a scalar: [2]")
    with pytest.raises(ValueError, match="of length 0 less than minimum 1"):
        tf.Assert(True, [])
