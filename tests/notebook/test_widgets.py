"""The widgets, fed by real event streams: a local session's master, an in-process server
(its EventLog) and a task process (monitor.watch over gRPC)."""

import threading
import time

import pytest

import dtfnb as tf
from dtfnb.notebook import PlacementView, QueueMonitor
from dtfnb.notebook.stream import Feed
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
    with tf.Session(config=tf.ConfigProto(emulated_gpus=1)) as sess:
        sess.run(a.initializer)
        assert sess.run(c) == 3.0
        with PlacementView(sess) as view:
            data = _bundle_is_complete(view)
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    assert data["text/plain"] == (
        f"PlacementView: 8 nodes on 2 devices, 1 edge across devices\n"
        f"  {cpu}: 4 nodes\n  {gpu} (emulated): 4 nodes")
    svg = data["text/html"]
    assert svg.count("<circle") == 8 and svg.count('stroke="#d62728"') == 1
    assert f"{gpu} (emulated)" in svg and "model/b (Mul) on " + gpu in svg
    assert "<title>model</title></rect>" in svg   # the name scope's box


def test_placement_view_follows_the_latest_session_of_a_server(server):
    with PlacementView(server) as view:
        assert repr(view) == "PlacementView: no placement yet"
        assert "No placement yet" in view._repr_mimebundle_()["text/html"]
        x = tf.constant(1.0, name="x") + 1
        with tf.Session(server.target) as sess:
            sess.run(x)
        assert poll_for(lambda: repr(view).startswith("PlacementView: 3 nodes on 1 device,"))
        with tf.Session(server.target) as sess:   # a new session: drawn anew
            y = tf.constant(2.0, name="y")
            sess.run(y)
        assert poll_for(lambda: repr(view).startswith("PlacementView: 4 nodes"))


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
