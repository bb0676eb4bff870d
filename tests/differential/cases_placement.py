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


def traced(tf, target, *steps, init=None, config=None, feed_dict=None, only=None):
    """Where each node ran in each traced step (fetches) of one new session on `target`,
    for the nodes named in `only` if given."""
    with tf.Session(target, config=config) as sess:
        if init is not None:
            sess.run(init)
        seen = [placed(tf, sess, fetches, feed_dict) for fetches in steps]
    return [{k: v for k, v in step.items() if only is None or k in only} for step in seen]


# Ops on a resource or a reference run where it lives -------------------------------


def producer_trainer(tf):
    """The queue and the variable on the ps, the ops that use them built on a worker."""
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(3, tf.float32, name="q")
        var = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:0"):
        two = tf.constant(2.0, name="two")
        ops = [queue.enqueue(1.0), queue.size(), tf.assign_add(var, two), var * 3.0,
               tf.identity(var), queue.dequeue(), queue.close()]
    # (TensorFlow's queue asks for "/device:CPU:*" inside the block: tested with queues)
    return (requested(tf.get_default_graph(), skip=("q",)),
            traced(tf, servers["worker"][1].target, ops[:5], ops[5], ops[6],
                   init=var.initializer))


def assign_and_read_on_a_worker(tf):
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        var = tf.Variable([1.0, 2.0], name="v")
    with tf.device("/job:worker/task:1"):
        two = tf.constant([2.0, 2.0], name="two")
        ops = [tf.assign(var, two), tf.assign_sub(var, two),
               tf.is_variable_initialized(var), var.read_value(), var.value() + 1.0]
    return (requested(tf.get_default_graph()),
            traced(tf, servers["worker"][0].target, ops, init=var.initializer))


def accumulator_on_the_ps(tf):
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2], name="acc")
    with tf.device("/job:worker/task:0"):
        grad = tf.constant([1.0, 3.0], name="g")
        ops = [acc.apply_grad(grad, local_step=0, name="apply"), acc.num_accumulated("count"),
               acc.set_global_step(1, name="set_step")]
    # (TensorFlow 2.21 builds its Resource* accumulator ops: tested with accumulators)
    return traced(tf, servers["worker"][0].target, ops[0], ops[1], ops[2],
                  only=("acc", "g", "apply", "count", "set_step"))


def reader_on_the_ps(tf):
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        reader = tf.TextLineReader(name="reader")
    with tf.device("/job:worker/task:0"):
        ops = [reader.num_records_produced(), reader.num_work_units_completed(),
               reader.reset()]
    return traced(tf, servers["worker"][1].target, ops[:2], ops[2])


def queue_kinds_on_the_ps(tf):
    servers = cluster(tf)
    with tf.device("/job:ps/task:0"):
        queues = [tf.FIFOQueue(4, tf.int32, shapes=[[]], name="fifo"),
                  tf.RandomShuffleQueue(4, 0, tf.int32, shapes=[[]], seed=1, name="shuffle"),
                  tf.PaddingFIFOQueue(4, tf.int32, shapes=[[None]], name="padding"),
                  tf.PriorityQueue(4, [tf.int32], shapes=[[]], name="priority")]
    with tf.device("/job:worker/task:1"):
        one = tf.constant(1, name="one")
        enqueues = [queues[0].enqueue(one), queues[1].enqueue(one),
                    queues[2].enqueue([tf.constant([1, 2], name="row")]),
                    queues[3].enqueue([tf.constant(7, tf.int64, name="p"), one])]
        sizes = [q.size() for q in queues]
        dequeues = [queues[0].dequeue(), queues[1].dequeue(), queues[2].dequeue_many(1),
                    queues[3].dequeue()]
        closed = [q.is_closed() for q in queues]
    return traced(tf, servers["worker"][0].target, enqueues, sizes, dequeues, closed)


def chained_devices_in_a_cluster(tf):
    """The chapter's pinning: partial specs resolve against the master's task. (Fed, so
    that TensorFlow's graph optimizer folds no constants away.)"""
    servers = cluster(tf, ps=2, workers=2)
    a = tf.placeholder(tf.float32, name="a")
    one = tf.placeholder(tf.float32, name="one")
    with tf.device("/job:ps"):
        b = tf.add(a, one, name="on_ps")
    with tf.device("/job:ps/task:1"):
        c = tf.add(b, one, name="on_ps1")
    with tf.device("/job:worker"):
        d = tf.add(c, one, name="on_worker")
    with tf.device("/task:0"):
        e = tf.add(d, one, name="task0")
    with tf.device("/cpu:0"):
        f = tf.add(e, one, name="cpu0")
    return traced(tf, servers["worker"][1].target, [f], feed_dict={a: 1.0, one: 1.0})


def variables_on_two_ps_tasks_with_the_replica_device_setter(tf):
    servers = cluster(tf, ps=2, workers=2)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  worker_device="/job:worker/task:1")):
        weights = [tf.Variable(float(i), name=f"w{i}") for i in range(3)]
        total = tf.add_n(weights, name="total")
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(weights[0], total, name="train")
    return (requested(tf.get_default_graph()),
            traced(tf, servers["worker"][1].target, [train, step],
                   init=tf.global_variables_initializer()))


def replica_device_setter_with_a_cluster_and_ps_ops(tf):
    spec = tf.train.ClusterSpec({"ps": ["a:1", "b:1"], "worker": ["c:1"]})
    with tf.device(tf.train.replica_device_setter(cluster=spec, ps_ops=["VariableV2",
                                                                       "FIFOQueueV2"])):
        v = tf.Variable(1.0, name="v")
        q = tf.FIFOQueue(2, tf.float32, name="q")
        w = tf.Variable(2.0, name="w")
        q.enqueue(v + w, name="put")  # (the queue itself: tested with queues)
    with tf.device("/job:worker/task:0"), tf.device(
            tf.train.replica_device_setter(ps_tasks=2, ps_device="/job:param")):
        tf.Variable(3.0, name="x")
        tf.constant(1.0, name="c")
    return requested(tf.get_default_graph(), skip=("q",))


def replica_device_setter_with_a_ps_strategy(tf):
    def last_task(op):
        return 2

    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=last_task,
                                                  merge_devices=False)):
        tf.Variable(1.0, name="v")
        with tf.device("/job:other/task:7"):
            tf.Variable(2.0, name="w")
            tf.constant(1.0, name="c")
    return requested(tf.get_default_graph())


def unknown_job_in_a_cluster(tf):
    servers = cluster(tf)
    with tf.device("/job:chief/task:0"):
        bad = tf.constant(1.0, name="bad")
    with tf.Session(servers["worker"][0].target) as sess:
        return outcome(sess.run, bad)


def soft_placement_in_a_cluster(tf):
    servers = cluster(tf)
    a = tf.placeholder(tf.float32, name="a")
    with tf.device("/job:worker/task:1/device:GPU:0"):
        x = tf.add(a, a, name="x")
    with tf.device("/job:ps/device:CPU:3"):
        y = tf.add(x, a, name="y")
    config = tf.ConfigProto(allow_soft_placement=True)
    return traced(tf, servers["worker"][0].target, [y], config=config, feed_dict={a: 1.0})


CASES = {f.__name__: f for f in (
    producer_trainer, assign_and_read_on_a_worker, accumulator_on_the_ps, reader_on_the_ps,
    queue_kinds_on_the_ps, chained_devices_in_a_cluster,
    variables_on_two_ps_tasks_with_the_replica_device_setter,
    replica_device_setter_with_a_cluster_and_ps_ops, replica_device_setter_with_a_ps_strategy,
    unknown_job_in_a_cluster, soft_placement_in_a_cluster)}
