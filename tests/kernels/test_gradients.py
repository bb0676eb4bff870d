"""tf.gradients: what it returns, how it names its ops, and the odd cases."""

import warnings

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.framework.registry import define_op
from dtfnb.ops.building import make_tensor
from tests.kernels.gradient_check import check_op


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_linear_model_gradients_and_names():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    W = tf.Variable(np.ones((3, 2), np.float32), name="W")
    b = tf.Variable(np.zeros(2, np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, W) + b - 1.0))
    gW, gb, gx = tf.gradients(loss, [W, b, x])
    assert gW.name == "gradients/MatMul_grad/MatMul_1:0"
    assert gx.name == "gradients/MatMul_grad/MatMul:0"
    assert gb.op.name.startswith("gradients/add_grad/")
    assert (gW.shape, gb.shape, gx.shape) == ((3, 2), (2,), (2, 3))
    X = np.arange(6, dtype=np.float32).reshape(2, 3)
    values = run([gW, gb, gx], {x: X})
    dy = 2 * (X @ np.ones((3, 2)) - 1) / 4
    np.testing.assert_allclose(values[0], X.T @ dy)
    np.testing.assert_allclose(values[1], dy.sum(0))
    np.testing.assert_allclose(values[2], dy @ np.ones((2, 3)))


def test_second_call_uses_a_new_scope_and_custom_name():
    x = tf.constant(2.0)
    y = x * x
    assert tf.gradients(y, x)[0].op.name.startswith("gradients/")
    assert tf.gradients(y, x)[0].op.name.startswith("gradients_1/")
    assert tf.gradients(y, x, name="my_grads")[0].op.name.startswith("my_grads/")


def test_default_grad_ys_are_ones_and_given_grad_ys_scale():
    x = tf.constant([1.0, 2.0])
    y = x * 3.0
    (g,) = tf.gradients(y, x)
    (g2,) = tf.gradients(y, x, grad_ys=tf.constant([10.0, 100.0]))
    (g3,) = tf.gradients([y], [x], grad_ys=[[1.0, -1.0]])
    np.testing.assert_allclose(run(g), [3.0, 3.0])
    np.testing.assert_allclose(run(g2), [30.0, 300.0])
    np.testing.assert_allclose(run(g3), [3.0, -3.0])
    graph = tf.get_default_graph()
    # as TensorFlow's tf.ones: a Fill named grad_ys_0 of a Const one in its scope
    assert graph.get_operation_by_name("gradients/grad_ys_0").type == "Fill"
    assert graph.get_operation_by_name("gradients/grad_ys_0/Const").type == "Const"
    with pytest.raises(ValueError):
        tf.gradients([y], [x], grad_ys=[None, None])


def test_unconnected_xs_get_none():
    x, z = tf.constant(1.0), tf.constant(2.0)
    y = x * 2.0
    assert tf.gradients(y, [x, z])[1] is None
    assert tf.gradients(y, z) == [None]


def test_multiple_ys_sum():
    x = tf.constant(3.0)
    (g,) = tf.gradients([x * x, 2.0 * x], x)
    assert run(g) == pytest.approx(8.0)


def test_paths_that_meet_are_summed_with_add_n():
    x = tf.constant(2.0)
    a = x * 3.0
    b = tf.square(x)
    c = tf.exp(x)
    (g,) = tf.gradients(a + b + c, x)
    assert g.op.type == "AddN" and len(g.op.inputs) == 3
    assert g.op.name.startswith("gradients/AddN")
    assert run(g) == pytest.approx(3.0 + 4.0 + np.exp(2.0), rel=1e-6)


def test_gradient_with_respect_to_itself_and_to_an_intermediate():
    x = tf.constant([1.0, 2.0])
    h = x * x
    y = tf.reduce_sum(h * 3.0)
    gy, gh, gx = tf.gradients(y, [y, h, x])
    assert run(gy) == 1.0
    np.testing.assert_allclose(run(gh), [3.0, 3.0])
    np.testing.assert_allclose(run(gx), [6.0, 12.0])


def test_stop_gradient_op_and_stop_gradients_argument():
    x = tf.constant(2.0)
    y = x * x
    z = tf.stop_gradient(y) * x + y
    (g,) = tf.gradients(z, x)
    assert run(g) == pytest.approx(4.0 + 4.0)  # d/dx [c*x + x^2] with c = 4
    (g2,) = tf.gradients(y * x, x, stop_gradients=[y])
    assert run(g2) == pytest.approx(4.0)
    assert tf.gradients(tf.stop_gradient(x), x) == [None]


def test_variable_and_its_ref_and_read_give_the_same_gradient():
    v = tf.Variable([1.0, 2.0], name="v")
    y = tf.reduce_sum(v * v) + tf.reduce_sum(v.read_value())
    g_var, g_ref = tf.gradients(y, [v, v._variable])
    (g_read,) = tf.gradients(tf.reduce_sum(v * v), v.value())
    values = run([g_var, g_ref, g_read])
    np.testing.assert_allclose(values[0], [3.0, 5.0])
    np.testing.assert_allclose(values[1], [3.0, 5.0])
    np.testing.assert_allclose(values[2], [2.0, 4.0])
    assert g_var.dtype == tf.float32  # not a ref type


def test_non_differentiable_ops_give_none_and_integer_paths_stop():
    x = tf.constant([1.0, 2.0])
    assert tf.gradients(tf.argmax(x, 0), x) == [None]
    assert tf.gradients(tf.to_float(tf.equal(x, 1.0)), x) == [None]
    assert tf.gradients(tf.cast(tf.shape(x), tf.float32), x) == [None]


def test_op_without_gradient_raises_lookup_error():
    define_op("DtfnbTestNoGradient", lambda op: [op.inputs[0].shape])
    x = tf.constant([1.0])
    y = make_tensor("DtfnbTestNoGradient", [x], tf.float32, name="custom")
    with pytest.raises(LookupError, match=r"No gradient defined for operation'custom' "
                                          r"\(op type: DtfnbTestNoGradient\)\. In general"):
        tf.gradients(y * 2.0, x)


def test_unused_outputs_of_multi_output_ops_get_zeros():
    x = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    first, _second = tf.split(x, 2, axis=1)
    (g,) = tf.gradients(first * 5.0, x)
    np.testing.assert_allclose(run(g), [[5.0, 5.0, 0.0, 0.0]])
    parts = tf.unstack(tf.constant([1.0, 2.0, 3.0]))
    src = parts[0].op.inputs[0]
    (g,) = tf.gradients(parts[1], src)
    np.testing.assert_allclose(run(g), [0.0, 1.0, 0.0])


def test_colocate_and_gate_gradients():
    with tf.device("/cpu:0"):
        x = tf.constant([1.0, 2.0])
        y = x * x
    (g,) = tf.gradients(tf.reduce_sum(y), x, colocate_gradients_with_ops=True,
                        gate_gradients=True)
    assert g.device == "/device:CPU:0"
    np.testing.assert_allclose(run(g), [2.0, 4.0])


def test_graphs_must_match():
    x = tf.constant(1.0)
    with tf.Graph().as_default():
        y = tf.constant(2.0) * 2.0
    with pytest.raises(ValueError):
        tf.gradients(y, x)


def test_deep_chain_does_not_hit_the_recursion_limit():
    x = tf.constant(1.0)
    y = x
    for _ in range(1500):
        y = y * 1.0
    (g,) = tf.gradients(y, x)
    assert run(g) == 1.0


def test_dynamic_shapes_broadcast_reduction():
    x = tf.placeholder(tf.float64, [None, None])
    b = tf.placeholder(tf.float64, [None])
    y = tf.reduce_sum((x + b) * 2.0)
    gx, gb = tf.gradients(y, [x, b])
    X, B = np.ones((3, 4)), np.ones(4)
    values = run([gx, gb], {x: X, b: B})
    np.testing.assert_allclose(values[0], 2 * np.ones((3, 4)))
    np.testing.assert_allclose(values[1], 6 * np.ones(4))


@pytest.mark.parametrize("op", [tf.add, tf.subtract, tf.multiply])
@pytest.mark.parametrize("static_shapes, shapes, settled", [
    ([[None, 3], [3]], [(4, 3), (3,)], True),             # a bias: one Sum, no Reshape
    ([[None, 1], [3]], [(4, 1), (3,)], True),             # a stretched 1 kept as a 1
    ([[2, 1, None], [None, 1]], [(2, 1, 4), (3, 1)], True),
    ([[None, 1], [3]], [(1, 1), (3,)], True),             # the unknown dim is a 1 after all
    ([[None, 1], [None, 3]], [(4, 1), (4, 3)], False),    # might x's None be a stretched 1?
    ([[1, None], [5, None]], [(1, 2), (5, 2)], False),
])
def test_broadcast_gradients_take_their_axes_from_partly_known_shapes(op, static_shapes,
                                                                      shapes, settled):
    rng = np.random.default_rng(0)
    check_op(op, [rng.standard_normal(s) for s in shapes], shapes=static_shapes)
    with tf.Graph().as_default() as graph:
        x, y = (tf.placeholder(tf.float64, s) for s in static_shapes)
        tf.gradients(op(x, y), [x, y])
    dynamic = any(o.type == "BroadcastGradientArgs" for o in graph.get_operations())
    assert dynamic != settled


@pytest.mark.parametrize("static_shape, shape, axis", [
    ([None], (5,), None),                    # a loss's mean: the count from Size alone
    ([None, 3], (4, 3), 0),
    ([None, None], (4, 3), 1),               # the kept shape needs the dynamic Shape
    ([2, None], (2, 3), None),
])
def test_mean_and_sum_gradients_over_partly_known_shapes(static_shape, shape, axis):
    x = np.random.default_rng(1).standard_normal(shape)
    for reduce in (tf.reduce_mean, tf.reduce_sum):
        for keepdims in (False, True):
            check_op(lambda t, reduce=reduce, keepdims=keepdims: reduce(t, axis, keepdims),
                     [x], shapes=[static_shape])


def test_composite_expression_gradient_check():
    def build(x, w):
        h = tf.sin(tf.matmul(x, w))
        return tf.reduce_mean(tf.square(h[:, 1:] - tf.reduce_max(h, 1, keepdims=True)), 0)

    rng = np.random.default_rng(1)
    check_op(build, [rng.standard_normal((4, 3)), rng.standard_normal((3, 5))])
    check_op(build, [rng.standard_normal((4, 3)), rng.standard_normal((3, 5))], dynamic=True)


def test_a_gather_gradient_is_sparse_and_warns_only_when_made_dense_and_large():
    small = tf.Variable(np.ones((4, 2), np.float32), name="small")
    grad = tf.gradients(tf.reduce_sum(tf.gather(small, [3, 1, 3])), small,
                        gate_gradients=True)[0]
    assert isinstance(grad, tf.IndexedSlices)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, dense = run([grad, tf.convert_to_tensor(grad)])
    assert (value.indices.tolist(), value.values.tolist()) == ([3, 1, 3], [[1.0, 1.0]] * 3)
    np.testing.assert_array_equal(dense, [[0, 0], [1, 1], [0, 0], [2, 2]])
    huge = tf.Variable(tf.zeros([10001, 10000]), name="huge")  # built, never run
    huge_grad = tf.gradients(tf.reduce_sum(tf.gather(huge, [0])), huge)[0]
    with pytest.warns(UserWarning, match="Converting sparse IndexedSlices to a dense Tensor "
                                         "with 100010000 elements"):
        tf.convert_to_tensor(huge_grad)
