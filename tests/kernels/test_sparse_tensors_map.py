"""The SparseTensorsMap resource and its ops: handles counted per map, each taken once,
batches rebuilt a row per SparseTensor, and TensorFlow's errors."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.base.dtypes import float32, int32
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.ops import sparse_ops
from dtfnb.resources.sparse_tensors_map import SparseTensorsMap


def _add(tensors_map, indices, values, shape):
    return tensors_map.add(np.array(indices, np.int64).reshape(len(values), len(shape)),
                           np.array(values, np.float32), np.array(shape, np.int64))


def test_handles_count_up_and_a_take_rebuilds_the_batch():
    tensors_map = SparseTensorsMap("m")
    assert [_add(tensors_map, [[0], [1]], [1, 2], [3]), _add(tensors_map, [[4]], [5], [7])] \
        == [0, 1]
    indices, values, shape = tensors_map.take_many(np.array([1, 0]), float32)
    np.testing.assert_array_equal(indices, [[0, 4], [1, 0], [1, 1]])
    np.testing.assert_array_equal(values, [5, 1, 2])
    np.testing.assert_array_equal(shape, [2, 7])
    assert len(tensors_map) == 0


def test_a_handle_is_taken_once():
    tensors_map = SparseTensorsMap("m")
    handle = _add(tensors_map, [[0]], [1], [3])
    tensors_map.take_many(np.array([handle]), float32)
    with pytest.raises(InvalidArgumentError, match="^Unable to find SparseTensor: 0 in map: m$"):
        tensors_map.take_many(np.array([handle]), float32)


def test_the_same_handle_twice_in_one_take_fails_after_taking_it():
    tensors_map = SparseTensorsMap("m")
    handle = _add(tensors_map, [[0]], [1], [3])
    with pytest.raises(InvalidArgumentError, match="Unable to find SparseTensor: 0 in map: m"):
        tensors_map.take_many(np.array([handle, handle]), float32)
    assert len(tensors_map) == 0


def test_an_unknown_handle_fails_and_the_handles_before_it_are_gone():
    tensors_map = SparseTensorsMap("m")
    first, second = _add(tensors_map, [[0]], [1], [3]), _add(tensors_map, [[1]], [2], [3])
    with pytest.raises(InvalidArgumentError, match="Unable to find SparseTensor: 7 in map: m"):
        tensors_map.take_many(np.array([first, 7, second]), float32)
    assert len(tensors_map) == 1
    tensors_map.take_many(np.array([second]), float32)


def test_ranks_must_agree_and_all_are_taken_anyway():
    tensors_map = SparseTensorsMap("m")
    handles = [_add(tensors_map, [[0]], [1], [3]), _add(tensors_map, [[0, 1]], [2], [3, 4])]
    with pytest.raises(InvalidArgumentError, match=(
            r"^Inconsistent rank across SparseTensors: rank prior to SparseTensor\[1\] was: 2 "
            r"but rank of SparseTensor\[1\] is: 3$")):
        tensors_map.take_many(np.array(handles), float32)
    assert len(tensors_map) == 0


def test_the_values_must_be_of_the_type_asked_for():
    tensors_map = SparseTensorsMap("m")
    handle = _add(tensors_map, [[0]], [1], [3])
    with pytest.raises(InvalidArgumentError, match=(
            r"^Requested SparseTensor of type int32 but SparseTensor\[0\].values.dtype\(\) == "
            r"float$")):
        tensors_map.take_many(np.array([handle]), int32)


def test_a_take_needs_a_handle():
    with pytest.raises(InvalidArgumentError, match="Must have at least 1 serialized"):
        SparseTensorsMap("m").take_many(np.zeros([0], np.int64), float32)


def test_scalars_batch_into_a_vector():
    tensors_map = SparseTensorsMap("m")
    handles = [_add(tensors_map, np.zeros([1, 0]), [4], []), _add(tensors_map, [], [], [])]
    indices, values, shape = tensors_map.take_many(np.array(handles), float32)
    np.testing.assert_array_equal(indices, [[0]])
    np.testing.assert_array_equal(values, [4])
    np.testing.assert_array_equal(shape, [2])


# -- the ops in a session ------------------------------------------------------------------

def _sparse(indices, values, shape):
    return tf.SparseTensor(indices=indices, values=values, dense_shape=shape)


def test_an_op_adding_without_a_shared_name_fills_the_map_named_after_it():
    with tf.Graph().as_default():
        handle = sparse_ops.add_sparse_to_tensors_map(_sparse([[1]], [2.0], [3]), name="Add")
        taken = sparse_ops.take_many_sparse_from_tensors_map(handle.op, tf.stack([handle]))
        assert taken.op.get_attr("shared_name") == b"Add"
        with tf.Session() as sess:
            first = sess.run(taken)
            second = sess.run(taken)  # a new handle each run
    np.testing.assert_array_equal(first.indices, [[0, 1]])
    np.testing.assert_array_equal(second.dense_shape, [1, 3])


def test_a_handle_taken_twice_in_a_session_is_not_found():
    with tf.Graph().as_default():
        handle = sparse_ops.add_sparse_to_tensors_map(_sparse([[1]], [2.0], [3]),
                                                      shared_name="m")
        fed = tf.placeholder(tf.int64, [None])
        taken = sparse_ops.take_many_sparse_from_tensors_map(handle.op, fed)
        with tf.Session() as sess:
            value = sess.run(handle)
            sess.run(taken, {fed: [value]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=f"Unable to find SparseTensor: {value} in map: m"):
                sess.run(taken, {fed: [value]})
        with tf.Session() as sess:  # each session has its own maps, as TensorFlow's
            with pytest.raises(tf.errors.InvalidArgumentError, match="Unable to find"):
                sess.run(taken, {fed: [0]})


def test_add_many_gives_the_handles_of_rows_with_values_first():
    with tf.Graph().as_default():
        handles = sparse_ops.add_many_sparse_to_tensors_map(
            _sparse([[0, 0], [0, 2], [2, 1]], [1.0, 2.0, 3.0], [4, 3]))
        taken = sparse_ops.take_many_sparse_from_tensors_map(handles.op, handles)
        assert handles.shape.as_list() == [None]
        with tf.Session() as sess:
            got_handles, got = sess.run([handles, taken])
    np.testing.assert_array_equal(got_handles, [0, 2, 1, 3])
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 2], [2, 1]])
    np.testing.assert_array_equal(got.dense_shape, [4, 3])


def test_a_take_names_an_add_op():
    with tf.Graph().as_default():
        handle = tf.constant(0, tf.int64)
        with pytest.raises(TypeError, match="^sparse_map_op be an Operation$"):
            sparse_ops.take_many_sparse_from_tensors_map(handle, [handle])
        with pytest.raises(TypeError, match="Instead, found `Const`."):
            sparse_ops.take_many_sparse_from_tensors_map(handle.op, [handle])


def test_a_take_wants_a_vector_of_handles():
    with tf.Graph().as_default():
        handle = sparse_ops.add_sparse_to_tensors_map(_sparse([[1]], [2.0], [3]))
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            sparse_ops.take_many_sparse_from_tensors_map(handle.op, [[handle]])
