"""ConditionalAccumulator and SparseConditionalAccumulator: means, stale gradients, blocking
takes with timeouts and cancellation, TensorFlow's messages, sharing, and monitor events."""


import numpy as np
import pytest

import dtfnb as tf
from dtfnb.base.dtypes import float32
from dtfnb.resources.accumulators import ConditionalAccumulator
from dtfnb.runtime.step import Step
from tests.helpers import in_thread, poll_for


def _timeout(ms):
    return tf.RunOptions(timeout_in_ms=ms)


# -- dense ---------------------------------------------------------------------------------

def test_names_properties_and_static_shapes():
    accum = tf.ConditionalAccumulator(tf.float32, shape=[2, 3], shared_name="acc")
    assert accum.name == "conditional_accumulator"
    assert accum.dtype == tf.float32
    assert accum.accumulator_ref.op.type == "ResourceConditionalAccumulator"
    assert accum.num_accumulated().name == "conditional_accumulator_NumAccumulated:0"
    assert accum.take_grad(2).shape.as_list() == [2, 3]
    assert accum.apply_grad(np.zeros((2, 3), np.float32)).type == \
        "ResourceAccumulatorApplyGradient"
    with pytest.raises(ValueError, match=r"Shapes \(3, 2\) and \(2, 3\) are incompatible"):
        accum.apply_grad(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="not in: \"MEAN\", \"SUM\""):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")


def test_mean_then_stale_gradients_are_dropped_until_the_local_step_catches_up():
    accum = tf.ConditionalAccumulator(tf.float32, shape=[2])
    grad = tf.placeholder(tf.float32, [2])
    local_step = tf.placeholder(tf.int64, [])
    apply = accum.apply_grad(grad, local_step=local_step)
    take, count = accum.take_grad(2), accum.num_accumulated()
    with tf.Session() as sess:
        sess.run(apply, {grad: [1., 2.], local_step: 0})
        sess.run(apply, {grad: [3., 6.], local_step: 0})
        assert sess.run(count) == 2
        np.testing.assert_array_equal(sess.run(take), [2., 4.])
        assert sess.run(count) == 0
        sess.run(apply, {grad: [9., 9.], local_step: 0})  # computed before the take: stale
        assert sess.run(count) == 0
        sess.run(apply, {grad: [1., 1.], local_step: 1})
        sess.run(apply, {grad: [3., 3.], local_step: 7})  # ahead of the step is fine
        assert sess.run(count) == 2
        np.testing.assert_array_equal(sess.run(take), [2., 2.])


def test_sum_reduction_and_set_global_step():
    accum = tf.ConditionalAccumulator(tf.float64, reduction_type="SUM")
    grad = tf.placeholder(tf.float64)
    local_step = tf.placeholder(tf.int64, [])
    apply = accum.apply_grad(grad, local_step=local_step)
    with tf.Session() as sess:
        sess.run(accum.set_global_step(5))
        sess.run(apply, {grad: [[1., 2.]], local_step: 4})
        sess.run(apply, {grad: [[1., 2.]], local_step: 5})
        sess.run(apply, {grad: [[2., 2.]], local_step: 6})
        np.testing.assert_array_equal(sess.run(accum.take_grad(2)), [[3., 4.]])


def test_take_waits_for_gradients_from_another_thread():
    accum = tf.ConditionalAccumulator(tf.float32, shape=[])
    value = tf.placeholder(tf.float32, [])
    apply, take = accum.apply_grad(value), accum.take_grad(3)
    with tf.Session() as sess:
        taker, box = in_thread(lambda: sess.run(take))
        for v in (1., 2.):
            sess.run(apply, {value: v})
        assert poll_for(lambda: not taker.is_alive(), timeout=0.2) is False
        sess.run(apply, {value: 6.})
        taker.join(5)
        assert box == {"value": 3.0}


def test_take_times_out_and_the_session_stays_usable():
    accum = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = accum.take_grad(1)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(take, options=_timeout(50))
        sess.run(accum.apply_grad(4.))
        assert sess.run(take) == 4.0


def test_session_close_cancels_a_blocked_take():
    accum = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = accum.take_grad(1)
    sess = tf.Session()
    sess.run(accum.num_accumulated())
    blocked, box = in_thread(lambda: sess.run(take))
    assert poll_for(lambda: not blocked.is_alive(), timeout=0.1) is False
    sess.close()
    blocked.join(5)
    assert isinstance(box["error"], tf.errors.CancelledError)


def test_run_time_messages():
    accum = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32)
    apply = accum.apply_grad(grad)
    with tf.Session() as sess:
        sess.run(apply, {grad: np.zeros((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch: expected \[2,3\], got \[3\]"):
            sess.run(apply, {grad: np.zeros(3)})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Argument num_required must be positive, but was 0"):
            sess.run(accum.take_grad(0))
    fixed = tf.ConditionalAccumulator(tf.float32, shape=[None, 2])
    loose = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch: expected \[\?,2\], got \[2,3\]"):
            sess.run(fixed.apply_grad(loose), {loose: np.zeros((2, 3))})


def test_takes_are_served_in_order():
    """Pure resource, no session: a second take waits behind a first that needs more."""
    accum = ConditionalAccumulator("acc", float32, (), "SUM")
    first, first_box = in_thread(lambda: accum.take_grad(Step(timeout_ms=5000), 2))
    assert poll_for(lambda: len(accum._takes) == 1)
    second, second_box = in_thread(lambda: accum.take_grad(Step(timeout_ms=5000), 1))
    assert poll_for(lambda: len(accum._takes) == 2)
    for value in (1., 2., 5.):
        accum.apply_grad(accum.global_step, np.float32(value))
    first.join(5)
    second.join(5)
    assert (first_box["value"], second_box["value"]) == (3., 5.)
    assert accum.global_step == 2


def test_a_container_reset_cancels_a_waiting_take():
    accum = ConditionalAccumulator("acc", float32, (), "MEAN")
    waiting, box = in_thread(lambda: accum.take_grad(Step(timeout_ms=5000), 1))
    assert poll_for(lambda: len(accum._takes) == 1)
    accum.close_on_cleanup()
    waiting.join(5)
    assert isinstance(box["error"], tf.errors.CancelledError)
    assert box["error"].message == "Accumulator 'acc' was reset"


# -- sparse --------------------------------------------------------------------------------

def test_sparse_rows_merge_in_order_and_are_averaged_over_the_gradients_added():
    accum = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    assert accum.name == "sparse_conditional_accumulator"
    first = tf.IndexedSlices(tf.constant([[1., 1.], [2., 2.]]), tf.constant([3, 0]),
                             tf.constant([5, 2], tf.int64))
    indices, values, shape = accum.take_grad(2)
    assert values.shape.ndims is None  # as TensorFlow's: the take has no static shape
    with tf.Session() as sess:
        sess.run(accum.apply_indexed_slices_grad(first))
        sess.run(accum.apply_grad([3, 3], [[1., 1.], [5., 5.]]))
        got = sess.run([indices, values, shape])
    # TensorFlow walks both index lists in order: the first 3s meet and are averaged,
    # then 0 < 3 keeps the accumulated row, and the second 3 is a row of its own
    np.testing.assert_array_equal(got[0], [3, 0, 3])
    np.testing.assert_array_equal(got[1], [[1., 1.], [2., 2.], [5., 5.]])
    np.testing.assert_array_equal(got[2], [5, 2])


def test_sparse_take_as_indexed_slices_converts_to_a_dense_tensor():
    accum = tf.SparseConditionalAccumulator(tf.float32, shape=[4], reduction_type="SUM")
    slices = accum.take_indexed_slices_grad(1)
    assert isinstance(slices, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(accum.apply_grad([2, 0], [5., 7.], local_step=3))
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(slices)), [7., 0., 5., 0.])
        sess.run(accum.apply_grad([1], [9.], local_step=0))  # stale after the take
        assert sess.run(accum.num_accumulated()) == 0
    with pytest.raises(ValueError, match="IndexedSlices for argument `value` without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant([1.]), tf.constant([0])))


def test_sparse_shape_errors():
    accum = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="index of slice 1 exceeded limits of shape; index is 3 "
                                 "exceeded 3"):
            sess.run(accum.apply_grad([0, 3], [[1., 1.], [1., 1.]]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="expected values dim 1 to be 2, got 3"):
            sess.run(accum.apply_grad([0], [[1., 1., 1.]]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="expected shape dim 1 to be 2, got 4"):
            sess.run(accum.apply_grad([0], [[1., 1.]], grad_shape=[3, 4]))
        assert sess.run(accum.num_accumulated()) == 0


# -- sharing and events --------------------------------------------------------------------

def test_shared_by_name_across_sessions_of_a_server_and_checked(cluster):
    server = cluster({"local": 1})["local", 0]
    graphs = [tf.Graph(), tf.Graph()]
    accums = []
    for graph in graphs:
        with graph.as_default():
            accums.append(tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="g"))
    with tf.Session(server.target, graph=graphs[0]) as one, \
            tf.Session(server.target, graph=graphs[1]) as two:
        one.run(accums[0].apply_grad(2.))
        assert two.run(accums[1].num_accumulated()) == 1
        with graphs[1].as_default():
            other = tf.ConditionalAccumulator(tf.float64, shape=[], shared_name="g")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Shared accumulator 'g' has dtype float but the "
                                 "requested dtype was double"):
            two.run(other.num_accumulated())


def test_each_gradient_offered_is_an_event_naming_its_worker_and_steps():
    with tf.device("/job:localhost/replica:0/task:0"):
        grad = tf.constant([1., 1.])
    accum = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="watched")
    local_step = tf.placeholder(tf.int64, [])
    apply = accum.apply_grad(grad, local_step=local_step)
    with tf.Session() as sess:
        events = sess._master.events.subscribe(kinds=["variable_update"])
        sess.run(apply, {local_step: 0})
        sess.run(accum.take_grad(1))
        sess.run(apply, {local_step: 0})
        seen = [events.get(1).variable_update for _ in range(2)]
        events.close()
    assert [(e.computed_at_step, e.applied_at_step, e.dropped) for e in seen] == [
        (0, 0, False), (0, 1, True)]
    assert seen[0].variable == "watched"
    assert seen[0].worker == "/job:localhost/replica:0/task:0"
    assert seen[0].device.endswith("/device:CPU:0")
