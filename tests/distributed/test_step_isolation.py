"""A peer of a cluster against the steps of other clients: it may call any task's worker
service (CleanupGraph, RunGraph) with step ids it saw or guessed, and must change nothing
of a step it does not own."""

import grpc
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import wire
from dtfnb.protos import graph_pb2, worker_pb2
from dtfnb.runtime.step import new_step_id
from tests.helpers import in_thread, poll_for

PS_CPU = "/job:ps/replica:0/task:0/device:CPU:0"


@pytest.fixture
def ps_and_worker(cluster):
    """(ps, worker, channel to the ps): in-process tasks, and a stranger's raw channel."""
    tasks = cluster({"ps": 1, "worker": 1})
    ps, worker = tasks["ps", 0], tasks["worker", 0]
    channel = grpc.insecure_channel(tasks.spec["ps"][0])
    yield ps, worker, channel
    channel.close()


def call(channel, method, request, response_type):
    data = channel.unary_unary(f"/dtfnb.WorkerService/{method}")(wire.frame(request),
                                                                 timeout=10)
    return wire.unframe(data, response_type)[0]


def forge_cleanup(channel, step_id, graph_handle=""):
    call(channel, "CleanupGraph", worker_pb2.CleanupGraphRequest(
        step_id=step_id, graph_handle=graph_handle, error_code=1, error_message="forged"),
        worker_pb2.CleanupGraphResponse)


def noop_graph(channel):
    """Registers a graph that does nothing on the ps; returns its handle."""
    node = graph_pb2.NodeDef(name="nothing", op="NoOp", device=PS_CPU)
    request = worker_pb2.RegisterGraphRequest(session_handle="stranger",
                                              graph_def=graph_pb2.GraphDef(node=[node]))
    return call(channel, "RegisterGraph", request, worker_pb2.RegisterGraphResponse).graph_handle


def test_step_ids_are_random_not_counted():
    ids = [new_step_id() for _ in range(1000)]
    assert len(set(ids)) == 1000 and all(0 <= i < 2**63 for i in ids)
    assert len({b - a for a, b in zip(ids, ids[1:])}) > 990  # no stride to predict the next


def test_cleanups_for_the_ids_after_a_watched_step_fail_none_of_the_next_steps(ps_and_worker):
    """The finding: step ids counted up from the last one on the monitor stream, and a
    CleanupGraph for the next ones failed the victim's steps before they started."""
    ps, worker, channel = ps_and_worker
    with tf.device("/job:ps/task:0"):
        total = tf.Variable(0.0, name="total")
        add = total.assign_add(1.0)
    steps = worker.events.subscribe(kinds=["step"])
    with tf.Session(worker.target) as sess:
        sess.run(total.initializer)
        seen = steps.get(timeout=5).step.step_id
        for guess in range(seen - 50, seen + 200):
            forge_cleanup(channel, guess)
        for _ in range(20):
            sess.run(add)
        assert sess.run(total) == 20.0
    steps.close()


def test_a_stranger_that_knows_a_running_step_id_can_neither_abort_nor_join_it(ps_and_worker):
    """Even with the id of a running step (say it leaked), a cleanup or a RunGraph that
    does not name the step's own graph changes nothing: the step ends as it would have."""
    ps, worker, channel = ps_and_worker
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(1, tf.float32, shared_name="q")
        enqueue = queue.enqueue(7.0)
        taken = queue.dequeue() * 2.0
    stranger_graph = noop_graph(channel)
    with tf.Session(worker.target) as sess:
        thread, box = in_thread(lambda: sess.run(taken))
        session = next(iter(worker.master._sessions.values()))
        assert poll_for(lambda: session._active_steps, timeout=5)
        step_id = next(iter(session._active_steps)).id  # the leak
        forge_cleanup(channel, step_id)
        forge_cleanup(channel, step_id, stranger_graph)
        forge_cleanup(channel, step_id, "graph-0000000000000000")
        with pytest.raises(grpc.RpcError) as joined:
            call(channel, "RunGraph", worker_pb2.RunGraphRequest(
                graph_handle=stranger_graph, step_id=step_id), worker_pb2.RunGraphResponse)
        assert joined.value.code() is grpc.StatusCode.ALREADY_EXISTS
        assert f"Step {step_id} is already running" in joined.value.details()
        sess.run(enqueue)
        thread.join(10)
        assert box == {"value": 14.0}


def test_a_cleanup_before_its_step_starts_cancels_only_a_start_of_the_graph_it_names(
        ps_and_worker):
    """A cleanup for an id that runs nothing here yet (it may come before the RunGraph)
    blocks only a later start of the graph it names, which only the step's master knows."""
    ps, worker, channel = ps_and_worker
    victim, stranger = noop_graph(channel), noop_graph(channel)

    def run(graph, step_id):
        return call(channel, "RunGraph", worker_pb2.RunGraphRequest(
            graph_handle=graph, step_id=step_id), worker_pb2.RunGraphResponse)

    step_id = new_step_id()
    forge_cleanup(channel, step_id, stranger)
    forge_cleanup(channel, step_id)
    run(victim, step_id)
    cleaned_up = new_step_id()
    forge_cleanup(channel, cleaned_up, victim)  # as the victim's own master would
    with pytest.raises(grpc.RpcError) as cancelled:
        run(victim, cleaned_up)
    assert cancelled.value.code() is grpc.StatusCode.CANCELLED
    assert f"Step {cleaned_up} was cleaned up before it started" in cancelled.value.details()


def test_a_rungraph_without_a_feed_its_graph_needs_is_invalid_argument(ps_and_worker):
    ps, worker, channel = ps_and_worker
    with tf.device("/job:ps/task:0"):
        p = tf.placeholder(tf.float32, name="p")
        doubled = p * 2.0
    with tf.Session(worker.target) as sess:
        assert sess.run(doubled, {p: 2.0}) == 4.0
        # The graph the master registered on the ps, run by a caller that leaves out p.
        (handle,) = [h for h, g in ps._worker._graphs.items() if g.feeds]
        with pytest.raises(grpc.RpcError) as missing:
            call(channel, "RunGraph", worker_pb2.RunGraphRequest(
                graph_handle=handle, step_id=new_step_id()), worker_pb2.RunGraphResponse)
        assert missing.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert missing.value.details() == (f"RunGraph of {handle} has no value for the fed "
                                           "tensor p:0")
        assert sess.run(doubled, {p: 3.0}) == 6.0
