"""A few cases that touch every kind of observation."""

from observe import node_defs, outcome, run


def add(tf):
    a = tf.constant([1.0, 2.0])
    b = a + a
    return b.op.type, run(tf, b), b, b.dtype, b.get_shape()


def dequeue_timeout(tf):
    q = tf.FIFOQueue(2, tf.float32)
    return run(tf, q.dequeue(), timeout_ms=10)


def queue_nodes(tf):
    q = tf.FIFOQueue(2, [tf.int32, tf.string], shapes=[[], [2]], name="q")
    q.enqueue([1, [b"a", b"b"]])
    return node_defs(tf.get_default_graph())


def errors(tf):
    q = tf.FIFOQueue(2, tf.float32)
    return outcome(q.enqueue, ["x"])


def iterate_tensor(tf):
    t = tf.constant([1, 2])
    return outcome(list, t), outcome(lambda: [a for a in t])


CASES = {f.__name__: f for f in (add, dequeue_timeout, queue_nodes, errors, iterate_tensor)}
