"""The nodes a step adds (feeds, fetches, the _SOURCE each device's executor starts
from), by name and device, as a FULL_TRACE step shows them: locally and on an
in-process cluster. Graph nodes are left out (TensorFlow's grappler may rewrite them),
and so are transfers, which each traces its own way: TensorFlow as RecvTensor records
of those between tasks, dtfnb as both halves of each _Send/_Recv pair, labelled
"<tensor> <src device> -> <dst device>" for a timeline's flow arrows."""

import numpy as np
from observe import cluster, step_stats

TWO_CPUS = {"CPU": 2}


def added(tf, target, fetches, feed_dict=None, config=None):
    """{device: sorted names} of the traced nodes that are not nodes of the graph."""
    with tf.Session(target, config=config) as sess:
        sess.run(tf.global_variables_initializer())
        stats = step_stats(tf, sess, fetches, feed_dict)
        graph = {op.name for op in sess.graph.get_operations()}
    names = {}
    for dev in stats.dev_stats:
        step = sorted(n.node_name for n in dev.node_stats
                      if n.node_name not in graph and n.node_name != "RecvTensor"
                      and " -> " not in n.timeline_label)
        if step:
            names[dev.device] = step
    return names


def local(tf, fetches, feed_dict=None):
    return added(tf, "", fetches, feed_dict, tf.ConfigProto(device_count=TWO_CPUS))


def feed_and_fetch_on_the_client_device(tf):
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, name="a")
        c = tf.multiply(a, a, name="c")
    return local(tf, c, {a: 3.0})


def feed_and_fetch_of_another_device(tf):
    with tf.device("/cpu:1"):
        a = tf.placeholder(tf.float32, name="a")
        c = tf.add(a, a, name="c")
    return local(tf, c, {a: 3.0})


def feeds_and_fetches_numbered_in_sorted_order(tf):
    with tf.name_scope("scope"):
        x = tf.placeholder(tf.float32, name="x")
        y = tf.placeholder(tf.float32, name="y")
    with tf.device("/cpu:1"):
        z = tf.add(x, y, name="z")
    w = tf.subtract(x, y, name="w")
    return local(tf, [z, w, z], {y: 1.0, x: 2.0})


def a_second_output(tf):
    values = tf.placeholder(tf.int32, [4], name="values")
    first, second = tf.split(values, 2, name="halves")
    return local(tf, [second, first], {values: np.arange(4, dtype=np.int32)})


def a_target_has_no_retval(tf):
    a = tf.placeholder(tf.float32, name="a")
    with tf.device("/cpu:1"):
        var = tf.Variable(0.0, name="v")
        update = tf.assign_add(var, a)
    return local(tf, update.op, {a: 1.0})


def a_fed_tensor_fetched(tf):
    a = tf.placeholder(tf.float32, name="a")
    b = tf.placeholder(tf.float32, name="b")
    return local(tf, [a, b * 2.0], {a: 1.0, b: 2.0})


def on_a_cluster(tf):
    """Feeds and fetches cross from and to the client: no node of theirs is traced."""
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(2.0, name="v")
    with tf.device("/job:worker/task:0"):
        a = tf.placeholder(tf.float32, name="a")
    with tf.device("/job:worker/task:1"):
        b = tf.multiply(a, var, name="b")
    with tf.device("/job:worker/task:0"):
        c = tf.add(b, a, name="c")
    return added(tf, servers["worker"][0].target, [c, b], {a: 3.0})


CASES = {f.__name__: f for f in (
    feed_and_fetch_on_the_client_device, feed_and_fetch_of_another_device,
    feeds_and_fetches_numbered_in_sorted_order, a_second_output, a_target_has_no_retval,
    a_fed_tensor_fetched, on_a_cluster)}
