"""Placement: requested devices, colocation, and where each node ran (FULL_TRACE step
stats), locally and on in-process clusters of ps and worker tasks."""

from observe import cluster, outcome, placed


def requested(graph, skip=()):
    """{node: [requested device, colocation classes]} as the NodeDefs say, but for the
    nodes named in `skip`."""
    return {op.name: [op.node_def.device, [c.decode() for c in _classes(op)]]
            for op in graph.get_operations() if op.name not in skip}


def _classes(op):
    return op.node_def.attr["_class"].list.s if "_class" in op.node_def.attr else []


def traced(tf, target, *steps, init=None, config=None):
    """Where each node ran in each traced step (fetches) of one new session on `target`."""
    with tf.Session(target, config=config) as sess:
        if init is not None:
            sess.run(init)
        return [placed(tf, sess, fetches) for fetches in steps]


# Ops on a resource or a reference run where it lives -------------------------------


def producer_trainer(tf):
    """The queue and the variable on the ps, the ops that use them built on a worker."""
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(3, tf.float32, name="q")
        var = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:0"):
        ops = [queue.enqueue(1.0), queue.size(), tf.assign_add(var, tf.constant(2.0, name="two")), var * 3.0,
               tf.identity(var), queue.dequeue(), queue.close()]
    # (TensorFlow's queue asks for "/device:CPU:*" inside the block: tested with queues)
    return (requested(tf.get_default_graph(), skip=("q",)),
            traced(tf, servers["worker"][1].target, ops[:5], ops[5], ops[6],
                   init=var.initializer))

CASES = {f.__name__: f for f in (producer_trainer,)}
