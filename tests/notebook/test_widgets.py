"""The widgets, fed by real event streams: a local session's master, an in-process server
(its EventLog) and a task process (monitor.watch over gRPC)."""

import threading
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.notebook import PlacementView, QueueMonitor, QueuePlot, StepTimeline, palette
from dtfnb.notebook.stream import Feed
from dtfnb.notebook.widgets.placement import MIME
from dtfnb.protos import monitor_pb2
from dtfnb.runtime.events import EventLog
from tests.helpers import poll_for

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def server(cluster):
    """An in-process task, whose event stream the widgets watch."""
    return cluster({"ps": 1})["ps", 0]


def _bundle_is_complete(widget):
    data = widget._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW, "text/html", "text/plain"}
    assert data["text/plain"] == repr(widget)
    assert data[WIDGET_VIEW]["model_id"] == widget._view.model_id
    return data


def test_placement_view_of_a_local_session_with_an_emulated_gpu():
    with tf.device("/cpu:0"):
        a = tf.Variable(1.0, name="a")
    with tf.name_scope("model"), tf.device("/gpu:0"):
        b = tf.multiply(a, 2.0, name="b")
        c = tf.add(b, 1.0, name="c")
    with tf.Session(config=tf.ConfigProto(emulated_gpus=1)) as sess, \
            PlacementView(sess) as view:
        sess.run(a.initializer)
        assert sess.run(c) == 3.0
        assert poll_for(lambda: "model/c" in _ops(view))
        placement = view.placement()
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    ops = _ops(view)
    assert (ops["a"], ops["model/c"]) == (cpu, gpu)
    assert "a/Assign" not in ops   # the initializer's step is not this one
    assert [(d["short"], d["emulated"]) for d in placement["devices"]] == [
        ("CPU:0", False), ("GPU:0", True)]
    transfers = {t["tensor"]: (t["src"], t["dst"], t["bytes"]) for t in placement["transfers"]}
    assert transfers == {"a/read:0": (cpu, gpu, 4), "model/c:0": (gpu, cpu, 4)}   # float32s
    assert placement["run"]["target"] == "in-process" and placement["run"]["error"] == ""
    data = view._repr_mimebundle_()
    assert set(data) == {MIME, "image/svg+xml", "text/plain"}
    assert data["text/plain"] == repr(view)
    lines = repr(view).split("\n")
    assert lines[:3] == [
        f"PlacementView: the last step of its session ran {len(ops)} ops on 2 devices; "
        "2 tensors crossed devices",
        f"  CPU:0: {sum(d == cpu for d in ops.values())} ops",
        f"  GPU:0 (emulated): {sum(d == gpu for d in ops.values())} ops"]
    assert sorted(lines[3:]) == ["  a/read:0 (CPU:0) -> model/b (GPU:0)",
                                 "  model/c:0 (GPU:0) -> fetched (CPU:0)"]
    assert "url(#dtfnb-hatch)" in data["image/svg+xml"] and "4 B" in data["image/svg+xml"]


def _ops(view):
    placement = view.placement()
    return {} if placement is None else {n["name"]: n["device"] for n in placement["nodes"]}


def test_placement_view_follows_a_session_the_latest_run_or_one_step(server):
    with PlacementView(server) as view, PlacementView(server, follow="latest") as latest:
        assert repr(view) == "PlacementView: no step has run yet"
        assert set(view._repr_mimebundle_()) == {"image/svg+xml", "text/plain"}
        x = tf.add(tf.constant(1.0, name="x"), 1.0, name="x1")
        with tf.Session(server.target) as first, tf.Session(server.target) as second:
            first.run(x)
            # the plan shows first, as a stand-in; the step follows it
            assert poll_for(lambda: "x1" in _ops(view) and not view.run().planned)
            y = tf.identity(tf.constant(2.0), name="y")
            second.run(y)
            assert poll_for(lambda: "y" in _ops(latest))
            step = view.run().step.step_id
            assert "x1" in _ops(view)   # it follows the session it first showed
            with PlacementView(server, session=first._handle, step=step) as pinned:
                first.run([x, x])
                assert poll_for(lambda: view.run().step.step_id != step)
                assert pinned.run().step.step_id == step
            assert latest.run().session == first._handle
        assert view.placement()["run"]["target"] == server.target


def test_queue_monitor_shows_fill_levels_and_rates(server):
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, tf.float32, name="fifo")
        enqueue = q.enqueue(1.0)
        dequeue = q.dequeue()
    with QueueMonitor(server) as monitor, tf.Session(server.target) as sess:
        assert repr(monitor) == "QueueMonitor: no queues yet"
        for _ in range(4):
            sess.run(enqueue)
        sess.run(dequeue)
        assert poll_for(lambda: "3 / 10" in monitor._html())
        assert repr(monitor) == "QueueMonitor: 1 queue\n  queue/fifo/fraction_of_10_full"
        (key, event), = monitor.queues.queues.items()
        assert key[0] == "/job:ps/replica:0/task:0/device:CPU:0"
        assert (event.enqueued, event.dequeued, event.closed) == (4, 1, False)
        assert monitor.queues.rates(*key)[0] > 0
        sess.run(q.close())
        assert poll_for(lambda: "closed" in monitor._html())
        _bundle_is_complete(monitor)


def test_queue_monitor_of_an_unbounded_queue_greys_once_its_task_stops(cluster):
    server = cluster({"ps": 1})["ps", 0]
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(-1, tf.float32, name="pile")
    with QueueMonitor(server) as monitor:
        with tf.Session(server.target) as sess:
            sess.run(q.enqueue_many([[1.0] * 10]))
        assert poll_for(lambda: "10 (no limit)" in monitor._html())
        assert palette.colour("/job:ps/replica:0/task:0/device:CPU:0") in monitor._html()
        assert "/s in" in monitor._html()
        server.stop()
        assert poll_for(lambda: "stopped at " in monitor._html())
    assert "/s in" not in monitor._html() and 'style="color:#999"' in monitor._html()
    assert repr(monitor) == "QueueMonitor: 1 queue\n  queue/pile/fraction_of_-1_full"


def test_queue_plot_draws_sizes_over_time_from_when_it_is_made(server):
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, tf.float32, shapes=[()], name="fifo")
        enqueue = q.enqueue(1.0)
    # The monitor watches, so the queue reports its first item before the plot is made.
    with QueueMonitor(server), tf.Session(server.target) as sess:
        sess.run(enqueue)
        with QueuePlot(server) as plot:
            assert repr(plot) == "QueuePlot: 0 queues over time"
            for _ in range(3):
                sess.run(enqueue)
            sess.run(q.dequeue_many(3))
            sess.run(q.close())
            data = _bundle_is_complete(plot)   # shown once the close has come in
    (key, levels), = plot.levels.levels.items()
    assert [size for _, size in levels] == [2, 3, 4, 1, 1]
    assert [t for t, _ in levels] == sorted(t for t, _ in levels)
    assert plot.levels.closed_at[key] == levels[-1][0]
    assert 'data-queues="1" data-points="5"' in data["text/html"]
    assert data["text/plain"] == "QueuePlot: 1 queue over time\n  queue/fifo/fraction_of_10_full"


def test_step_timeline_draws_a_traced_run_of_a_local_session():
    a = tf.constant(np.ones((300, 300), np.float32))
    first, second = tf.matmul(a, a, name="first"), tf.matmul(a, a, name="second")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run([first, second], run_metadata=metadata,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    timeline = StepTimeline(metadata)
    (device, bars), = timeline.timeline.lanes.items()
    assert device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert {"first", "second"} <= {bar.name for bar in bars}
    assert repr(timeline).startswith(f"StepTimeline: {len(bars)} ops on 1 device, at most ")
    svg = timeline._repr_svg_()
    assert svg.startswith("<svg") and palette.colour(device) in svg
    assert "<title>first: " in svg


def test_feed_redraws_at_most_five_times_a_second():
    log = EventLog("/job:t/replica:0/task:0")
    calls = []
    feed = Feed([log.subscribe()], lambda events: calls.append(len(events)))
    feed.start()
    stop = time.monotonic() + 1.0
    published = 0
    while time.monotonic() < stop:
        log.publish(monitor_pb2.Event(step=monitor_pb2.StepEvent(step_id=published)))
        published += 1
        time.sleep(0.001)
    assert poll_for(lambda: sum(calls) == published)
    assert len(calls) <= 7, calls   # 1 s at 5/s, with a margin for a loaded machine
    idle = len(calls)
    time.sleep(0.5)
    assert len(calls) == idle   # nothing arrived: nothing redrawn
    log.close()   # the stream ends: so does the feed
    assert poll_for(lambda: not any(t.name.startswith("dtfnb-feed")
                                    for t in threading.enumerate()))
    feed.close()


def test_unwatchable_sources_are_refused():
    with pytest.raises(TypeError, match="Cannot watch the events of int"):
        QueueMonitor(3)
    with pytest.raises(ValueError, match="give a target 'grpc://host:port'"):
        QueueMonitor("localhost:1")
    with pytest.raises(tf.errors.UnavailableError):
        QueueMonitor("grpc://127.0.0.1:1")
