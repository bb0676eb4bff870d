"""ConditionalAccumulator and SparseConditionalAccumulator: applying, taking, counting,
the global step and stale gradients, and every check of a gradient, with its message."""

import numpy as np
from observe import outcome


def _steps(tf, steps, timeout_ms=500):
    """Runs each fetch of `steps` in one session, in order; what each gave or raised. Only a
    take, which may wait, has a deadline: a loaded machine cannot time out the others
    (TensorFlow, under load, once took over 50 ms for a take that had its gradients)."""
    deadline = tf.RunOptions(timeout_in_ms=timeout_ms)
    with tf.Session() as sess:
        return [outcome(sess.run, step, options=deadline if _takes(step) else None)
                for step in steps]


def _takes(step):
    """Whether `step` (an op, a tensor, or a list or tuple of them) takes gradients."""
    first = step[0] if isinstance(step, (tuple, list)) else step
    return "TakeGradient" in getattr(first, "op", first).type


# -- dense ------------------------------------------------------------------------------

def _dense(reduction, dtype):
    def case(tf):
        acc = tf.ConditionalAccumulator(getattr(tf, dtype), shape=[2],
                                        reduction_type=reduction)
        grads = [np.array(g, dtype) for g in ([1, 2], [3, 5], [10, 20])]
        return _steps(tf, [acc.num_accumulated(), *[acc.apply_grad(g) for g in grads[:2]],
                           acc.num_accumulated(), acc.take_grad(2), acc.num_accumulated(),
                           acc.apply_grad(grads[2], local_step=1), acc.take_grad(1)])
    return case


def dense_stale_dropped(tf):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    return _steps(tf, [acc.set_global_step(3), acc.apply_grad(1.0, local_step=2),
                       acc.num_accumulated(), acc.apply_grad(5.0, local_step=3),
                       acc.apply_grad(7.0, local_step=9), acc.num_accumulated(),
                       acc.take_grad(2), acc.apply_grad(1.0, local_step=3),
                       acc.num_accumulated(), acc.set_global_step(1),
                       acc.apply_grad(2.0, local_step=1), acc.take_grad(1)])


def dense_take_waits(tf):
    acc = tf.ConditionalAccumulator(tf.float32)
    return _steps(tf, [acc.apply_grad([1.0]), acc.take_grad(2), acc.num_accumulated(),
                       acc.apply_grad([3.0]), acc.take_grad(2)])


def dense_take_bad_counts(tf):
    acc = tf.ConditionalAccumulator(tf.float32)
    return _steps(tf, [acc.take_grad(0), acc.take_grad(-2)])


def dense_shape_mismatch(tf):
    acc = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        return [outcome(sess.run, acc.apply_grad(grad), feed_dict={grad: value})
                for value in ([1.0, 2.0], [[1.0, 2.0]], [1.0, 2.0, 3.0], 4.0)]


def dense_shape_mismatch_with_shape(tf):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2, None])
    grad = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        return [outcome(sess.run, acc.apply_grad(grad), feed_dict={grad: value})
                for value in (np.ones([3, 1]), np.ones([2, 3]), np.ones([2, 1]), np.ones([2]))]


def dense_static_checks(tf):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2, 3])
    return [outcome(acc.apply_grad, np.ones([3, 2], np.float32)),
            outcome(acc.apply_grad, np.ones([2, 3], np.int32)),
            outcome(tf.ConditionalAccumulator, tf.float32, reduction_type="MAX")]


def dense_tensors(tf):
    acc = tf.ConditionalAccumulator(tf.float64, shape=[None, 3], shared_name="s", name="acc")
    return (acc.accumulator_ref, acc.dtype, acc.name, acc.num_accumulated(),
            acc.take_grad(1), acc.apply_grad(np.ones([2, 3])).type,
            acc.set_global_step(5).type)


def dense_nodes(tf):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], name="acc",
                                    reduction_type="SUM")
    acc.apply_grad([1.0, 2.0], local_step=3)
    acc.take_grad(1)
    acc.num_accumulated()
    acc.set_global_step(2)
    return _nodes(tf)


def _nodes(tf):
    """Name, type, inputs and the attrs TensorFlow's ops have (dtfnb's own `_...` ones and
    how `get_attr` gives strings and tensors are the graph's business)."""
    nodes = []
    for op in tf.get_default_graph().get_operations():
        attrs = {}
        for name in sorted(op.node_def.attr):
            if name.startswith("_") or name == "value":
                continue
            value = op.get_attr(name)
            attrs[name] = value.decode() if isinstance(value, bytes) else value
        nodes.append((op.name, op.type, list(op.node_def.input), attrs))
    return nodes


def dense_shared(tf):
    first = tf.ConditionalAccumulator(tf.float32, shape=[1], shared_name="shared")
    second = tf.ConditionalAccumulator(tf.float32, shape=[1], shared_name="shared")
    return _steps(tf, [first.apply_grad([2.0]), second.num_accumulated(), second.take_grad(1)])


# -- sparse -----------------------------------------------------------------------------

def _sparse(reduction):
    def case(tf):
        acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2],
                                              reduction_type=reduction)
        taken = acc.take_grad(2)
        return _steps(tf, [
            acc.apply_grad([3, 0], [[1.0, 2.0], [3.0, 4.0]], local_step=0),
            acc.apply_grad([0, 1], [[10.0, 20.0], [5.0, 6.0]], grad_shape=[4, 2]),
            acc.num_accumulated(), list(taken), acc.num_accumulated()])
    return case


def sparse_indexed_slices(tf):
    acc = tf.SparseConditionalAccumulator(tf.float64, shape=[None, 2])
    grad = tf.IndexedSlices(tf.constant([[1.0, 1.0]], tf.float64), tf.constant([2], tf.int64),
                            tf.constant([5, 2], tf.int64))
    taken = acc.take_indexed_slices_grad(1)
    return (type(taken).__name__, taken.indices, taken.values, taken.dense_shape,
            _steps(tf, [acc.apply_indexed_slices_grad(grad),
                        [taken.indices, taken.values, taken.dense_shape]]))


def sparse_unknown_shape(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32)
    taken = acc.take_grad(1)
    return (list(taken), _steps(tf, [acc.apply_grad([1], [[1.0, 2.0, 3.0]]), list(taken)]))


def sparse_repeated_indices(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3])
    return _steps(tf, [acc.apply_grad([1, 1], [2.0, 4.0]), acc.apply_grad([1], [6.0]),
                       list(acc.take_grad(2))])


def sparse_stale_dropped(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[2])
    return _steps(tf, [acc.set_global_step(2), acc.apply_grad([0], [1.0], local_step=1),
                       acc.num_accumulated(), acc.apply_grad([1], [2.0], local_step=2),
                       list(acc.take_grad(1)), acc.apply_grad([0], [3.0], local_step=2),
                       acc.num_accumulated()])


def sparse_take_waits(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32)
    # The first take waits out its deadline; the second fails on its argument at once, but
    # under load TensorFlow may not reach its kernel within 50 ms: a deadline it never needs.
    with tf.Session() as sess:
        return [outcome(sess.run, acc.take_grad(1).indices,
                        options=tf.RunOptions(timeout_in_ms=50)),
                outcome(sess.run, acc.take_grad(0).values,
                        options=tf.RunOptions(timeout_in_ms=10_000))]


def _sparse_check(shape, applies):
    """Gradients (indices, values, grad_shape or None), each fed, one after the other."""
    def case(tf):
        acc = tf.SparseConditionalAccumulator(tf.float32, shape=shape)
        indices = tf.placeholder(tf.int64)
        values = tf.placeholder(tf.float32)
        dense_shape = tf.placeholder(tf.int64)
        with tf.Session() as sess:
            results = []
            for index, value, grad_shape in applies:
                op = acc.apply_grad(indices, values,
                                    None if grad_shape is None else dense_shape)
                feed = {indices: index, values: value}
                if grad_shape is not None:
                    feed[dense_shape] = grad_shape
                results.append(outcome(sess.run, op, feed_dict=feed))
            results.append(sess.run(acc.num_accumulated()))
            return results
    return case


SPARSE_CHECKS = {
    "non_vector_indices": ([None], [([[0, 1], [1, 0]], [1.0, 2.0], None)]),
    "scalar_indices": (None, [(0, [1.0], None)]),
    "scalar_values": (None, [([0], 1.0, None)]),
    "too_few_values": (None, [([0, 1], [[1.0, 2.0, 3.0]], None)]),
    "too_many_values": ([None, 1], [([0], [[1.0], [2.0]], None)]),
    "shape_rank": ([3, 2], [([0], [[1.0, 2.0]], [3])]),
    "shape_dim": ([3, 2], [([0], [[1.0, 2.0]], [4, 2]), ([0], [[1.0, 2.0]], [3, 3])]),
    "index_beyond": ([3, 2], [([0, 5, 7], [[1, 2], [3, 4], [5, 6]], None)]),
    "negative_index_unknown": ([None, 2], [([-1], [[1.0, 2.0]], None)]),
    "values_rank_at_least": ([3, 2, 2], [([0], [[1.0, 2.0]], None)]),
    "values_dim": ([3, 2], [([0], [[1.0, 2.0, 3.0]], None)]),
    "values_rank_accumulated": (None, [([0], [[1.0, 2.0]], None), ([1], [1.0], None)]),
    "values_dim_accumulated": (None, [([0], [[1.0, 2.0]], None), ([1], [[1.0]], None)]),
    "good_then_bad": ([2, 2], [([1], [[1.0, 2.0]], [2, 2]), ([2], [[1.0, 2.0]], None),
                               ([0], [[3.0, 4.0]], None)]),
    "empty_gradient": ([3, 2], [(np.zeros([0], np.int64), np.zeros([0, 2]), None)]),
}


def sparse_static_checks(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2])
    return [outcome(acc.apply_grad, [0], np.ones([1, 2], np.int32)),
            outcome(tf.SparseConditionalAccumulator, tf.float32, reduction_type="max")]


def sparse_tensors(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[None, 4, 5], name="sacc")
    taken = acc.take_grad(2)
    unknown = tf.SparseConditionalAccumulator(tf.int32).take_grad(1)
    return (acc.name, acc.dtype, type(taken).__name__, list(taken), list(unknown),
            acc.apply_grad([1], np.ones([1, 4, 5], np.float32)).type)


def sparse_nodes(tf):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2], name="sacc")
    acc.apply_grad([0], [[1.0, 2.0]], grad_shape=[3, 2], local_step=1)
    acc.apply_grad([0], [[1.0, 2.0]])
    acc.take_grad(1)
    return _nodes(tf)


CASES = {
    **{f"dense_{reduction.lower()}_{dtype}": _dense(reduction, dtype)
       for reduction in ("MEAN", "SUM") for dtype in ("float16", "float32", "float64")},
    **{f"sparse_{reduction.lower()}": _sparse(reduction) for reduction in ("MEAN", "SUM")},
    **{f"sparse_check_{name}": _sparse_check(shape, applies)
       for name, (shape, applies) in SPARSE_CHECKS.items()},
    **{f.__name__: f for f in (
        dense_stale_dropped, dense_take_waits, dense_take_bad_counts, dense_shape_mismatch,
        dense_shape_mismatch_with_shape, dense_static_checks, dense_tensors, dense_nodes,
        dense_shared, sparse_indexed_slices, sparse_unknown_shape, sparse_repeated_indices,
        sparse_stale_dropped, sparse_take_waits, sparse_static_checks, sparse_tensors,
        sparse_nodes)},
}
