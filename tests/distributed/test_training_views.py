"""StalenessPlot and ClusterView on a real cluster (in-process tasks over gRPC or Unix
sockets): asynchronous training shows each worker's staleness and loss while it runs;
a traced step across tasks is one timeline, with its tensors' Send -> Recv flows, and one
Chrome trace; the task table counts each task's work and greys a stopped one; the bytes
per step of each task and each link are what a step moves."""

import json
import re
import threading

import numpy as np

import dtfnb as tf
from dtfnb.notebook import ClusterView, StalenessPlot
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
        first = plot._view.value
        clients = [threading.Thread(target=replica, args=(i,)) for i in range(2)]
        for client in clients:
            client.start()
        try:
            seen = poll_for(lambda: all(plot.staleness.histogram(w) and
                                        len(plot.staleness.losses(w)) >= 3 for w in WORKERS)
                            and plot._view.value != first, 30)
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


def _traced_step(tasks):
    graph, train, loss, (x, y), init = _regression(tasks, 0)
    metadata = tf.RunMetadata()
    with tf.Session(tasks.target("worker", 0), graph=graph) as sess:
        sess.run(init)
        features, labels = _batch(np.random.RandomState(0))
        sess.run([train, loss], {x: features, y: labels}, run_metadata=metadata,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    return metadata


def test_a_traced_step_across_tasks_is_one_timeline_with_its_transfers(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    with ClusterView(list(tasks.values())) as view:
        _traced_step(tasks)
        assert poll_for(lambda: len(view.tasks.timeline().lanes) == 2, 10)
        timeline = view.tasks.timeline()
        html = view._html()
        trace = json.loads(view.to_chrome_trace())
    assert list(timeline.lanes) == [PS + "/device:CPU:0", WORKERS[0] + "/device:CPU:0"]
    names = {bar.name for bars in timeline.lanes.values() for bar in bars}
    assert {"w/read", "loss", "GradientDescent/update_w/ApplyGradientDescent"} <= names
    # w/read:0 goes from the ps to the worker, and the gradient back: Send -> Recv pairs
    crossing = {(flow.tensor, flow.source, flow.destination) for flow in timeline.flows}
    assert ("w/read:0", PS + "/device:CPU:0", WORKERS[0] + "/device:CPU:0") in crossing
    assert any(flow.source.startswith(WORKERS[0]) and flow.destination.startswith(PS)
               for flow in timeline.flows)
    assert html.count("marker-end=") == len(timeline.flows)
    assert "ps:0 CPU:0</text>" in html and "worker:0 CPU:0</text>" in html
    events = trace["traceEvents"]
    processes = [e["args"]["name"] for e in events if e["name"] == "process_name"]
    assert processes == [PS, WORKERS[0]]
    starts = sorted((e["id"], e["name"]) for e in events if e["ph"] == "s")
    ends = sorted((e["id"], e["name"]) for e in events if e["ph"] == "f")
    assert starts and starts == ends and len(starts) == len(timeline.flows)


def test_the_task_table_counts_each_tasks_work_and_greys_a_stopped_one(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    with ClusterView(list(tasks.values())) as view:
        _traced_step(tasks)
        health = view.tasks.health
        assert poll_for(lambda: PS in health and WORKERS[0] in health
                        and health[PS].graphs_run and health[WORKERS[0]].steps_run >= 2, 10)
        ps, worker = health[PS], health[WORKERS[0]]
        assert ps.steps_run == 0 and ps.bytes_sent > 0   # it ran no step but served them
        assert worker.graphs_run >= 2
        tasks["ps", 0].stop()
        assert poll_for(lambda: re.search(r"stopped at \d\d:\d\d", view._html()), 10)
        rows = {row for row in re.findall(r"<tr[^>]*>(.*?)</tr>", view._html()) if PS in row}
    (stopped,) = rows
    assert stopped.endswith("<td></td><td></td>")   # no rates once stopped
    assert "serving" in view._html()   # the worker still serves


def test_bytes_per_step_per_task_and_per_link_are_what_each_step_pulls(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(tf.ones([1000]), name="v")   # 4000 bytes
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(v)
    with ClusterView(list(tasks.values())) as view, \
            tf.Session(tasks.target("worker", 0)) as sess:
        sess.run(v.initializer)
        for _ in range(3):
            sess.run(total)
        # the table lists a task from its first HealthEvent (each second); each task's
        # stream comes in on its own
        assert poll_for(lambda: PS in view._html() and WORKERS[0] in view._html()
                        and "0 B</td><td>4.0 KB" in view._html()
                        and "4.0 KB</td><td>0 B" in view._html(), 10)
        assert view.traffic.per_step(PS) == (4000, 0)
        assert view.traffic.per_step(WORKERS[0]) == (0, 4000)
        assert (view.traffic.link(PS, WORKERS[0]), view.traffic.link(WORKERS[0], PS)) == (
            4000, None)
        rows = {row.split("</td>")[0]: re.findall(r"<td[^>]*>(.*?)</td>", row)
                for row in re.findall(r"<tr[^>]*>(.*?)</tr>", view._html()) if "<td" in row}
        (ps_row,) = [cells for name, cells in rows.items() if PS in name]
        assert ps_row[6:8] == ["4.0 KB", "0 B"]   # sent and received per step
        links = view._html().split('class="dtfnb-links"')[1]
        assert re.search(r"ps:0</th><td>&#8212;</td><td>4.0 KB</td>", links)
        tasks["ps", 0].stop()
        assert poll_for(lambda: "ps:0 (stopped)" in view._html(), 10)
