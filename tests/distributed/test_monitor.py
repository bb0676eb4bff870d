"""The monitor service: a task's events, in-process (EventLog) and over gRPC (watch)."""

import threading

import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch
from dtfnb.protos import monitor_pb2
from dtfnb.runtime.events import EventLog
from tests.helpers import cluster_dict, poll_for

PS_CPU = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER_CPU = "/job:worker/replica:0/task:0/device:CPU:0"


def _step(step_id):
    return monitor_pb2.Event(step=monitor_pb2.StepEvent(step_id=step_id))


def test_event_log_stamps_keeps_filters_and_drops():
    log = EventLog("/job:t/replica:0/task:0", keep=3)
    assert not log.watching
    for i in range(5):
        log.publish(_step(i))
    replayed = log.subscribe(replay=True)
    health = log.subscribe(kinds=["health"])
    slow = log.subscribe(limit=2)
    assert log.watching
    assert [e.step.step_id for e in (replayed.get(0), replayed.get(0), replayed.get(0))] == \
        [2, 3, 4]
    assert replayed.get(timeout=0.01) is None
    event = _step(5)
    log.publish(event)
    assert event.task == "/job:t/replica:0/task:0" and event.time > 0
    log.publish(monitor_pb2.Event(health=monitor_pb2.HealthEvent(state="serving")))
    log.publish(_step(6))
    assert health.get(0).health.state == "serving"
    assert health.get(timeout=0.01) is None
    assert [e.WhichOneof("kind") for e in (slow.get(0), slow.get(0))] == ["health", "step"]
    assert slow.dropped == 1
    health.close()
    assert health.get() is None
    log.close()  # the others end once their readers have taken what was queued
    assert [e.WhichOneof("kind") for e in replayed] == ["step", "health", "step"]
    assert list(slow) == []
    assert not log.watching
    late = log.subscribe(replay=True)
    assert [e.step.step_id for e in late][-1] == 6
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown event kinds"):
        log.subscribe(kinds=["steps"])


class _Collector:
    """Reads a remote watch on its own thread, so that no test waits on a stream forever."""

    def __init__(self, target, **kwargs):
        self.watch = watch(target, **kwargs)
        self.events = []
        self._thread = threading.Thread(target=lambda: self.events.extend(self.watch))
        self._thread.start()

    def kinds(self):
        return [e.WhichOneof("kind") for e in self.events]

    def of(self, kind):
        return [getattr(e, kind) for e in self.events if e.WhichOneof("kind") == kind]

    def ended(self, timeout=5.0):
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def close(self):
        self.watch.close()
        self._thread.join()


@pytest.fixture
def collectors(cluster):
    """The test's _Collectors, closed after it and before its cluster stops."""
    opened = []
    yield opened
    for collector in opened:
        collector.close()


def _graph():
    with tf.device("/job:ps"):
        a = tf.Variable(1.0, name="a")
    with tf.device("/job:worker"):
        b = a + 2
    return a, b


def test_a_remote_watcher_sees_placement_steps_health_and_the_end(cluster, collectors):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    seen = _Collector(worker.target, replay=False)
    collectors.append(seen)
    a, b = _graph()
    p = tf.placeholder(tf.float32, name="p")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(worker.target) as sess:
        sess.run(a.initializer)
        assert sess.run(b, options=options, run_metadata=tf.RunMetadata()) == 3.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(p * 2)
        handle = sess._handle
        assert poll_for(lambda: len(seen.of("step")) == 3, timeout=2)
        health = poll_for(lambda: [h for h in seen.of("health") if h.steps_run == 3], timeout=2)
    assert health[0].state == "serving" and health[0].task == "/job:worker/replica:0/task:0"
    assert health[0].active_steps == 0 and health[0].resident_bytes > 0

    first, extended = seen.of("placement")  # a placement lists the nodes placed anew
    assert first.session_handle == extended.session_handle == handle
    assert {n.name for n in extended.node} == {"mul", "mul/y"}
    nodes = {n.name: n for n in first.node}
    assert set(nodes) == {"a", "a/initial_value", "a/Assign", "a/read", "add", "add/y", "p"}
    assert all(n.assigned_device for n in nodes.values())
    assert nodes["a"].requested_device == "/job:ps"
    assert nodes["a"].assigned_device == PS_CPU
    assert nodes["add"].assigned_device == WORKER_CPU
    assert list(nodes["add"].inputs) == ["a/read:0", "add/y:0"]

    init, traced, failed = seen.of("step")
    assert all(s.duration > 0 and s.start_time > 0 for s in (init, traced, failed))
    assert all(s.session_handle == handle for s in (init, traced, failed))
    assert len({init.step_id, traced.step_id, failed.step_id}) == 3
    assert not init.error and not init.HasField("step_stats")
    assert {d.device for d in traced.step_stats.dev_stats} >= {PS_CPU, WORKER_CPU}
    assert failed.error.startswith("InvalidArgumentError: You must feed a value")
    assert all(e.task == "/job:worker/replica:0/task:0" and e.time > 0 for e in seen.events)

    worker.stop()
    assert seen.ended()  # the stream ends when the task stops, after a last health event
    assert seen.of("health")[-1].state == "stopping"


def test_replay_and_kinds(cluster, collectors):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    steps = _Collector(worker.target, kinds=["step"], replay=False)
    collectors.append(steps)
    a, b = _graph()
    with tf.Session(worker.target) as sess:
        sess.run(a.initializer)
        sess.run(b)
    assert poll_for(lambda: len(steps.events) == 2, timeout=2)
    assert steps.kinds() == ["step", "step"]
    late = _Collector(worker.target, kinds=["placement", "step"])  # replay by default
    collectors.append(late)
    assert poll_for(lambda: late.kinds() == ["placement", "step", "step"], timeout=2)
    assert [e.step.step_id for e in late.events[1:]] == [e.step.step_id for e in steps.events]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown event kinds"):
        watch(worker.target, kinds=["nope"])


def test_closing_a_watch_unsubscribes_and_an_absent_task_is_unavailable(cluster):
    ps = cluster({"ps": 1, "worker": 1})["ps", 0]
    remote = watch(ps.target)
    assert ps.events.watching
    remote.close()
    assert poll_for(lambda: not ps.events.watching, timeout=2)
    with pytest.raises(tf.errors.UnavailableError):
        watch(cluster_dict(gone=1)["gone"][0])


def test_a_slow_subscriber_never_blocks_steps(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    slow = worker.events.subscribe(kinds=["step"], limit=2)
    a, b = _graph()
    with tf.Session(worker.target) as sess:
        sess.run(a.initializer)
        for _ in range(9):
            sess.run(b)
    assert slow.dropped == 8
    assert len(list(iter(lambda: slow.get(0), None))) == 2
    slow.close()


def test_a_local_session_has_its_own_event_log(cluster):
    x = tf.constant(2.0, name="x") * 3.0
    with tf.Session() as sess:
        assert sess.run(x) == 6.0
        events = sess.events
        placement = events.subscribe(replay=True).get(0).placement
    assert events.task == "/job:localhost/replica:0/task:0"
    server = cluster({"local": 1})["local", 0]
    with tf.Session(server.target) as sess:  # a server of this process
        assert sess.events is server.events
    assert {n.assigned_device for n in placement.node} == \
        {"/job:localhost/replica:0/task:0/device:CPU:0"}
