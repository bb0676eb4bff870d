"""Math ops through a real Session: values against numpy, static shapes, errors, gradients."""

import numpy as np
import pytest

import dtfnb as tf
from tests.kernels.gradient_check import check_op

rng = np.random.default_rng(42)


def rand(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def away_from_zero(*shape):
    values = rand(*shape, low=0.5, high=2.0)
    return values * rng.choice([-1.0, 1.0], shape)


# -- broadcasting binary ops ------------------------------------------------------------

BINARY = {
    "add": (tf.add, np.add, rand, rand),
    "subtract": (tf.subtract, np.subtract, rand, rand),
    "multiply": (tf.multiply, np.multiply, rand, rand),
    "divide": (tf.divide, np.true_divide, rand, away_from_zero),
    "truediv": (tf.truediv, np.true_divide, rand, away_from_zero),
    "realdiv": (tf.realdiv, np.true_divide, rand, away_from_zero),
    "maximum": (tf.maximum, np.maximum, rand, rand),
    "minimum": (tf.minimum, np.minimum, rand, rand),
    "squared_difference": (tf.squared_difference, lambda x, y: (x - y) ** 2, rand, rand),
    "pow": (tf.pow, np.power, lambda *s: rand(*s, low=0.5, high=2.0), rand),
}
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_values_and_gradients(name, shapes, dynamic):
    fn, reference, make_x, make_y = BINARY[name]
    x, y = make_x(*shapes[0]), make_y(*shapes[1])
    check_op(fn, [x, y], reference, dynamic=dynamic)


def test_floormod_gradient_away_from_jumps():
    x = np.array([[0.3, 1.4, -2.2], [5.1, -0.7, 3.3]])
    y = np.array([1.1, 0.9, 2.05])
    check_op(tf.floormod, [x, y], np.mod)


def test_floordiv_floors_and_has_no_gradient():
    x = np.array([7, -7, 6], np.int32)
    y = np.array([2, 2, -4], np.int32)
    check_op(tf.floordiv, [x, y], np.floor_divide, expect_dtype=tf.int32)
    a = tf.constant([7.5, -7.5])
    out = tf.floordiv(a, 2.0)
    assert tf.gradients(out, a) == [None]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), [3.0, -4.0])


def test_integer_division_by_zero_is_an_invalid_argument_error():
    x = tf.placeholder(tf.int32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Integer division by zero"):
        sess.run(x // 0, {x: [1, 2]})


@pytest.mark.parametrize("op", [tf.floordiv, tf.floormod, tf.truncatediv, tf.truncatemod])
def test_integer_division_by_zero_with_nothing_to_divide_is_no_error(op):
    x, y = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    with tf.Session() as sess:   # as TensorFlow: the error comes from a division made
        assert sess.run(op(x, y), {x: np.zeros(0, np.int32), y: 0}).shape == (0,)
        assert sess.run(op(x, y), {x: 5, y: np.zeros(0, np.int32)}).shape == (0,)
        assert sess.run(op(x, y), {x: np.zeros((0, 2), np.int32), y: [0, 1]}).shape == (0, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
            sess.run(op(x, y), {x: [1, 2, 3], y: [0, 1]})


@pytest.mark.parametrize("reduce", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max,
                                    tf.reduce_prod])
def test_a_reduction_of_a_fed_scalar_has_a_gradient(reduce):
    x = tf.placeholder(tf.float32)   # rank unknown until run: the gradient works it out
    grad = tf.gradients(reduce(x * x), x)[0]
    with tf.Session() as sess:
        assert sess.run(grad, {x: 3.0}) == 6.0
        np.testing.assert_allclose(sess.run(grad, {x: [1.0, 2.0]}),
                                   [1.0, 2.0] if reduce is tf.reduce_mean else
                                   [0.0, 4.0] if reduce is tf.reduce_max else
                                   [8.0, 4.0] if reduce is tf.reduce_prod else [2.0, 4.0])


def test_div_is_python2_division():
    with tf.Session() as sess:
        assert sess.run(tf.div(7, 2)) == 3
        assert sess.run(tf.div(7.0, 2.0)) == 3.5


def test_truediv_of_integers_casts_to_float64():
    a = tf.constant([1, 2], tf.int32)
    out = a / 4
    assert out.dtype == tf.float64
    assert out.op.name == "truediv"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), [0.25, 0.5])


# -- unary ops ------------------------------------------------------------------------

UNARY = {
    "negative": (tf.negative, np.negative, rand),
    "abs": (tf.abs, np.abs, away_from_zero),
    "square": (tf.square, np.square, rand),
    "sqrt": (tf.sqrt, np.sqrt, lambda *s: rand(*s, low=0.5, high=3.0)),
    "rsqrt": (tf.rsqrt, lambda x: 1 / np.sqrt(x), lambda *s: rand(*s, low=0.5, high=3.0)),
    "exp": (tf.exp, np.exp, rand),
    "log": (tf.log, np.log, lambda *s: rand(*s, low=0.5, high=3.0)),
    "log1p": (tf.log1p, np.log1p, lambda *s: rand(*s, low=-0.5, high=3.0)),
    "reciprocal": (tf.reciprocal, np.reciprocal, away_from_zero),
    "sin": (tf.sin, np.sin, rand),
    "cos": (tf.cos, np.cos, rand),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op_values_and_gradients(name, dynamic):
    fn, reference, make = UNARY[name]
    check_op(fn, [make(2, 3)], reference, dynamic=dynamic)


@pytest.mark.parametrize("fn,reference", [
    (tf.sign, np.sign), (tf.floor, np.floor), (tf.ceil, np.ceil), (tf.round, np.round)])
def test_piecewise_constant_ops_have_a_zero_gradient_or_none(fn, reference):
    """As TensorFlow's: sign's gradient is zeros, the others' None."""
    x = np.array([-1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 2.7])
    check_op(fn, [x], reference, grad=False)
    t = tf.constant(x)
    (grad,) = tf.gradients(fn(t), t)
    if fn is tf.sign:
        with tf.Session() as sess:
            assert sess.run(grad).tolist() == [0.0] * 7
    else:
        assert grad is None


def test_round_is_half_to_even_and_keeps_integers():
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.round([0.5, 1.5, 2.5, -0.5])),
                                      [0.0, 2.0, 2.0, -0.0])
        assert sess.run(tf.round(tf.constant([3]))).tolist() == [3]


# -- comparisons and logic --------------------------------------------------------------

@pytest.mark.parametrize("fn,reference", [
    (tf.equal, np.equal), (tf.not_equal, np.not_equal), (tf.less, np.less),
    (tf.less_equal, np.less_equal), (tf.greater, np.greater),
    (tf.greater_equal, np.greater_equal)])
def test_comparisons(fn, reference):
    x = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    y = np.array([2.0, 2.0, 2.0])
    check_op(fn, [x, y], reference, grad=False, expect_dtype=tf.bool)
    assert fn(tf.constant(x), tf.constant(y)).shape == (2, 3)


@pytest.mark.parametrize("fn,reference", [
    (tf.logical_and, np.logical_and), (tf.logical_or, np.logical_or),
    (tf.logical_xor, np.logical_xor)])
def test_logical_binary(fn, reference):
    x = np.array([[True, True, False, False]])
    y = np.array([[True], [False]])
    check_op(fn, [x, y], reference, expect_dtype=tf.bool)


def test_logical_not_and_bool_operators():
    a = tf.constant([True, True, False, False])
    b = tf.constant([True, False, True, False])
    with tf.Session() as sess:
        assert sess.run(tf.logical_not(a)).tolist() == [False, False, True, True]
        assert sess.run(a & b).tolist() == [True, False, False, False]
        assert sess.run(a | b).tolist() == [True, True, True, False]
        assert sess.run(a ^ b).tolist() == [False, True, True, False]
        assert sess.run(~a).tolist() == [False, False, True, True]


def test_logical_ops_need_bool():
    with pytest.raises((TypeError, ValueError)):
        tf.logical_and(tf.constant([1]), tf.constant([0]))


# -- operators on Tensor ----------------------------------------------------------------

def test_operators_build_tensorflow_named_ops():
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    ops = {"add": a + 1, "sub": 1 - a, "mul": a * a, "truediv": a / 2, "floordiv": a // 2,
           "mod": a % 3, "pow": a ** 2, "matmul": a @ a, "Neg": -a, "Abs": abs(a),
           "Less": a < 2, "LessEqual": a <= 2, "Greater": a > 2, "GreaterEqual": a >= 2}
    for name, tensor in ops.items():
        assert tensor.op.name == name, (tensor.op.name, name)
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    expected = {"add": x + 1, "sub": 1 - x, "mul": x * x, "truediv": x / 2,
                "floordiv": x // 2, "mod": x % 3, "pow": x ** 2, "matmul": x @ x, "Neg": -x,
                "Abs": abs(x), "Less": x < 2, "LessEqual": x <= 2, "Greater": x > 2,
                "GreaterEqual": x >= 2}
    with tf.Session() as sess:
        values = sess.run(ops)
    for name in ops:
        np.testing.assert_allclose(values[name], expected[name])


def test_converted_operands_are_named_inside_the_op_scope():
    x = tf.constant(1.0, name="x")
    named, default = tf.multiply(x, 3.0, name="y"), tf.multiply(x, 3.0)
    assert (named.op.name, named.op.inputs[1].op.name) == ("y", "y/y")
    assert (default.op.name, default.op.inputs[1].op.name) == ("Mul", "Mul/y")
    assert (x + 2).op.inputs[1].op.name == "add/y"


def test_reflected_operators_and_numpy_left_operand():
    a = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(3 - a), [2.0, 1.0])
        np.testing.assert_allclose(sess.run(2 / a), [2.0, 1.0])
        np.testing.assert_allclose(sess.run(2 ** a), [2.0, 4.0])
        np.testing.assert_allclose(sess.run(np.array([2.0, 3.0], np.float32) * a), [2.0, 6.0])


def test_equality_stays_identity():
    a = tf.constant(1.0)
    assert (a == a) is True
    assert (a == tf.constant(1.0)) is False
    assert len({a, a}) == 1


def test_mixed_dtypes_raise_type_error():
    with pytest.raises(TypeError):
        tf.add(tf.constant(1), tf.constant(1.0))
    with pytest.raises(TypeError):
        tf.constant(1) + 1.5


# -- static shape errors ----------------------------------------------------------------

def test_broadcast_mismatch_is_a_value_error_naming_the_node_and_both_shapes():
    a, b = tf.placeholder(tf.float64, [2, 3], name="a"), tf.placeholder(tf.float64, [2], name="b")
    with pytest.raises(ValueError) as info:
        a + b
    assert str(info.value) == ("Dimensions must be equal, but are 3 and 2 for "
                               "'{{node add}} = AddV2[T=DT_DOUBLE](a, b)' with input shapes: "
                               "[2,3], [2].")


def test_matmul_mismatch_message_summarizes_the_node_with_its_attrs():
    a = tf.placeholder(tf.float32, [2, 3], name="a")
    with pytest.raises(ValueError) as info:
        tf.matmul(a, a)
    assert str(info.value) == (
        "Dimensions must be equal, but are 3 and 2 for '{{node MatMul}} = MatMul[T=DT_FLOAT, "
        "grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](a, a)' with input "
        "shapes: [2,3], [2,3].")


def test_runtime_broadcast_mismatch_is_invalid_argument():
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"Incompatible shapes: \[2,3\] vs. \[2\]"):
        sess.run(a + b, {a: np.ones((2, 3)), b: np.ones(2)})


def test_broadcast_static_shapes():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [4, 1, 1])
    assert (a + b).shape.as_list() == [4, None, 3]
    assert (a + tf.placeholder(tf.float32)).shape.ndims is None


# -- matmul -----------------------------------------------------------------------------

@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul(ta, tb):
    a = rand(3, 2) if ta else rand(2, 3)
    b = rand(4, 3) if tb else rand(3, 4)

    def reference(x, y):
        return (x.T if ta else x) @ (y.T if tb else y)

    out = check_op(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b],
                   reference)
    assert out.shape == (2, 4)


def test_batch_matmul():
    a, b = rand(5, 2, 3), rand(5, 3, 4)
    check_op(lambda x, y: tf.matmul(x, y), [a, b], np.matmul)
    check_op(lambda x, y: tf.matmul(x, y, adjoint_b=True), [a, rand(5, 4, 3)],
             lambda x, y: x @ np.swapaxes(y, -1, -2))


def test_matmul_rank_error():
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.matmul(tf.constant(np.ones((2, 2))), tf.constant(np.ones(2)))


# -- reductions -------------------------------------------------------------------------

REDUCTIONS = {
    "reduce_sum": (tf.reduce_sum, np.sum),
    "reduce_mean": (tf.reduce_mean, np.mean),
    "reduce_max": (tf.reduce_max, np.max),
    "reduce_min": (tf.reduce_min, np.min),
    "reduce_prod": (tf.reduce_prod, np.prod),
}
AXES = [None, 0, 1, -1, [0, 2], [], (1, 2)]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, axis, keepdims, dynamic):
    fn, reference = REDUCTIONS[name]
    # Distinct values away from zero: max/min have no ties, prod's gradient is exact.
    x = rng.permutation(np.linspace(0.5, 1.5, 24)).reshape(2, 3, 4)
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    check_op(lambda t: fn(t, axis, keepdims=keepdims), [x],
             lambda v: reference(v, axis=np_axis, keepdims=keepdims), dynamic=dynamic)


def test_reduction_static_shapes_and_keep_dims_alias():
    x = tf.placeholder(tf.float32, [2, None, 4])
    assert tf.reduce_sum(x, 1).shape.as_list() == [2, 4]
    assert tf.reduce_sum(x, [0, 2], keep_dims=True).shape.as_list() == [1, None, 1]
    assert tf.reduce_mean(x, reduction_indices=[2]).shape.as_list() == [2, None]
    assert tf.reduce_max(x).shape == ()
    assert tf.reduce_sum(x).op.name == "Sum_2"  # the third Sum in this graph


def test_reduce_max_ties_share_the_gradient():
    x = tf.constant([[1.0, 3.0, 3.0]])
    (g,) = tf.gradients(tf.reduce_max(x), x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g), [[0.0, 0.5, 0.5]])


def test_integer_mean_truncates():
    with tf.Session() as sess:
        assert sess.run(tf.reduce_mean(tf.constant([1, 2]))) == 1


def test_reduce_any_all():
    x = np.array([[True, False], [True, True]])
    check_op(lambda t: tf.reduce_any(t, 1), [x], lambda v: np.any(v, 1))
    check_op(lambda t: tf.reduce_all(t, 0, keepdims=True), [x],
             lambda v: np.all(v, 0, keepdims=True))
    with pytest.raises(TypeError):
        tf.reduce_all(tf.constant([1.0]))


def test_bad_reduction_axis():
    with pytest.raises(ValueError):
        tf.reduce_sum(tf.constant(np.ones((2, 3))), 2)
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Invalid reduction dimension"):
        sess.run(tf.reduce_sum(x, 3), {x: np.ones((2, 3))})


@pytest.mark.parametrize("fn,reference", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
def test_argmax_argmin(fn, reference):
    x = rng.permutation(12).reshape(3, 4).astype(np.float64)
    out = check_op(lambda t: fn(t, 1), [x], lambda v: reference(v, 1), grad=False,
                   expect_dtype=tf.int64)
    assert out.dtype == np.int64
    t = tf.constant(x)
    assert fn(t, 0, output_type=tf.int32).dtype == tf.int32
    assert fn(t, dimension=0).shape == (4,)
    assert tf.gradients(fn(t, 0), t) == [None]


# -- casts and add_n --------------------------------------------------------------------

def test_casts():
    x = np.array([1.7, -1.7, 0.0])
    check_op(lambda t: tf.cast(t, tf.int32), [x], lambda v: v.astype(np.int32), grad=False,
             expect_dtype=tf.int32)
    a = tf.constant(x)
    as_float = tf.to_float(a)
    assert as_float.dtype == tf.float32 and as_float.op.name == "ToFloat"
    assert tf.to_int32(a).dtype == tf.int32 and tf.to_int64(a).dtype == tf.int64
    assert tf.cast(a, tf.float64) is a
    with tf.Session() as sess:
        assert sess.run(tf.cast(tf.constant([True, False]), tf.float32)).tolist() == [1.0, 0.0]


def test_cast_gradient_flows_between_floats_only():
    x = tf.constant([1.0, 2.0], tf.float64)
    (g,) = tf.gradients(tf.reduce_sum(tf.cast(x, tf.float32) * 3.0), x)
    assert g.dtype == tf.float64
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g), [3.0, 3.0])
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]


def test_add_n():
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    check_op(lambda x, y, z: tf.add_n([x, y, z]), [a, b, c], lambda x, y, z: x + y + z)
    with pytest.raises(ValueError):
        tf.add_n([])
    with pytest.raises(ValueError):
        tf.add_n([tf.constant(np.ones((2, 3))), tf.constant(np.ones((3, 2)))])


# -- range -----------------------------------------------------------------------------

def test_range():
    with tf.Session() as sess:
        assert sess.run(tf.range(5)).tolist() == [0, 1, 2, 3, 4]
        assert sess.run(tf.range(1, 10, 3)).tolist() == [1, 4, 7]
        assert sess.run(tf.range(5, 0, -2)).tolist() == [5, 3, 1]
        np.testing.assert_allclose(sess.run(tf.range(0.0, 1.0, 0.25)), [0, 0.25, 0.5, 0.75])
        n = tf.placeholder(tf.int32, [])
        r = tf.range(n)
        assert r.shape.as_list() == [None]
        assert sess.run(r, {n: 3}).tolist() == [0, 1, 2]
    with tf.Graph().as_default():
        r = tf.range(5)
        assert r.shape == (5,) and r.dtype == tf.int32 and r.op.name == "range"
        assert tf.range(0.0, 1.0, 0.25).dtype == tf.float32


# -- clipping ------------------------------------------------------------------------------

def test_clip_by_value():
    x = np.array([[-2.0, -0.4, 0.3], [0.9, 1.6, 2.5]])
    check_op(lambda t: tf.clip_by_value(t, -1.0, 1.0), [x], lambda v: np.clip(v, -1, 1))


@pytest.mark.parametrize("axes", [None, [1]], ids=str)
def test_clip_by_norm(axes):
    x = rand(2, 3)

    def reference(v):
        norm = np.sqrt(np.sum(v * v, axis=None if axes is None else tuple(axes),
                              keepdims=True))
        return v * 1.0 / np.maximum(norm, 1.0)

    check_op(lambda t: tf.clip_by_norm(t, 1.0, axes=axes), [x], reference)
    assert tf.clip_by_norm(tf.constant(x), 1.0).op.name == "clip_by_norm"


def test_clip_by_norm_of_zero_has_finite_gradient():
    x = tf.constant([0.0, 0.0])
    (g,) = tf.gradients(tf.clip_by_norm(x, 1.0), x)
    with tf.Session() as sess:
        assert np.all(np.isfinite(sess.run(g)))


def test_global_norm_and_clip_by_global_norm():
    a, b = rand(2, 3), rand(4)
    norm = np.sqrt(np.sum(a * a) + np.sum(b * b))
    check_op(lambda x, y: tf.global_norm([x, y]), [a, b], lambda x, y: norm)
    check_op(lambda x, y: tf.clip_by_global_norm([x, y], 1.0)[0][0], [a, b],
             lambda x, y: x / max(norm, 1.0))
    clipped, use_norm = tf.clip_by_global_norm([tf.constant(a), None, tf.constant(b)], 100.0)
    assert clipped[1] is None
    with tf.Session() as sess:
        values, n = sess.run([[clipped[0], clipped[2]], use_norm])
    np.testing.assert_allclose(n, norm)
    np.testing.assert_allclose(values[0], a)  # under the limit: unchanged
    with pytest.raises(TypeError):
        tf.clip_by_global_norm(tf.constant(a), 1.0)


def test_float_errors_give_inf_and_nan_without_a_warning():
    import warnings

    x = tf.placeholder(tf.float32)
    outs = [x / 0.0, tf.log(x * 0.0), (x * 0.0) / 0.0, tf.exp(x * 1e6),
            tf.reduce_sum(tf.fill([3], x * 3e38))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings would fail the run
        with tf.Session() as sess:
            inf, minus_inf, nan, overflow, total = sess.run(outs, {x: 1.0})
    assert (inf, minus_inf, overflow, total) == (np.inf, -np.inf, np.inf, np.inf)
    assert np.isnan(nan)


def test_div_no_nan_is_zero_where_the_divisor_is():
    x, y = rand(3, 2), np.array([[0.5, -1.5], [0.0, 2.0], [1.0, 0.75]])
    check_op(tf.div_no_nan, [x, y], lambda x, y: np.where(y == 0, 0.0, x / np.where(y, y, 1)),
             wrt=[0])
