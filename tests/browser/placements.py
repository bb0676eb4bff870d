"""Placement cell outputs (`application/vnd.dtfnb.placement+json`, extension/src/protocol.ts's
IRunPlacement) made from real dtfnb graphs, for the renderer's browser tests: the nodes,
devices and inputs come from the graph; a graph built under replica_device_setter names
its devices, which are resolved here as the placer would (CPU:0 of the task, an op without
a device on its first consumer's); the transfers are the inputs whose devices differ, with
the bytes of their static shapes (the batch dimension taken as BATCH)."""

import re

import dtfnb as tf
from dtfnb.notebook import palette

PLACEMENT_MIME = "application/vnd.dtfnb.placement+json"
BATCH = 50


def resolved(device):
    """"/job:ps/task:1" -> "/job:ps/replica:0/task:1/device:CPU:0"."""
    job = re.search(r"/job:([^/]+)", device).group(1)
    task = re.search(r"/task:(\d+)", device)
    kind = re.search(r"/device:([^/]+)", device)
    return (f"/job:{job}/replica:0/task:{task.group(1) if task else 0}"
            f"/device:{kind.group(1) if kind else 'CPU:0'}")


def _bytes(tensor):
    dims = tensor.shape.as_list() if tensor.shape.dims is not None else None
    if dims is None:
        return None
    count = 1
    for dim in dims:
        count *= BATCH if dim is None else dim
    return count * tensor.dtype.size


def executed(fetches):
    """The ops a run of `fetches` executes: theirs and those they need, in graph order."""
    needed, todo = set(), [fetch.op if hasattr(fetch, "op") else fetch for fetch in fetches]
    while todo:
        op = todo.pop()
        if op not in needed:
            needed.add(op)
            todo.extend(tensor.op for tensor in op.inputs)
            todo.extend(op.control_inputs)
    return [op for op in fetches[0].graph.get_operations() if op in needed]


def placement_of(fetches, step=1, cell=5, target="grpc://127.0.0.1:2222", error=""):
    """The IRunPlacement of a run of `fetches`."""
    ops = executed(fetches)
    consumers = {}
    for op in ops:
        for tensor in op.inputs:
            consumers.setdefault(tensor.op.name, []).append(op)
    devices = {}

    def device_of(op):
        if op.name not in devices:
            devices[op.name] = resolved(op.device) if op.device else None
            if devices[op.name] is None:
                firsts = consumers.get(op.name, [])
                devices[op.name] = device_of(firsts[0]) if firsts else \
                    resolved("/job:worker/task:0")
        return devices[op.name]

    nodes = [{"name": op.name, "op": op.type, "device": device_of(op), "requested": op.device,
              "inputs": [t.name for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs]}
             for op in ops]
    transfers = {}
    for op in ops:
        for tensor in op.inputs:
            src, dst = device_of(tensor.op), device_of(op)
            if src != dst:
                edge = transfers.setdefault((tensor.name, dst), {
                    "tensor": tensor.name, "src": src, "dst": dst, "consumers": [],
                    "bytes": _bytes(tensor)})
                edge["consumers"].append(op.name)
    used = sorted({node["device"] for node in nodes}, key=palette.sort_key)
    return {
        "version": 1,
        "run": {"id": f"s1/{step}", "session": "s1", "target": target,
                "task": "/job:worker/replica:0/task:0", "step": step, "number": step, "cell": cell,
                "time": 1.7e9 + step, "duration": 0.01, "error": error, "plan": "s1/1",
                "transfer_bytes": [t["bytes"] for t in transfers.values()]},
        "devices": [{"name": d, "short": palette.short(d), "colour": palette.colour(d),
                     "emulated": False, "stopped_at": None} for d in used],
        "nodes": nodes,
        "transfers": list(transfers.values()),
    }


def linear_regression():
    """The fetches of a training step of the chapter's first cluster example: a 3-feature
    linear regression trained by GradientDescent, its variables on 2 ps tasks."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            ps_tasks=2, worker_device="/job:worker/task:0")):
        X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
        y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
        with tf.name_scope("dnn"):
            w = tf.Variable(tf.ones([3, 1]), name="w")
            b = tf.Variable(tf.zeros([1]), name="b")
            prediction = tf.matmul(X, w) + b
        loss = tf.reduce_mean(tf.square(prediction - y), name="loss")
        training_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return [training_op, loss]


def mlp(workers=3):
    """The fetches of a training step of the chapter's MNIST MLP (784-300-100-10, softmax
    cross entropy, GradientDescent) replicated in-graph over `workers` workers, its
    variables on 2 ps tasks: each worker computes the gradients of its share of the
    batch, the ps tasks apply their mean."""
    graph = tf.Graph()
    with graph.as_default():
        optimizer = tf.train.GradientDescentOptimizer(0.01)
        tower_gradients, losses = [], []
        for i in range(workers):
            with tf.device(tf.train.replica_device_setter(
                    ps_tasks=2, worker_device=f"/job:worker/task:{i}")), \
                    tf.name_scope(f"tower_{i}"):
                X = tf.placeholder(tf.float32, shape=(None, 784), name="X")
                y = tf.placeholder(tf.int64, shape=(None,), name="y")
                with tf.variable_scope("dnn", reuse=i > 0):
                    hidden1 = tf.layers.dense(X, 300, activation=tf.nn.relu, name="hidden1")
                    hidden2 = tf.layers.dense(hidden1, 100, activation=tf.nn.relu,
                                              name="hidden2")
                    logits = tf.layers.dense(hidden2, 10, name="outputs")
                xentropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                          logits=logits)
                loss = tf.reduce_mean(xentropy, name="loss")
                tower_gradients.append(optimizer.compute_gradients(loss))
                losses.append(loss)
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)), tf.name_scope("average"):
            averaged = [(tf.add_n([g for g, _ in pairs]) / workers, pairs[0][1])
                        for pairs in zip(*tower_gradients)]
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            training_op = optimizer.apply_gradients(averaged)
    return [training_op, *losses]


if __name__ == "__main__":
    for build in (linear_regression, mlp):
        data = placement_of(build())
        print(build.__name__, len(data["nodes"]), "nodes", len(data["transfers"]), "transfers",
              [d["short"] for d in data["devices"]])
