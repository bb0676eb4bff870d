"""What the monitor stream tells of each step across tasks: the plan it ran (PlanEvent),
the bytes each of its transfers moved and the scalars it fetched (StepEvent), the work
each task did (HealthEvent), and a traced step's stats from every task."""

import itertools

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch
from tests.helpers import poll_for

PS0, PS1 = "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"
WORKER0 = "/job:worker/replica:0/task:0/device:CPU:0"
WORKER1 = "/job:worker/replica:0/task:1/device:CPU:0"
BATCH = {"x": np.ones([4, 3], np.float32), "t": np.zeros([4, 1], np.float32)}


def _regression(tasks):
    """A linear regression of 3 features, its variables spread over the ps tasks by
    replica_device_setter (w: ps:0, b: ps:1, the global step: ps:0), its ops on
    worker:0; and `doubled`, w * 2 on worker:1."""
    setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(tasks.spec),
                                            worker_device="/job:worker/task:0")
    with tf.device(setter):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        t = tf.placeholder(tf.float32, [None, 1], name="t")
        w = tf.Variable(tf.ones([3, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - t), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step,
                                                               name="train")
    with tf.device("/job:worker/task:1"):
        doubled = tf.multiply(w, 2.0, name="doubled")
    return {x: BATCH["x"], t: BATCH["t"]}, loss, train, doubled


def _events(watch):
    return list(iter(lambda: watch.get(timeout=0.5), None))


def _traced(sess, fetches, feed_dict):
    metadata = tf.RunMetadata()
    sess.run(fetches, feed_dict, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=metadata)
    return metadata.step_stats


def _ran(step_stats):
    """The graph's nodes a traced step ran: not _SOURCE, nor the halves of a transfer
    (labelled "<tensor> <src> -> <dst>")."""
    return {n.node_name for dev in step_stats.dev_stats for n in dev.node_stats
            if n.node_name != "_SOURCE" and " -> " not in n.timeline_label}


@pytest.mark.parametrize("channel", ["unix", "grpc"])
def test_a_training_step_publishes_its_plan_bytes_and_loss(cluster, channel):
    tasks = cluster({"ps": 2, "worker": 2}, channel=channel)
    feed, loss, train, doubled = _regression(tasks)
    master = tasks["worker", 0]
    with tf.Session(master.target) as sess:
        sess.run(tf.global_variables_initializer())
        watch = master.events.subscribe(["plan", "step"])
        loss_value, _ = sess.run([loss, train], feed)
        stats = _traced(sess, [loss, train], feed)
        sess.run(doubled)
        events = _events(watch)
        watch.close()
    plans = [e.plan for e in events if e.WhichOneof("kind") == "plan"]
    steps = [e.step for e in events if e.WhichOneof("kind") == "step"]
    assert len(plans) == 2 and len(steps) == 3  # a traced run reuses its plan

    plan, plan_of_doubled = plans
    assert (list(plan.feeds), list(plan.fetches), list(plan.targets)) == \
        (["x:0", "t:0"], ["loss:0"], ["train"])
    nodes = {n.name: n for n in plan.node}
    assert set(nodes) == _ran(stats)  # exactly what ran: no initializer, nor init
    assert not any("Initializer" in name or name == "init" for name in nodes)
    assert nodes["w/read"].assigned_device == PS0 and nodes["w/read"].requested_device \
        == "/job:ps/task:0"
    assert nodes["loss"].assigned_device == WORKER0
    assert list(nodes["loss"].inputs) == ["Square:0", "Const:0"]
    transfers = {(t.tensor, t.src_device, t.dst_device): t for t in plan.transfer}
    w_read = transfers["w/read:0", PS0, WORKER0]
    assert "MatMul" in w_read.consumers
    assert ("b/read:0", PS1, WORKER0) in transfers
    assert all(t.src_device != t.dst_device for t in plan.transfer)

    first, traced, _ = steps
    assert first.plan_id == traced.plan_id == plan.plan_id != plan_of_doubled.plan_id
    moved = dict(zip(transfers, first.transfer_bytes))
    assert len(first.transfer_bytes) == len(plan.transfer)
    assert moved["w/read:0", PS0, WORKER0] == 12  # float32 [3, 1]
    assert moved["b/read:0", PS1, WORKER0] == 4
    assert first.scalars["loss:0"] == pytest.approx(loss_value)
    assert traced.scalars["loss:0"] < loss_value  # it trained

    # ps:0 -> worker:1, the master being worker:0: ps:0 tells what its send moved
    (across,) = plan_of_doubled.transfer
    assert (across.tensor, across.src_device, across.dst_device, list(across.consumers)) == \
        ("w/read:0", PS0, WORKER1, ["doubled"])
    assert list(steps[2].transfer_bytes) == [12]
    assert not steps[2].scalars  # [3, 1] is no scalar


def test_bytes_are_as_on_the_wire(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    with tf.device("/job:ps"):
        w = tf.Variable(tf.ones([10]), name="w")
        counter = tf.Variable(0, dtype=tf.int64, name="counter")
    with tf.device("/job:worker"):
        total = tf.reduce_sum(w * 2.0) + tf.cast(counter, tf.float32)
    half = tf.ConfigProto(transfer_float_type=tf.bfloat16.as_datatype_enum)
    worker = tasks["worker", 0]
    with tf.Session(worker.target, config=half) as sess:
        sess.run(tf.global_variables_initializer())
        watch = worker.events.subscribe(["plan", "step"])
        sess.run(total)
        plan, step = (getattr(e, e.WhichOneof("kind")) for e in _events(watch))
        watch.close()
    moved = {t.tensor: n for t, n in zip(plan.transfer, step.transfer_bytes)}
    assert moved == {"w/read:0": 20, "counter/read:0": 8}  # float32 as bfloat16 only


def test_a_remote_watcher_of_a_task_process_sees_plans_and_bytes(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    with tf.device("/job:ps"):
        w = tf.Variable(tf.ones([3, 1]), name="w")
    with tf.device("/job:worker"):
        y = tf.reduce_sum(w * 2.0, name="y")
    with watch(tasks.target("worker"), kinds=["plan", "step"], replay=False) as seen:
        with tf.Session(tasks.target("worker")) as sess:
            sess.run(w.initializer)
            assert sess.run(y) == 6.0
        kinds = [(e.WhichOneof("kind"), e) for e in itertools.islice(seen, 4)]
    assert [kind for kind, _ in kinds] == ["plan", "step", "plan", "step"]
    plan, step = kinds[2][1].plan, kinds[3][1].step
    assert [(t.tensor, t.src_device, t.dst_device) for t in plan.transfer] == \
        [("w/read:0", PS0, WORKER0)]
    assert (step.plan_id, list(step.transfer_bytes), dict(step.scalars)) == \
        (plan.plan_id, [12], {"y:0": 6.0})


def test_an_unwatched_step_measures_nothing_but_its_plan_is_kept(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps"):
        w = tf.Variable(tf.ones([3]), name="w")
    with tf.device("/job:worker"):
        y = w * 2.0
    with tf.Session(worker.target) as sess:
        session = sess._master.session(sess._handle)
        assert session.prepare({}, [y.name], []).step.sent is None
        plans = worker.events.subscribe(["plan"], replay=True)  # a late watcher
        assert session.prepare({}, [y.name], []).step.sent == {}
        (event,) = _events(plans)
        plans.close()
    assert [t.tensor for t in event.plan.transfer] == ["w/read:0"]


def test_health_counts_what_each_task_did(cluster):
    tasks = cluster({"ps": 2, "worker": 2})
    feed, loss, train, _ = _regression(tasks)
    names = [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1)]
    health = {task: tasks[task].events.subscribe(["health"]) for task in names}
    master = tasks["worker", 0]
    watch = master.events.subscribe(["plan", "step"])
    with tf.Session(master.target) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([loss, train], feed)
    events = _events(watch)
    plans = {e.plan.plan_id: e.plan for e in events if e.WhichOneof("kind") == "plan"}
    sent = dict.fromkeys([PS0, PS1, WORKER0, WORKER1], 0)
    received = dict.fromkeys(sent, 0)   # each task has one device: every transfer crosses
    for step in (e.step for e in events if e.WhichOneof("kind") == "step"):
        for transfer, nbytes in zip(plans[step.plan_id].transfer, step.transfer_bytes):
            sent[transfer.src_device] += nbytes
            received[transfer.dst_device] += nbytes

    def work(task):
        """The work counts of the task's newest health event, once it has had one."""
        events = _events(health[task]) or [None]
        return events[-1] and (events[-1].health.steps_run, events[-1].health.graphs_run,
                               events[-1].health.bytes_sent, events[-1].health.bytes_received)

    # init and 3 steps: each ran on the master and had a part on each ps
    assert poll_for(lambda: work(("worker", 0)) == (4, 4, sent[WORKER0], received[WORKER0]),
                    timeout=5)
    assert poll_for(lambda: work(("ps", 0)) == (0, 4, sent[PS0], received[PS0]), timeout=5)
    assert poll_for(lambda: work(("ps", 1)) == (0, 4, sent[PS1], received[PS1]), timeout=5)
    assert poll_for(lambda: work(("worker", 1)) == (0, 0, 0, 0), timeout=5)
    assert (sent[PS0], sent[PS1]) == (3 * 12, 3 * 4)  # w and b, to the worker, each step
    assert sent[WORKER0] > 0  # the initial values and the gradients, to the ps tasks
    for subscription in [watch, *health.values()]:
        subscription.close()


def test_a_traced_step_has_every_tasks_devices_and_paired_transfers(cluster):
    tasks = cluster({"ps": 2, "worker": 2})
    feed, loss, train, doubled = _regression(tasks)
    master = tasks["worker", 0]
    with tf.Session(master.target) as sess:
        sess.run(tf.global_variables_initializer())
        watch = master.events.subscribe(["step"])
        stats = _traced(sess, [loss, train, doubled], feed)
        (event,) = _events(watch)
        watch.close()
    assert event.step.step_stats == stats  # the StepEvent's, as RunMetadata's
    assert {d.device for d in stats.dev_stats} == {PS0, PS1, WORKER0, WORKER1}
    halves = {}
    for dev in stats.dev_stats:
        for node in dev.node_stats:
            if " -> " in node.timeline_label:
                halves.setdefault(node.timeline_label, []).append(dev.device)
    assert f"w/read:0 {PS0} -> {WORKER0}" in halves
    assert f"w/read:0 {PS0} -> {WORKER1}" in halves
    for label, devices in halves.items():  # the _Send on its device, the _Recv on its
        _, src, _, dst = label.split(" ")
        assert sorted(devices) == sorted([src, dst]), label
