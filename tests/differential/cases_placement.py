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


# Variables: initializers run on the variable's device --------------------------------


def initializers_of_get_variable(tf):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [], initializer=tf.constant_initializer(3.0))
        v = tf.Variable(lambda: tf.ones([2]), name="v")
        u = tf.Variable([1.0, 2.0], name="u")
    init = tf.global_variables_initializer()
    return (requested(tf.get_default_graph()),
            traced(tf, "", [init], [w + b, v + u], config=config))


def initializers_on_the_ps(tf):
    servers = cluster(tf)
    x = tf.placeholder(tf.float32, [1, 2], name="x")
    with tf.device(tf.train.replica_device_setter(ps_tasks=1,
                                                  worker_device="/job:worker/task:0")):
        with tf.variable_scope("dense"):
            kernel = tf.get_variable("kernel", [2, 1], initializer=tf.ones_initializer())
            bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
        y = [tf.matmul(x, kernel, name="mm"), tf.negative(bias, name="neg")]
    init = tf.global_variables_initializer()
    with tf.Session(servers["worker"][0].target) as sess:
        return (requested(tf.get_default_graph()), placed(tf, sess, init),
                placed(tf, sess, y, {x: [[1.0, 2.0]]}))


def group_across_devices(tf):
    with tf.device("/job:ps/task:1"):
        a = tf.no_op(name="a")
        b = tf.no_op(name="b")
    with tf.device("/job:worker"):
        c = tf.no_op(name="c")
        one = tf.group(a, b)
        two = tf.group(c, a, b, name="both")
    return requested(tf.get_default_graph()), [str(op.name) for op in two.control_inputs], one


# Devices: scopes, functions, colocation, soft placement -----------------------------

SCOPES = ["/job:ps", "/job:ps/task:1", "/replica:1/task:2", "/cpu:0", "/device:GPU:1",
          "/job:worker/device:CPU:*"]


def nested_scopes(outer, inner):
    def case(tf):
        with tf.device(outer), tf.device(inner):
            a = tf.constant(1.0, name="a")
            with tf.device(None):
                b = tf.constant(1.0, name="b")
            with tf.device(""):
                c = tf.constant(1.0, name="c")
        return a.device, b.device, c.device
    case.__name__ = f"nested_scopes:{outer}+{inner}"
    return case


def device_functions(tf):
    def by_type(op):
        return "/cpu:1" if op.type == "Const" else ""

    with tf.device("/job:worker/task:2"), tf.device(by_type):
        a = tf.constant(1.0, name="a")
        b = tf.add(a, a, name="b")
        with tf.device("/device:GPU:0"):
            c = tf.add(b, a, name="c")
    with tf.device(by_type), tf.device("/job:ps"):
        d = tf.constant(1.0, name="d")
    with tf.device(lambda op: tf.DeviceSpec(job="ps", task=3)):
        e = tf.constant(1.0, name="e")
    return [t.device for t in (a, b, c, d, e)]


def device_function_returning_none(tf):
    with tf.device(lambda op: None):
        return tf.constant(1.0, name="a").device


def colocate_with_an_op(tf):
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0, name="a")
        free = tf.constant(1.0, name="free")
    with tf.device("/job:worker"):
        with tf.colocate_with(a):
            b = tf.add(a, 1.0, name="b")
            with tf.device("/cpu:0"):
                c = tf.add(b, 1.0, name="c")
            with tf.colocate_with(free):
                d = tf.add(b, 1.0, name="d")
            with tf.colocate_with(free, ignore_existing=True):
                e = tf.add(b, 1.0, name="e")
        with tf.colocate_with(b.op):
            f = tf.add(b, 1.0, name="f")
    del c, d, e, f
    return requested(tf.get_default_graph())


def placed_locally(tf):
    config = tf.ConfigProto(device_count={"CPU": 3})
    a = tf.placeholder(tf.float32, name="a")
    x = tf.placeholder(tf.float32, name="x")
    with tf.device("/cpu:2"):
        b = tf.add(a, x, name="b")
    with tf.colocate_with(b):
        c = tf.add(b, a, name="c")
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:1"):
        d = tf.add(c, a, name="d")
    e = tf.add(d, a, name="e")
    with tf.Session(config=config) as sess:
        return placed(tf, sess, e, {a: 1.0, x: 2.0})


def soft_placement_locally(tf):
    a = tf.placeholder(tf.float32, name="a")
    with tf.device("/gpu:0"):
        b = tf.add(a, a, name="b")
    with tf.device("/cpu:3"):
        c = tf.add(b, a, name="c")
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        return placed(tf, sess, c, {a: 1.0})


def absent_devices(kind):
    def case(tf):
        with tf.device(kind):
            bad = tf.constant(1.0, name="bad")
        with tf.Session() as sess:
            return outcome(sess.run, bad)
    case.__name__ = f"absent_device:{kind}"
    return case


def pruned_placement(session_kind, pruned):
    """A node pinned to an absent device breaks only the runs that need it when the
    session places the pruned graph (InteractiveSession always does), every run else."""
    def case(tf):
        with tf.device("/device:GPU:0"):
            absent = tf.constant(1.0, shape=[1, 2], name="absent")
        here = tf.constant(2.0, shape=[1, 2], name="here")
        config = tf.ConfigProto()
        if pruned is not None:
            config.graph_options.place_pruned_graph = pruned
        sess = getattr(tf, session_kind)(config=config)
        try:
            return (outcome(sess.run, here), outcome(sess.run, absent),
                    outcome(sess.run, here), config.graph_options.place_pruned_graph)
        finally:
            sess.close()
    case.__name__ = f"pruned_placement:{session_kind}:{pruned}"
    return case


def replica_device_setter(ps_tasks, worker_device):
    def case(tf):
        with tf.device("/job:worker/task:3"), tf.device(tf.train.replica_device_setter(
                ps_tasks=ps_tasks, worker_device=worker_device)):
            weights = [tf.Variable(float(i), name=f"w{i}") for i in range(4)]
            tf.add_n(weights, name="total")
            with tf.device("/job:ps/task:0"):
                tf.Variable(9.0, name="pinned")
        return requested(tf.get_default_graph())
    case.__name__ = f"replica_device_setter:{ps_tasks}:{worker_device}"
    return case


CASES = {f.__name__: f for f in (
    producer_trainer, assign_and_read_on_a_worker, accumulator_on_the_ps, reader_on_the_ps,
    queue_kinds_on_the_ps, chained_devices_in_a_cluster,
    variables_on_two_ps_tasks_with_the_replica_device_setter,
    replica_device_setter_with_a_cluster_and_ps_ops, replica_device_setter_with_a_ps_strategy,
    unknown_job_in_a_cluster, soft_placement_in_a_cluster, initializers_of_get_variable,
    initializers_on_the_ps, group_across_devices, device_functions,
    device_function_returning_none, colocate_with_an_op,
    placed_locally, soft_placement_locally,
    *(nested_scopes(outer, inner) for outer in SCOPES for inner in SCOPES if outer != inner),
    *(pruned_placement(kind, pruned) for kind in ("Session", "InteractiveSession")
      for pruned in (None, True, False)),
    *(replica_device_setter(ps_tasks, worker) for ps_tasks in (1, 2, 3)
      for worker in ("/job:worker", "/job:worker/task:1/cpu:0")),
    *(absent_devices(kind) for kind in ("/cpu:5", "/gpu:0", "/job:ps", "/device:TPU:0",
                                                "/job:localhost/task:1", "/replica:1")))}
