"""Placement cell outputs (`application/vnd.dtfnb.placement+json`, extension/src/protocol.ts's
IRunPlacement) of real steps, for the renderer's browser tests: each graph is run once on
a cluster of in-process servers, and the placement is what the kernel side makes of the
master's monitor stream, as PlacementView shows it."""

import numpy as np

import dtfnb as tf
from dtfnb.notebook.state import Runs
from tests.helpers import Cluster

PLACEMENT_MIME = "application/vnd.dtfnb.placement+json"
BATCH = 50


def placement_of(build, workers=1):
    """The IRunPlacement of one step of the graph `build()` returns as (graph, fetches,
    feed of placeholder name -> shape), run on 2 ps tasks and `workers` workers with
    worker:0 as master."""
    graph, fetches, feeds = build()
    with Cluster({"ps": 2, "worker": workers}) as cluster:
        events = cluster["worker", 0].events.subscribe(("plan", "step"))
        rng = np.random.RandomState(0)
        with graph.as_default(), tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {}
            for name, shape in feeds.items():   # labels 0..9 where the dtype is an integer
                tensor = graph.get_tensor_by_name(name)
                feed[tensor] = (rng.rand(*shape) * 10).astype(tensor.dtype.as_numpy_dtype)
            sess.run(fetches, feed)
        runs = Runs()
        runs.targets[sess._handle] = cluster.target("worker", 0)
        for event in iter(lambda: events.get(timeout=0), None):
            runs.apply(event)
        events.close()
    return runs.run_placement(runs.latest())


def linear_regression(task=0):
    """A training step of the chapter's first cluster example, run by worker `task`: a
    3-feature linear regression trained by GradientDescent, its variables on 2 ps tasks,
    with a global step; (graph, [training op, loss], feeds)."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            ps_tasks=2, worker_device=f"/job:worker/task:{task}")):
        X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
        y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
        with tf.name_scope("dnn"):
            w = tf.Variable(tf.ones([3, 1]), name="w")
            b = tf.Variable(tf.zeros([1]), name="b")
            prediction = tf.matmul(X, w) + b
        loss = tf.reduce_mean(tf.square(prediction - y), name="loss")
        global_step = tf.train.get_or_create_global_step()
        training_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=global_step)
    return graph, [training_op, loss], {"X:0": (BATCH, 3), "y:0": (BATCH, 1)}


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
    feeds = {f"tower_{i}/{name}:0": shape for i in range(workers)
             for name, shape in (("X", (BATCH, 784)), ("y", (BATCH,)))}
    return graph, [training_op, *losses], feeds


if __name__ == "__main__":
    for build in (linear_regression, mlp):
        data = placement_of(build, 3 if build is mlp else 1)
        print(build.__name__, len(data["nodes"]), "nodes", len(data["transfers"]), "transfers",
              [d["short"] for d in data["devices"]])
