"""Queues: every kind × enqueue/dequeue variant × open/closed × blocking with a timeout;
static shapes, NodeDefs, shared queues and the errors for bad input.

Each queue holds (a, b) elements: `a` an int scalar (the int64 priority of a
PriorityQueue) and `b` a float vector of two (of any length in a PaddingFIFOQueue).
A RandomShuffleQueue's order is its own: its results are compared sorted by `a`.
Private queues are named `_<process counter>_<name>` in messages; the counter is
replaced by N.
"""

import itertools
import re

import numpy as np
from observe import error_message, node_defs, outcome

KINDS = ("fifo", "padding", "shuffle", "priority")
# The deadline of a step that may block (a dequeue, an enqueue); the others have none, so
# that a loaded machine cannot time them out (TensorFlow under load missed 20 ms).
TIMEOUT_MS = 100
_BLOCKING = {"QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueEnqueueV2",
             "QueueEnqueueManyV2"}


def make(tf, kind, capacity=4, shapes=True, **kwargs):
    if kind == "fifo":
        return tf.FIFOQueue(capacity, [tf.int32, tf.float32],
                            shapes=[[], [2]] if shapes else None, **kwargs)
    if kind == "padding":
        return tf.PaddingFIFOQueue(capacity, [tf.int32, tf.float32], shapes=[[], [None]],
                                   **kwargs)
    if kind == "shuffle":
        return tf.RandomShuffleQueue(capacity, 0, [tf.int32, tf.float32],
                                     shapes=[[], [2]] if shapes else None, seed=7, **kwargs)
    return tf.PriorityQueue(capacity, [tf.float32], shapes=[[2]] if shapes else None,
                            **kwargs)


def rows(kind, ids):
    """The (a, b) components of elements `ids`, batched."""
    a = np.array(ids, dtype=np.int64 if kind == "priority" else np.int32)
    b = np.array([[i, i + 0.5] for i in ids], dtype=np.float32).reshape(len(ids), 2)
    return [a, b]


def row(kind, i):
    a, b = rows(kind, [i])
    return [a[0], b[0]]


def _first(fetch):
    """The op of a fetch's first tensor (of a list, tuple or dict of them)."""
    while isinstance(fetch, (list, tuple, dict)):
        fetch = next(iter(fetch.values())) if isinstance(fetch, dict) else fetch[0]
    return getattr(fetch, "op", fetch)


def steps(tf, kind, *fetches):
    """Runs each fetch in its own step of one session (with a deadline if it may block):
    what it returned (ordered by `a` for a RandomShuffleQueue) or the error it raised."""
    seen = []
    deadline = tf.RunOptions(timeout_in_ms=TIMEOUT_MS)
    with tf.Session() as sess:
        for fetch in fetches:
            options = deadline if _first(fetch).type in _BLOCKING else None
            try:
                seen.append(ordered(kind, sess.run(fetch, options=options)))
            except tf.errors.OpError as err:
                seen.append((type(err).__name__, re.sub(r"'_\d+_", "'_N_",
                                                        error_message(err))))
    return seen


def ordered(kind, value):
    """What a RandomShuffleQueue gave that does not depend on its order: dtypes and shapes
    (`shuffle_everything` compares the values, sorted)."""
    if kind != "shuffle" or not isinstance(value, list):
        return value
    return [(v.dtype.name, v.shape) for v in value]


# -- open and closed queues -----------------------------------------------------------


def enqueue_dequeue(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue(row(kind, 3)), q.enqueue(row(kind, 1)), q.size(),
                 q.dequeue(), q.dequeue(), q.size())


def enqueue_many_dequeue_many(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue_many(rows(kind, [5, 2, 4])), q.size(),
                 q.dequeue_many(2), q.size(), q.dequeue_many(1))


def dequeue_up_to_open(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue_many(rows(kind, [1, 3, 2])), q.dequeue_up_to(2),
                 q.size())


def dequeue_up_to_closed(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue_many(rows(kind, [2, 1])), q.close(),
                 q.dequeue_up_to(5), q.dequeue_up_to(5))


def dequeue_many_closed(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue(row(kind, 1)), q.close(), q.dequeue_many(2), q.size(),
                 q.dequeue_many(1), q.dequeue_many(1))


def dequeue_closed(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue(row(kind, 4)), q.close(), q.is_closed(), q.dequeue(),
                 q.dequeue())


def enqueue_closed(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.close(), q.enqueue(row(kind, 1)),
                 q.enqueue_many(rows(kind, [1, 2])), q.enqueue_many(rows(kind, [])), q.size())


def close_twice(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.is_closed(), q.close(), q.close(), q.is_closed())


def close_cancelling(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue(row(kind, 1)), q.close(cancel_pending_enqueues=True),
                 q.enqueue(row(kind, 2)), q.size(), q.dequeue(), q.dequeue())


def dequeue_many_zero(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.dequeue_many(0), q.dequeue_up_to(0), q.close(),
                 q.dequeue_many(0))


# -- blocking with a timeout ----------------------------------------------------------


def dequeue_empty_times_out(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.dequeue(), q.dequeue_many(1), q.dequeue_up_to(1), q.size())


def dequeue_many_short_times_out(tf, kind):
    q = make(tf, kind)
    return steps(tf, kind, q.enqueue(row(kind, 1)), q.dequeue_many(2))


def enqueue_full_times_out(tf, kind):
    q = make(tf, kind, capacity=2)
    return steps(tf, kind, q.enqueue_many(rows(kind, [1, 2])), q.enqueue(row(kind, 3)),
                 q.size(), q.dequeue_many(2))


def enqueue_many_past_capacity_times_out(tf, kind):
    q = make(tf, kind, capacity=2)
    return steps(tf, kind, q.enqueue_many(rows(kind, [1, 2, 3])), q.size())


def close_after_a_timeout(tf, kind):
    q = make(tf, kind, capacity=1)
    return steps(tf, kind, q.enqueue(row(kind, 1)), q.enqueue(row(kind, 2)), q.close(),
                 q.dequeue(), q.dequeue())


# -- graphs: static shapes and NodeDefs -----------------------------------------------


def dequeued_tensors(tf, kind):
    q = make(tf, kind)
    n = tf.placeholder(tf.int32, [])
    return q.dequeue(), q.dequeue_many(3), q.dequeue_many(n), q.dequeue_up_to(3), q.dtypes, \
        q.shapes, q.names, q.name, q.queue_ref


def unshaped_tensors(tf, kind):
    q = make(tf, kind, shapes=False)
    return q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(2), q.shapes


def queue_graph(tf, kind):
    q = make(tf, kind, name="q", shared_name="shared")
    q.enqueue(row(kind, 1))
    q.enqueue_many(rows(kind, [1, 2]), name="many")
    q.dequeue()
    q.dequeue_many(2)
    q.dequeue_up_to(2)
    q.close()
    q.close(cancel_pending_enqueues=True)
    q.size()
    q.is_closed()
    return node_defs(tf.get_default_graph())


def attr_types(tf, kind):
    """What get_attr returns for each attr of the queue's ops, by Python type."""
    q = make(tf, kind, shared_name="s")
    ops = [q.queue_ref.op, q.enqueue(row(kind, 1)), q.dequeue_many(2)[0].op, q.close()]
    return [{name: [type(op.get_attr(name)).__name__] + [
        type(v).__name__ for v in op.get_attr(name)] if isinstance(op.get_attr(name), list)
        else type(op.get_attr(name)).__name__ for name in sorted(op.node_def.attr)}
        for op in ops]


def queue_in_device_blocks(tf, kind):
    devices = []
    for device in ("/job:ps/task:0", "/gpu:0", "/job:worker/cpu:1"):
        with tf.device(device):
            q = make(tf, kind)
            devices.append((q.queue_ref.device, q.size().device, _first(q.dequeue()).device))
    return devices


def queue_in_control_dependencies(tf, kind):
    first = tf.no_op(name="first")
    with tf.control_dependencies([first]):
        q = make(tf, kind)
        size = q.size()
    return q.queue_ref.op.control_inputs, size.op.control_inputs


def queue_in_name_scope(tf, kind):
    with tf.name_scope("scope"):
        q = make(tf, kind)
        ops = q.enqueue(row(kind, 1)), q.dequeue()[0], q.close(), q.size(), q.is_closed()
    return q.name, [getattr(op, "op", op).name for op in ops]


# -- names ------------------------------------------------------------------------------


def named_components(tf, kind):
    if kind == "priority":
        q = tf.PriorityQueue(4, [tf.float32], shapes=[[2]], names=["p", "b"])
    else:
        q = make(tf, kind, names=["a", "b"])
    a, b = row(kind, 2)
    keys = ("p" if kind == "priority" else "a", "b")
    return q.names, q.dequeue(), q.dequeue_many(2), steps(
        tf, kind, q.enqueue({keys[0]: a, keys[1]: b}), q.dequeue())


def names_errors(tf, kind):
    if kind == "priority":
        return outcome(tf.PriorityQueue, 4, [tf.float32], shapes=[[2]], names=["b"])
    named = make(tf, kind, names=["a", "b"])
    plain = make(tf, kind)
    return (outcome(make, tf, kind, names=["a"]), outcome(named.enqueue, row(kind, 1)),
            outcome(named.enqueue, {"a": 1, "c": [1.0, 2.0]}),
            outcome(plain.enqueue, {"a": 1, "b": [1.0, 2.0]}))


# -- bad input ------------------------------------------------------------------------


def wrong_static_shape(tf, kind):
    q = make(tf, kind)
    a = row(kind, 1)[0]
    return (outcome(q.enqueue, [a, [[1.0, 2.0]]]), outcome(q.enqueue_many, [[a], [1.0, 2.0]]),
            outcome(q.enqueue_many, [a, [1.0, 2.0]]))


def wrong_fed_shape(tf, kind):
    q = make(tf, kind)
    dtype = tf.int64 if kind == "priority" else tf.int32
    a, b = tf.placeholder(dtype), tf.placeholder(tf.float32)
    enqueue, enqueue_many = q.enqueue([a, b]), q.enqueue_many([a, b])
    seen = []
    with tf.Session() as sess:
        for op, feed in ((enqueue, {a: 1, b: [1.0, 2.0, 3.0]}),
                         (enqueue, {a: [1], b: [1.0, 2.0]}),
                         (enqueue_many, {a: [1, 2], b: [[1.0, 2.0]]}),
                         (enqueue_many, {a: 1, b: [[1.0, 2.0]]}),
                         (enqueue_many, {a: [1], b: [[1.0, 2.0, 3.0]]})):
            seen.append(type(outcome(sess.run, op, feed)).__name__)
    return seen


def wrong_dtype(tf, kind):
    q = make(tf, kind)
    return outcome(q.enqueue, [tf.constant(1.0), [1.0, 2.0]])


def component_count(tf, kind):
    q = make(tf, kind)
    a, b = row(kind, 1)
    extra = outcome(q.enqueue, [a, b, b])
    return outcome(q.enqueue, [a]), getattr(extra, "inputs", extra)


def dequeue_many_without_shapes(tf, kind):
    if kind == "padding":
        return outcome(tf.PaddingFIFOQueue, 4, tf.float32, shapes=None)
    q = make(tf, kind, shapes=False)
    return steps(tf, kind, q.enqueue(row(kind, 1)), q.dequeue_many(1), q.dequeue_up_to(1),
                 q.size())


def bad_shapes(tf, kind):
    return (outcome(make_with_shapes, tf, kind, [[None], [2]]),
            outcome(make_with_shapes, tf, kind, [[1], [2], [3]]),
            outcome(make_with_shapes, tf, kind, [None, [2]]),
            outcome(make_with_shapes, tf, kind, "x"))


def make_with_shapes(tf, kind, shapes):
    if kind == "fifo":
        return tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=shapes)
    if kind == "padding":
        return tf.PaddingFIFOQueue(4, [tf.int32, tf.float32], shapes=shapes)
    if kind == "shuffle":
        return tf.RandomShuffleQueue(4, 0, [tf.int32, tf.float32], shapes=shapes)
    return tf.PriorityQueue(4, [tf.int32, tf.float32], shapes=shapes)


# -- shared queues --------------------------------------------------------------------


def shared_mismatch(tf, kind, what):
    first = make(tf, kind, shared_name="s")
    if what == "capacity":
        second = make(tf, kind, capacity=5, shared_name="s")
    elif what == "dtypes":
        second = tf.FIFOQueue(4, [tf.int64, tf.float32], shapes=[[], [2]], shared_name="s") \
            if kind == "fifo" else make_dtypes(tf, kind)
    elif what == "shapes":
        second = make_shared_shapes(tf, kind)
    else:  # another kind
        second = tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [2]], shared_name="s") \
            if kind != "fifo" else tf.PaddingFIFOQueue(4, [tf.int32, tf.float32],
                                                       shapes=[[], [2]], shared_name="s")
    return steps(tf, kind, first.size(), second.size())


def make_dtypes(tf, kind):
    if kind == "padding":
        return tf.PaddingFIFOQueue(4, [tf.int64, tf.float32], shapes=[[], [None]],
                                   shared_name="s")
    if kind == "shuffle":
        return tf.RandomShuffleQueue(4, 0, [tf.int64, tf.float32], shapes=[[], [2]], seed=7,
                                     shared_name="s")
    return tf.PriorityQueue(4, [tf.float64], shapes=[[2]], shared_name="s")


def make_shared_shapes(tf, kind):
    if kind == "padding":
        return tf.PaddingFIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [2]],
                                   shared_name="s")
    if kind == "shuffle":
        return tf.RandomShuffleQueue(4, 0, [tf.int32, tf.float32], shapes=[[], [3]], seed=7,
                                     shared_name="s")
    if kind == "priority":
        return tf.PriorityQueue(4, [tf.float32], shapes=[[3]], shared_name="s")
    return tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [3]], shared_name="s")


def shared_shuffle_queue(tf, seeds, min_after_dequeue=0):
    first = tf.RandomShuffleQueue(4, 0, tf.int32, shapes=[[]], seed=7, shared_name="r")
    if seeds[0] is not None:
        tf.set_random_seed(seeds[0])
    second = tf.RandomShuffleQueue(4, min_after_dequeue, tf.int32, shapes=[[]], seed=seeds[1],
                                   shared_name="r")
    return second.queue_ref.op.get_attr("seed"), steps(tf, "shuffle", first.size(),
                                                      second.size())


def shuffle_seed_attrs(tf):
    seen = []
    for graph_seed, op_seed, shared_name in itertools.product(
            (None, 3), (None, 5), (None, "name")):
        with tf.Graph().as_default():
            if graph_seed is not None:
                tf.set_random_seed(graph_seed)
            q = tf.RandomShuffleQueue(4, 0, tf.int32, seed=op_seed, shared_name=shared_name)
            seen.append((q.queue_ref.op.get_attr("seed"), q.queue_ref.op.get_attr("seed2")))
    return seen


def shuffle_bad_min_after_dequeue(tf):
    return [steps(tf, "shuffle", tf.RandomShuffleQueue(4, m, tf.int32).size())
            for m in (-1, 4, 5)]


def shuffle_min_after_dequeue(tf):
    q = tf.RandomShuffleQueue(5, 2, tf.int32, shapes=[[]], seed=3)
    return steps(tf, "shuffle", q.enqueue_many([[1, 2, 3]]), q.size(), [q.dequeue_many(1)],
                 q.size(), q.close(), [q.dequeue_many(2)], q.size(), q.dequeue())


# -- priorities -------------------------------------------------------------------------


def shuffle_everything(tf):
    q = tf.RandomShuffleQueue(10, 0, [tf.int32, tf.string], shapes=[[], [2]], seed=5)
    many = q.enqueue_many([[4, 1, 3, 2], [[b"d", b"D"], [b"a", b"A"], [b"c", b"C"],
                                          [b"b", b"B"]]])
    *done, (a, b) = steps(tf, "priority", many, q.enqueue([5, [b"e", b"E"]]), q.close(),
                          list(q.dequeue_up_to(10)))
    order = np.argsort(a)
    return done, a[order], b[order]


def priority_order(tf):
    q = tf.PriorityQueue(8, [tf.string], shapes=[[]])
    return steps(tf, "priority", q.enqueue_many([[5, 1, 3, 1], [b"e", b"a", b"c", b"b"]]),
                 q.enqueue([0, b"z"]), q.dequeue(), q.dequeue_many(3), q.dequeue_up_to(5))


def priority_dequeue_many_waits_for_all(tf):
    """A dequeue_many takes its batch only once all of it is there, in priority order."""
    q = tf.PriorityQueue(8, [tf.int32], shapes=[[]])
    return steps(tf, "priority", q.enqueue([5, 50]), q.dequeue_many(2), q.size(),
                 q.enqueue([1, 10]), q.dequeue_many(2))


def priority_bad_priority(tf):
    q = tf.PriorityQueue(4, [tf.int32], shapes=[[]])
    p = tf.placeholder(tf.int64)
    enqueue, enqueue_many = q.enqueue([p, 1]), q.enqueue_many([p, [1]])
    # (an enqueue_many of a scalar priority: TensorFlow's message shows an uninitialized size)
    with tf.Session() as sess:
        return (outcome(q.enqueue, [tf.constant(1.5), 1]), outcome(sess.run, enqueue, {p: [1]}),
                outcome(sess.run, enqueue_many, {p: [[1]]}))


def priority_without_shapes(tf):
    q = tf.PriorityQueue(4, [tf.int32])
    return q.shapes, q.dtypes, steps(tf, "priority", q.enqueue([1, [1, 2]]),
                                     q.enqueue([0, 3]), q.dequeue(), q.dequeue())


# -- padding ------------------------------------------------------------------------------


def padding_batches(tf):
    q = tf.PaddingFIFOQueue(4, [tf.int32, tf.string], shapes=[[None], [None, 2]])
    return steps(tf, "padding", q.enqueue([[1], [[b"a", b"b"]]]),
                 q.enqueue([[1, 2, 3], [[b"c", b"d"], [b"e", b"f"]]]), q.dequeue_many(2),
                 q.enqueue([[], np.zeros([0, 2], dtype=object)]), q.dequeue_many(1))


def padding_bad_rank(tf):
    q = tf.PaddingFIFOQueue(4, tf.int32, shapes=[[None]])
    p = tf.placeholder(tf.int32)
    enqueue = q.enqueue(p)
    with tf.Session() as sess:
        return outcome(q.enqueue, [[1]]), outcome(sess.run, enqueue, {p: 1})


def padding_needs_shapes(tf):
    return (outcome(tf.PaddingFIFOQueue, 4, tf.int32, shapes=[]),
            outcome(tf.PaddingFIFOQueue, 4, tf.int32, shapes=[None]),
            outcome(tf.PaddingFIFOQueue, 4, [tf.int32, tf.int32], shapes=[[None]]))


# -- QueueBase.from_list ----------------------------------------------------------------


def from_list(tf):
    q1 = tf.FIFOQueue(4, tf.float32, shapes=[[2]])
    q2 = tf.FIFOQueue(4, tf.float32, shapes=[[3]])
    q3 = tf.FIFOQueue(4, tf.float32)
    index = tf.placeholder(tf.int32, [])
    chosen = tf.QueueBase.from_list(index, [q1, q2])
    any_shape = tf.QueueBase.from_list(index, [q1, q3])
    enqueue, size = chosen.enqueue([[1.0, 2.0]]), chosen.size()
    with tf.Session() as sess:
        sess.run(enqueue, {index: 0})
        sizes = sess.run([q1.size(), q2.size(), size], {index: 0})
    return chosen.shapes, any_shape.shapes, chosen.dtypes, chosen.queue_ref, sizes


def from_list_errors(tf):
    f = tf.FIFOQueue(4, tf.float32)
    return (outcome(tf.QueueBase.from_list, 0, []), outcome(tf.QueueBase.from_list, 0, (f,)),
            outcome(tf.QueueBase.from_list, 0, [f, tf.FIFOQueue(4, tf.int32)]),
            outcome(tf.QueueBase.from_list, 0, [f, tf.FIFOQueue(4, tf.float32, names="x")]))


PER_KIND = (enqueue_dequeue, enqueue_many_dequeue_many, dequeue_up_to_open, dequeue_up_to_closed,
            dequeue_many_closed, dequeue_closed, enqueue_closed, close_twice, close_cancelling,
            dequeue_many_zero, dequeue_empty_times_out, dequeue_many_short_times_out,
            enqueue_full_times_out, enqueue_many_past_capacity_times_out, close_after_a_timeout,
            dequeued_tensors, unshaped_tensors, queue_graph, attr_types, queue_in_device_blocks,
            queue_in_control_dependencies, queue_in_name_scope, named_components, names_errors,
            wrong_static_shape, wrong_fed_shape, wrong_dtype, component_count,
            dequeue_many_without_shapes, bad_shapes)
SHARED = ("capacity", "dtypes", "shapes", "kind")
SEEDS = {"same_seed": (None, 7), "other_seed": (None, 8), "no_seed": (None, None),
         "graph_seed": (1, None)}

# TensorFlow's PriorityQueue loses what a dequeue_up_to of a closed queue with too few
# elements took, and fails: dtfnb returns them, as the other queues do.
LEFT_OUT = {("dequeue_up_to_closed", "priority")}

CASES = {}
for _fn, _kind in itertools.product(PER_KIND, KINDS):
    if (_fn.__name__, _kind) in LEFT_OUT:
        continue
    CASES[f"{_fn.__name__}[{_kind}]"] = (lambda fn, kind: lambda tf: fn(tf, kind))(_fn, _kind)
for _kind, _what in itertools.product(KINDS, SHARED):
    CASES[f"shared_{_what}_mismatch[{_kind}]"] = (
        lambda kind, what: lambda tf: shared_mismatch(tf, kind, what))(_kind, _what)
for _name, _seeds in SEEDS.items():
    CASES[f"shared_shuffle_queue[{_name}]"] = (
        lambda seeds: lambda tf: shared_shuffle_queue(tf, seeds))(_seeds)
CASES["shared_shuffle_queue[min_after_dequeue]"] = lambda tf: shared_shuffle_queue(
    tf, (None, 7), min_after_dequeue=1)
for _fn in (shuffle_everything, shuffle_seed_attrs, shuffle_bad_min_after_dequeue,
            shuffle_min_after_dequeue, priority_order, priority_dequeue_many_waits_for_all,
            priority_bad_priority, priority_without_shapes, padding_batches, padding_bad_rank,
            padding_needs_shapes, from_list, from_list_errors):
    CASES[_fn.__name__] = _fn
