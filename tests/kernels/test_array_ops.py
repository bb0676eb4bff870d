"""Array ops through a real Session: values against numpy, static shapes, errors, gradients."""

import numpy as np
import pytest

import dtfnb as tf
from tests.kernels.gradient_check import check_op

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


# -- shape, size, rank ----------------------------------------------------------------

def test_shape_size_rank_static_and_dynamic():
    a = tf.constant(np.ones((2, 3)))
    assert tf.shape(a).op.type == "Const"  # TensorFlow 1 folds a static shape
    p = tf.placeholder(tf.float32, [None, 3])
    s, n, r = tf.shape(p), tf.size(p), tf.rank(tf.placeholder(tf.float32))
    assert (s.op.type, n.op.type, r.op.type) == ("Shape", "Size", "Rank")
    assert s.shape == (2,) and s.dtype == tf.int32
    assert tf.shape(p, out_type=tf.int64).dtype == tf.int64
    feed = {p: np.ones((4, 3))}
    values = run([s, n], feed)
    assert values[0].tolist() == [4, 3] and values[1] == 12
    with tf.Session() as sess:
        assert sess.run(r, {r.op.inputs[0]: np.ones((1, 2, 3))}) == 3


# -- reshape, expand_dims, squeeze, transpose -------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("shape", [[6], [3, -1], [-1, 1, 2], [1, 6]], ids=str)
def test_reshape(shape, dynamic):
    check_op(lambda t: tf.reshape(t, shape), [rand(2, 3)], lambda v: v.reshape(shape),
             dynamic=dynamic)


def test_reshape_static_shape_inference():
    p = tf.placeholder(tf.float32, [None, 4])
    assert tf.reshape(p, [-1, 2]).shape.as_list() == [None, 2]
    assert tf.reshape(tf.constant(np.ones((2, 4))), [-1, 2]).shape.as_list() == [4, 2]
    assert tf.reshape(p, tf.shape(p)).shape.as_list() == [None, 4]
    assert tf.reshape(p, tf.stack([tf.shape(p)[0], 2, 2])).shape.as_list() == [None, 2, 2]


def test_reshape_errors():
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 6 elements to shape "
                                         r"\[4\] \(4 elements\) for '\{\{node Reshape\}\} = "
                                         r"Reshape\[T=DT_DOUBLE, Tshape=DT_INT32\]"):
        tf.reshape(tf.constant(np.ones((2, 3))), [4])
    both = tf.reshape(tf.constant(np.ones(6)), [-1, -1])   # left to run time, as TF does
    assert both.shape.as_list() == [None, None]
    p = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(
            tf.errors.InvalidArgumentError,
            match="Input to reshape is a tensor with 6 values, but the requested shape has 4"):
        sess.run(tf.reshape(p, [4]), {p: np.ones((2, 3))})
    with tf.Session() as sess, pytest.raises(
            tf.errors.InvalidArgumentError,
            match="Only one input size may be -1, not both 0 and 1"):
        sess.run(both)


def test_expand_dims_and_squeeze():
    x = rand(2, 3)
    check_op(lambda t: tf.expand_dims(t, 1), [x], lambda v: np.expand_dims(v, 1))
    check_op(lambda t: tf.expand_dims(t, -1), [x], lambda v: v[..., None], dynamic=True)
    y = rand(1, 3, 1)
    check_op(tf.squeeze, [y], np.squeeze)
    check_op(lambda t: tf.squeeze(t, [2]), [y], lambda v: np.squeeze(v, 2), dynamic=True)
    assert tf.squeeze(tf.constant(y), axis=0).shape == (3, 1)
    with pytest.raises(ValueError, match="Can not squeeze dim"):
        tf.squeeze(tf.constant(y), [1])


@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1]], ids=str)
def test_transpose(perm):
    check_op(lambda t: tf.transpose(t, perm), [rand(2, 3, 4)],
             lambda v: np.transpose(v, perm))
    check_op(lambda t: tf.transpose(t, perm), [rand(2, 3, 4)],
             lambda v: np.transpose(v, perm), dynamic=True)
    assert tf.transpose(tf.constant(rand(2, 3))).op.name == "transpose"


def test_invert_permutation():
    assert run(tf.invert_permutation([2, 0, 1])).tolist() == [1, 2, 0]


# -- stack, unstack, concat, split -------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_and_unstack(axis):
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    check_op(lambda x, y, z: tf.stack([x, y, z], axis), [a, b, c],
             lambda x, y, z: np.stack([x, y, z], axis))
    for i in range(2):
        check_op(lambda x, i=i: tf.unstack(x, axis=0)[i], [a], lambda x, i=i: x[i])
    assert len(tf.unstack(tf.constant(a), axis=1)) == 3
    with pytest.raises(ValueError):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))


def test_stack_shape_error_and_python_values():
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tf.stack([tf.constant([1.0]), tf.constant(1.0)])
    assert tf.stack([1, 2]).op.type == "Const"
    assert run(tf.stack([tf.constant(1.0), 2.0])).tolist() == [1.0, 2.0]


def test_stack_checks_shapes_at_run_time_and_stacks_strings():
    x, y = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"values\[0\]\.shape = \[2\] != values\[1\]\.shape = \[3\]"):
            sess.run(tf.stack([x, y]), {x: [1, 2], y: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"values\[1\]\.shape = \[\]"):
            sess.run(tf.stack([x, y]), {x: [1], y: 1})
        words = tf.placeholder(tf.string)
        assert sess.run(tf.stack([words, words]), {words: [b"a", b"bc"]}).tolist() == [
            [b"a", b"bc"], [b"a", b"bc"]]


def _objects(*values):
    array = np.empty(len(values), object)
    array[:] = values
    return array


@pytest.mark.parametrize("rows", [
    [np.float32(1.0), np.asarray(2.0, np.float32)],
    [np.ones(3, np.float32), np.arange(3)],                 # promoted, as np.stack does
    [np.ones((2, 2), np.int8)] * 128,
    [np.ones(2), _objects(b"a", b"bc")],                    # objects: np.stack's way
    [_objects([1, 2], [3]), _objects([4], [5, 6])],         # np.array would look inside
])
def test_batch_stacking_gives_what_np_stack_gives(rows):
    from dtfnb.base.stacking import stack

    got, want = stack(rows), np.stack(rows)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


def test_batch_stacking_of_ragged_rows_fails_as_np_stack_does():
    from dtfnb.base.stacking import stack

    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        stack([np.ones(2), np.ones(3)])


def test_autopacking_conversion():
    t = tf.constant(1.5)
    packed = tf.convert_to_tensor([t, 2.0])
    assert packed.op.type == "Pack" and packed.dtype == tf.float32
    nested = tf.convert_to_tensor([[t, 1.0], [2.0, 3.0]])
    assert nested.shape == (2, 2)
    assert run(nested).tolist() == [[1.5, 1.0], [2.0, 3.0]]
    assert tf.convert_to_tensor([1.0, 2.0]).op.type == "Const"
    v = tf.Variable(3.0)
    assert run(tf.convert_to_tensor([v, t])).tolist() == [3.0, 1.5]
    with pytest.raises(TypeError):
        tf.convert_to_tensor([t, 1.0], dtype=tf.int32)
    assert run(tf.reshape(tf.constant(np.ones(4)), [tf.constant(2), 2])).shape == (2, 2)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    a, b = rand(2, 3), rand(2, 3)
    check_op(lambda x, y: tf.concat([x, y], axis), [a, b],
             lambda x, y: np.concatenate([x, y], axis))
    check_op(lambda x, y: tf.concat([x, y], axis), [a, b],
             lambda x, y: np.concatenate([x, y], axis), dynamic=True)


def test_concat_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.concat([p, tf.ones([2, 3])], 0).shape.as_list() == [None, 3]
    assert tf.concat([tf.ones([1, 3]), tf.ones([2, 3])], 0).shape == (3, 3)
    # TensorFlow merges the dims after the axis ([3] and [2]): its dim 0 differs.
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are "
                                         r"3 and 2\. Shapes are \[3\] and \[2\]"):
        tf.concat([tf.ones([2, 3]), tf.ones([2, 2])], 0)
    q = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="ConcatOp : Dimensions of inputs"):
        sess.run(tf.concat([q, tf.ones([1, 3])], 0), {q: np.ones((2, 2))})


def test_split():
    x = rand(4, 6)
    for i in range(3):
        check_op(lambda t, i=i: tf.split(t, 3, axis=1)[i], [x],
                 lambda v, i=i: np.split(v, 3, 1)[i])
    for i, (lo, hi) in enumerate([(0, 1), (1, 4), (4, 6)]):
        check_op(lambda t, i=i: tf.split(t, [1, 3, -1], axis=1)[i], [x],
                 lambda v, lo=lo, hi=hi: v[:, lo:hi])
    parts = tf.split(tf.constant(x), [1, 3, 2], 1)
    assert [p.shape.as_list() for p in parts] == [[4, 1], [4, 3], [4, 2]]
    with pytest.raises(ValueError, match="evenly divisible by 4"):
        tf.split(tf.constant(x), 4, axis=1)


# -- slicing --------------------------------------------------------------------------

def test_slice():
    x = rand(3, 4)
    check_op(lambda t: tf.slice(t, [1, 0], [2, -1]), [x], lambda v: v[1:3, :])
    check_op(lambda t: tf.slice(t, [0, 1], [3, 2]), [x], lambda v: v[:, 1:3], dynamic=True)
    assert tf.slice(tf.constant(x), [1, 1], [-1, 2]).shape == (2, 2)
    p = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"Expected size\[0\] in \[0, 1\]"):
        sess.run(tf.slice(p, [2], [3]), {p: np.ones(3)})


SPECS = [
    (1,), (-1,), (slice(None),), (slice(1, None),), (slice(None, None, -1),),
    (slice(None), 2), (Ellipsis, 1), (None, 0), (slice(0, 2), None, slice(None, None, 2)),
    (1, Ellipsis, None), (slice(-2, None), -1), (slice(3, 0, -2), slice(1, 3)),
    (Ellipsis,), (slice(None), slice(None), 0),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_getitem_matches_numpy(spec, dynamic):
    x = rand(4, 3, 2)
    out = check_op(lambda t: t[spec], [x], lambda v: v[spec], dynamic=dynamic)
    if not dynamic:
        assert tf.constant(x)[spec].shape == np.shape(out)


def test_getitem_names_tensor_indices_and_errors():
    x = tf.constant(rand(4, 3))
    assert x[0].op.name == "strided_slice" and x[0].op.type == "StridedSlice"
    i = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        value = sess.run(x[i], {i: 2})
        np.testing.assert_allclose(value, sess.run(x)[2])
        np.testing.assert_allclose(sess.run(x[i:i + 2, 1], {i: 1}), sess.run(x)[1:3, 1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
            sess.run(x[i], {i: 7})
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        x[5]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[[0, 1]]
    with pytest.raises(TypeError):
        x[0.5]
    with pytest.raises(TypeError, match="Iterating over a symbolic `tf.Tensor` is not allowed"):
        list(tf.constant(np.arange(3.0)))  # as TensorFlow 2.21's graph mode, whatever the shape


def test_strided_slice_with_masks():
    x = np.arange(24.0).reshape(2, 3, 4)
    t = tf.strided_slice(tf.constant(x), [0, 1], [2, 3], [1, 1], end_mask=1,
                         shrink_axis_mask=2)
    np.testing.assert_allclose(run(t), x[:, 1])
    assert t.shape == (2, 4)


# -- gather, segment sums, where, boolean_mask -------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_gather(dynamic):
    x = rand(4, 3)
    idx = np.array([[3, 0], [1, 3]], np.int32)
    check_op(lambda t, i: tf.gather(t, i), [x, idx], lambda v, i: v[i], dynamic=dynamic)
    check_op(lambda t: tf.gather(t, [2, 0, 2], axis=1), [x], lambda v: v[:, [2, 0, 2]],
             dynamic=dynamic)
    check_op(lambda t: tf.gather(t, [[1], [0]], axis=1), [rand(2, 3, 2)],
             lambda v: v[:, [[1], [0]]])


def test_gather_index_out_of_range():
    params = tf.constant([1.0, 2.0, 3.0])
    idx = tf.placeholder(tf.int32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"indices\[1\] = 5 is not in \[0, 3\)"):
        sess.run(tf.gather(params, idx), {idx: [0, 5]})


def test_unsorted_segment_sum():
    data = rand(4, 2)
    ids = np.array([0, 2, 0, 1], np.int32)

    def reference(d, i):
        out = np.zeros((3, 2))
        np.add.at(out, i, d)
        return out

    check_op(lambda d, i: tf.unsorted_segment_sum(d, i, 3), [data, ids], reference)


def test_segment_sums_by_sorted_ids():
    data = rand(5, 2)
    ids = np.array([0, 0, 2, 2, 2], np.int32)
    sums = np.stack([data[:2].sum(0), np.zeros(2), data[2:].sum(0)])
    check_op(lambda d: tf.segment_sum(d, ids), [data], lambda d: sums)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be sorted"):
        tf.Session().run(tf.segment_sum(data, [1, 0, 2, 2, 2]))


@pytest.mark.parametrize("reduce,scale", [
    (tf.sparse_segment_sum, lambda n: 1.0), (tf.sparse_segment_mean, lambda n: 1.0 / n),
    (tf.sparse_segment_sqrt_n, lambda n: 1.0 / np.sqrt(n))])
@pytest.mark.parametrize("sparse_gradient", [False, True])
def test_sparse_segment_reductions_of_rows(reduce, scale, sparse_gradient):
    data = rand(4, 3)
    rows, ids = np.array([3, 1, 3], np.int32), np.array([0, 0, 1], np.int32)
    expected = np.stack([(data[3] + data[1]) * scale(2), data[3] * scale(1)])
    check_op(lambda d: reduce(d, rows, ids, sparse_gradient=sparse_gradient), [data],
             lambda d: expected)


def test_where():
    cond = np.array([[True, False], [False, True]])
    out = run(tf.where(cond))
    assert out.tolist() == [[0, 0], [1, 1]] and out.dtype == np.int64
    assert tf.where(cond).shape.as_list() == [None, 2]
    x, y = rand(2, 2), rand(2, 2)
    check_op(lambda c, a, b: tf.where(c, a, b), [cond, x, y], np.where)
    rows = np.array([True, False])
    check_op(lambda c, a, b: tf.where(c, a, b), [rows, x, y],
             lambda c, a, b: np.where(c[:, None], a, b))
    with pytest.raises(ValueError):
        tf.where(tf.constant([True, False, True]), tf.ones([2, 2]), tf.ones([2, 2]))
    with pytest.raises(ValueError):
        tf.where(cond, x)


def test_boolean_mask():
    x = rand(3, 4)
    mask = np.array([[True, False, True, True], [False] * 4, [True, False, False, True]])
    check_op(lambda t: tf.boolean_mask(t, tf.constant(mask)), [x], lambda v: v[mask])
    rows = np.array([True, False, True])
    check_op(lambda t: tf.boolean_mask(t, rows), [x], lambda v: v[rows])
    check_op(lambda t: tf.boolean_mask(t, np.array([True, False, False, True]), axis=1), [x],
             lambda v: v[:, [0, 3]])
    assert tf.boolean_mask(tf.constant(x), rows).shape.as_list() == [None, 4]
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(tf.constant(x), True)


def test_report_uninitialized_variables():
    a = tf.Variable(1.0, name="a")
    tf.Variable([2.0], name="b")
    report = tf.report_uninitialized_variables()
    assert report.op.name.startswith("report_uninitialized_variables/")
    with tf.Session() as sess:
        assert sess.run(report).tolist() == [b"a", b"b"]
        sess.run(a.initializer)
        assert sess.run(report).tolist() == [b"b"]
        sess.run(tf.global_variables_initializer())
        assert sess.run(report).shape == (0,)
    with tf.Graph().as_default():
        assert run(tf.report_uninitialized_variables()).shape == (0,)


# -- tile, pad ----------------------------------------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_tile(dynamic):
    check_op(lambda t: tf.tile(t, [2, 3]), [rand(2, 3)], lambda v: np.tile(v, [2, 3]),
             dynamic=dynamic)
    assert tf.tile(tf.placeholder(tf.float32, [None, 2]), [3, 2]).shape.as_list() == [None, 4]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_pad(dynamic):
    paddings = [[1, 0], [2, 1]]
    check_op(lambda t: tf.pad(t, paddings), [rand(2, 3)], lambda v: np.pad(v, paddings),
             dynamic=dynamic)
    check_op(lambda t: tf.pad(t, paddings, constant_values=7.0), [rand(2, 3)],
             lambda v: np.pad(v, paddings, constant_values=7.0), dynamic=dynamic)
    x = rand(3, 4)
    for mode in ("REFLECT", "SYMMETRIC"):
        out = run(tf.pad(tf.constant(x), paddings, mode=mode))
        np.testing.assert_allclose(out, np.pad(x, paddings, mode=mode.lower()))
    assert tf.pad(tf.constant(x), paddings).shape == (4, 7)


# -- fill, zeros, ones, one_hot, broadcast_to, stop_gradient --------------------------------

def test_fill_zeros_ones():
    check_op(lambda v: tf.fill([2, 3], v), [np.array(1.5)], lambda v: np.full((2, 3), v))
    with tf.Graph().as_default():
        small = tf.zeros([2, 3])
        assert small.op.type == "Const" and small.op.name == "zeros"
    big = tf.ones([100, 100], tf.int32)
    assert big.op.type == "Fill" and big.shape == (100, 100)
    n = tf.placeholder(tf.int32, [])
    z = tf.zeros(tf.stack([n, 2]))
    assert z.shape.as_list() == [None, 2]
    p = tf.placeholder(tf.float32, [None, 2])
    values = run([tf.zeros_like(p), tf.ones_like(p), z, big, tf.ones_like(tf.ones([2]))],
                 {n: 3, p: np.ones((3, 2))})
    assert values[0].tolist() == [[0, 0]] * 3 and values[1].tolist() == [[1, 1]] * 3
    assert values[2].shape == (3, 2) and values[3].sum() == 10000
    assert tf.zeros_like(p).op.type == "ZerosLike"
    assert tf.ones_like(p, dtype=tf.int32).dtype == tf.int32
    assert tf.zeros([2], tf.bool).dtype == tf.bool


def test_int64_dims_and_numpy_scalars_keep_their_dtype():
    n = tf.constant(3, tf.int64)
    filled = tf.fill([n, 2], n)
    assert filled.op.inputs[0].dtype == tf.int64 and filled.dtype == tf.int64
    assert run(filled).tolist() == [[3, 3]] * 3
    assert tf.constant(np.int64(3)).dtype == tf.int64
    assert tf.Variable(np.float64(1.0)).dtype.base_dtype == tf.float64
    assert tf.constant(3).dtype == tf.int32 and tf.constant(1.0).dtype == tf.float32


def test_one_hot():
    idx = np.array([0, 2, -1, 1], np.int32)
    out = check_op(lambda i: tf.one_hot(i, 3), [idx], lambda i: np.eye(3)[i] * (i >= 0)[:, None],
                   expect_dtype=tf.float32)
    assert out.shape == (4, 3)
    t = tf.one_hot(tf.constant(idx), 3, on_value=5, off_value=-1, axis=0)
    assert t.shape == (3, 4) and t.dtype == tf.int32
    assert run(t)[:, 1].tolist() == [-1, -1, 5]


def test_broadcast_to():
    check_op(lambda t: tf.broadcast_to(t, [2, 3, 3]), [rand(3, 1)],
             lambda v: np.broadcast_to(v, (2, 3, 3)))
    with pytest.raises(ValueError):
        tf.broadcast_to(tf.ones([2]), [3])


def test_stop_gradient_and_identity():
    x = rand(2, 2)
    check_op(tf.stop_gradient, [x], lambda v: v, grad=False)
    check_op(tf.identity, [x], lambda v: v)
