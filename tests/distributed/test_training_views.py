"""StalenessPlot and ClusterView on a real cluster (in-process tasks over gRPC or Unix
sockets): asynchronous training shows each worker's staleness and loss while it runs;
a traced step across tasks is one timeline, with its tensors' Send -> Recv flows, and one
Chrome trace; the task table counts each task's work and greys a stopped one."""

import threading

import numpy as np

import dtfnb as tf
from dtfnb.notebook import StalenessPlot
from tests.helpers import poll_for

PS = "/job:ps/replica:0/task:0"
WORKERS = ["/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"]


def _regression(tasks, index):
    """A replica of a linear regression on worker `index`: its graph, training op, loss,
    feeds and global step (variables on the ps, by replica_device_setter)."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            cluster=tasks.spec, worker_device=f"/job:worker/task:{index}")):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        init = tf.global_variables_initializer()
    return graph, train, loss, (x, y), init


def _batch(rng):
    x = rng.rand(16, 3).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def test_async_training_shows_each_workers_staleness_and_loss_while_it_runs(cluster):
    tasks = cluster({"ps": 1, "worker": 2})
    stop, ready = threading.Event(), threading.Barrier(2)
    errors = []

    def replica(index):
        graph, train, loss, (x, y), init = _regression(tasks, index)
        try:
            with tf.Session(tasks.target("worker", index), graph=graph) as sess:
                if index == 0:
                    sess.run(init)
                ready.wait(10)
                rng = np.random.RandomState(index)
                for _ in range(2000):   # until the test has seen enough, at most 2000 steps
                    if stop.is_set():
                        break
                    features, labels = _batch(rng)
                    sess.run([train, loss], {x: features, y: labels})
        except Exception as err:   # handed to the test
            errors.append(err)

    with StalenessPlot(list(tasks.values())) as plot:
        first = bytes(plot._view.value)
        clients = [threading.Thread(target=replica, args=(i,)) for i in range(2)]
        for client in clients:
            client.start()
        try:
            seen = poll_for(lambda: all(plot.staleness.histogram(w) and
                                        len(plot.staleness.losses(w)) >= 3 for w in WORKERS)
                            and bytes(plot._view.value) != first, 30)
            training = all(client.is_alive() for client in clients)
        finally:
            stop.set()
            for client in clients:
                client.join(30)
    assert not errors, errors
    assert seen and training, "the plot must show every worker's gradients during training"
    assert plot.staleness.workers() == WORKERS
    for worker in WORKERS:
        losses = [loss for _, loss in plot.staleness.losses(worker)]
        assert losses[-1] < losses[0]   # it learns
        steps = [step for step, _ in plot.staleness.losses(worker)]
        assert steps == sorted(steps)   # against the global step, as it grew
    counts = sum(n for w in WORKERS for _, n in plot.staleness.histogram(w))
    assert counts == sum(len(plot.staleness.points[w]) for w in WORKERS)
