"""Collective ops between the CPU devices of one session, as TensorFlow 1.x's
collective_ops builds them: their NodeDefs and static shapes, what every member gets, the
errors of their builders, and a member left alone until its timeout."""

import importlib

import numpy as np
from observe import node_defs, outcome

DEVICES = 3


def _collective_ops(tf):
    package = "dtfnb.ops" if tf.__name__.startswith("dtfnb") else "tensorflow.python.ops"
    return importlib.import_module(f"{package}.collective_ops")


def _config(tf):
    return tf.ConfigProto(device_count={"CPU": DEVICES})


def _values(member, shape, dtype):
    return (np.arange(np.prod(shape)).reshape(shape) * (member + 1) - 3).astype(dtype)


def _all_reduce(merge_op, final_op, dtype, shape, members=DEVICES):
    def case(tf):
        ops = _collective_ops(tf)
        reduced = []
        for member in range(members):
            with tf.device(f"/cpu:{member}"):
                reduced.append(ops.all_reduce(tf.constant(_values(member, shape, dtype)),
                                              members, 1, 1, merge_op, final_op))
        with tf.Session(config=_config(tf)) as sess:
            got = sess.run(reduced)
        return node_defs(tf.get_default_graph()), reduced[0].get_shape(), got
    return case


def all_gather_of_members_shapes(tf):
    ops = _collective_ops(tf)
    gathered = []
    for member in range(2):
        with tf.device(f"/cpu:{member}"):
            gathered.append(ops.all_gather(tf.constant(_values(member, (2, 3), np.float32)),
                                           2, 4, 7))
    unknown = tf.placeholder(tf.float32, [None, 3])
    with tf.Session(config=_config(tf)) as sess:
        got = sess.run(gathered)
    return (node_defs(tf.get_default_graph()), [g.get_shape() for g in gathered],
            ops.all_gather(unknown, 2, 5, 1).get_shape(), got)


def broadcast_to_two_receivers(tf):
    ops = _collective_ops(tf)
    shape = tf.TensorShape([2, 2])
    with tf.device("/cpu:1"):
        sent = ops.broadcast_send(tf.constant([[1, 2], [3, 4]]), shape, tf.int32, 3, 2, 1)
    received = []
    for member in (0, 2):
        with tf.device(f"/cpu:{member}"):
            received.append(ops.broadcast_recv(shape, tf.int32, 3, 2, 1))
    with tf.Session(config=_config(tf)) as sess:
        got = sess.run([sent] + received)
    return node_defs(tf.get_default_graph()), [r.get_shape() for r in received], got


def builder_errors(tf):
    ops = _collective_ops(tf)
    t = tf.constant([1.0, 2.0])
    return (outcome(ops.all_reduce, t, 0, 1, 1), outcome(ops.all_gather, t, 0, 1, 1),
            outcome(ops.broadcast_send, t, tf.TensorShape([2]), tf.float32, 1, 1, 1),
            outcome(ops.broadcast_send, t, tf.TensorShape([3]), tf.float32, 2, 1, 1),
            outcome(ops.broadcast_send, t, tf.TensorShape([2]), tf.int32, 2, 1, 1),
            outcome(ops.broadcast_recv, tf.TensorShape([2]), tf.float32, 1, 1, 1))


def a_member_alone_times_out(tf):
    ops = _collective_ops(tf)
    with tf.device("/cpu:2"):
        alone = ops.all_reduce(tf.constant([1.0]), 2, 9, 9, timeout=0.3)
    with tf.Session(config=_config(tf)) as sess:
        error = outcome(sess.run, alone)
    return (type(error).__name__,
            "Collective has timed out waiting for other workers." in error.message)


CASES = {f"all_reduce:{merge}:{final}:{np.dtype(dtype).name}:{'x'.join(map(str, shape))}":
         _all_reduce(merge, final, dtype, shape)
         for merge, final, dtype, shape in [
             ("Add", "Id", np.float32, (7,)), ("Add", "Div", np.float32, (2, 5)),
             ("Mul", "Id", np.float64, (4,)), ("Min", "Id", np.int32, (5,)),
             ("Max", "Id", np.int64, (2, 2)), ("Add", "Div", np.float32, (1,)),
             ("Add", "Id", np.float32, ())]}
CASES.update({
    "all_reduce:one_member": _all_reduce("Add", "Div", np.float32, (3,), members=1),
    "all_gather_of_members_shapes": all_gather_of_members_shapes,
    "broadcast_to_two_receivers": broadcast_to_two_receivers,
    "builder_errors": builder_errors,
    "a_member_alone_times_out": a_member_alone_times_out,
})
