"""Tasks on one host call each other over a Unix socket instead of gRPC: who may connect,
what a dead or restarted task looks like, deadlines, cancellation, bad input, and the
same results as over gRPC."""

import gc
import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime import targets
from dtfnb.distributed_runtime.transport import rpc, services, unix, wire
from dtfnb.distributed_runtime.transport.remote import RemoteMaster, RemoteWorker
from dtfnb.protos import worker_pb2
from tests.helpers import cluster_dict, poll_for, start_task, wait_for_port

pytestmark = pytest.mark.skipif(not unix.enabled(), reason="Unix sockets: Linux only")


def status(address):
    channel = rpc.GrpcChannel(address, rpc.Security(), address)
    try:
        data = channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()), timeout=10)
    finally:
        channel.close()
    return wire.unframe(data, worker_pb2.GetStatusResponse)[0]


@pytest.mark.parametrize("channel, expected", [("unix", unix.UnixChannel),
                                               ("grpc", rpc.GrpcChannel)])
def test_a_task_on_this_host_is_called_over_its_unix_socket_unless_switched_off(
        cluster, channel, expected):
    address = cluster({"local": 1}, channel=channel).spec["local"][0]
    served = unix.socket_name(address) if channel == "unix" else ""
    assert status(address).local_socket == served
    worker = RemoteWorker("/job:local/replica:0/task:0", address, rpc.Security())
    try:
        worker.status()
        assert isinstance(worker.channel, expected)
    finally:
        worker.close()


@pytest.mark.parametrize("channel", ["unix", "grpc"])
def test_steps_across_tasks_give_the_same_results_either_way(cluster, channel):
    worker = cluster({"ps": 1, "worker": 1}, channel=channel)["worker", 0]
    big = np.arange(3_000_000, dtype=np.float32).reshape(1000, 3000)   # 12 MB: streamed
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(big)
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[2]], shared_name="q")
        total = tf.reduce_sum(v * 2.0)
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
        item = tf.constant([1.0, 2.0]) * 1.0
    enqueue = q.enqueue([item])   # on the queue's task, fed from the worker
    dequeue = q.dequeue()
    plain = tf.ConfigProto(disable_shared_memory=True)
    for config in (None, plain):
        with tf.Session(worker.target, config=config) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(doubled), big * 2.0)
            assert sess.run(total) == pytest.approx(float(big.sum(dtype=np.float64) * 2),
                                                    rel=1e-5)
            sess.run(enqueue)
            np.testing.assert_array_equal(sess.run(dequeue), [1.0, 2.0])
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=200))


def _answers(monkeypatch, servicer, method):
    """`answers(n)`: what the first n calls of `servicer.method` answered (True: it took
    the call without a thread that waits), once there have been n. (A call it took may
    reply before the reading thread, back from it, records the answer.)"""
    answers = []
    start = getattr(servicer, method)

    def spy(self, *args):
        answers.append(start(self, *args))
        return answers[-1]

    monkeypatch.setattr(servicer, method, spy)

    def first(n):
        assert poll_for(lambda: len(answers) >= n), f"{len(answers)} calls, not {n}"
        return answers[:n]
    return first


def test_a_step_whose_kernels_never_block_holds_no_thread_while_it_waits(cluster,
                                                                       monkeypatch):
    """The ps's part of a training step (send the weights, wait for the gradient, apply it)
    starts on the thread that read the RunGraph and ends on the one that delivers the
    gradient; a part that may block (a dequeue) gets a thread of its own, as before."""
    taken = _answers(monkeypatch, services.WorkerServicer, "start_RunGraph")
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.ones(4, np.float32))
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[4]])
    with tf.device("/job:worker/task:0"):
        gradient = w * 2.0
    train = tf.assign_sub(w, gradient * 0.25)   # on the ps, as an optimizer places it
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        for _ in range(3):
            sess.run(train)
        assert taken(4)[1:] == [True] * 3
        np.testing.assert_allclose(sess.run(w), 0.125 * np.ones(4))
        sess.run(q.enqueue([gradient]))
        np.testing.assert_allclose(sess.run(q.dequeue()), 0.25 * np.ones(4))
        assert taken(7)[-1] is False
        sess.run(train, options=tf.RunOptions(timeout_in_ms=10_000))   # a deadline to watch
        assert taken(8)[-1] is False
        np.testing.assert_allclose(sess.run(w), 0.0625 * np.ones(4))


def test_a_clients_step_over_the_socket_holds_no_thread_of_its_master_while_it_runs(
        cluster, monkeypatch):
    """A RunStep whose parts never block starts on the thread that read it and replies
    from the one that ends its last part; options (a deadline), a step that blocks, or a
    new signature (its plan calls other tasks) get a thread of their own, as before."""
    taken = _answers(monkeypatch, services.MasterServicer, "start_RunStep")
    monkeypatch.setattr(targets, "running_server", lambda target: None)   # a client elsewhere
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.ones(4, np.float32))
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[4]])
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [None])
        gradient = w * x
    train = tf.assign_sub(w, gradient * 0.25)
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        assert taken(1) == [False]   # a new signature
        for _ in range(3):
            sess.run(train, {x: np.full(4, 2.0, np.float32)})
        assert taken(4)[1:] == [False, True, True]
        np.testing.assert_allclose(sess.run(w), 0.125 * np.ones(4))
        with pytest.raises(tf.errors.InvalidArgumentError):   # its error comes back
            sess.run(train, {x: np.ones(3, np.float32)})
        assert taken(6)[-1] is True
        sess.run(train, {x: np.ones(4, np.float32)}, options=tf.RunOptions(timeout_in_ms=10_000))
        sess.run(q.enqueue([gradient]), {x: np.ones(4, np.float32)})
        sess.run(q.enqueue([gradient]), {x: np.ones(4, np.float32)})
        np.testing.assert_allclose(sess.run(q.dequeue()), 0.09375 * np.ones(4))
        np.testing.assert_allclose(sess.run(q.dequeue()), 0.09375 * np.ones(4))
        assert taken(11)[-5:] == [False] * 5   # the options; then each queue op blocks


def test_with_a_token_only_clients_that_present_it_connect(cluster, monkeypatch):
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "s3cret")
    name = unix.socket_name(cluster({"local": 1}).spec["local"][0])
    with pytest.raises(tf.errors.UnauthenticatedError, match="wrong cluster token"):
        unix.UnixChannel(name, "wrong", "the task")
    with pytest.raises(tf.errors.UnauthenticatedError):
        unix.UnixChannel(name, None, "the task")
    channel = unix.UnixChannel(name, "s3cret", "the task")
    try:
        reply = channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()))
        assert wire.unframe(reply, worker_pb2.GetStatusResponse)[0].local_socket == name
    finally:
        channel.close()


def raw_connection(name, token=b""):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect("\0" + name)
    sock.sendall(unix._ENVELOPE.pack(len(token), 0, unix.HELLO, 0) + token)
    assert read_message(sock)[1] == unix.HELLO
    return sock


def read_message(sock):
    return unix.read_message(sock, wire.max_message_bytes(), "the test")


def test_bad_messages_get_errors_and_the_task_keeps_serving(cluster):
    tasks = cluster({"local": 1})
    address = tasks.spec["local"][0]
    name = unix.socket_name(address)
    sock = raw_connection(name)
    try:
        run_step = wire.METHOD_INDEX["RunStep"]
        for call_id, kind, method, body in [(1, unix.CALL, run_step, b"\xff" * 40),
                                            (2, unix.CALL, 250, b""),
                                            (3, unix.OPEN, run_step, b""),
                                            (4, unix.CALL, wire.METHOD_INDEX["RecvTensor"],
                                             b"")]:
            sock.sendall(unix._ENVELOPE.pack(len(body), call_id, kind, method) + body)
            got_id, got_kind, _, reply = read_message(sock)
            assert (got_id, got_kind) == (call_id, unix.ERROR)
            error = unix._error_from(reply)
            expected = (tf.errors.InvalidArgumentError if call_id == 1
                        else tf.errors.UnimplementedError)
            assert isinstance(error, expected), error
    finally:
        sock.close()
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0]) * 3.0
        master = RemoteMaster(address, rpc.Security())
        try:
            handle = master.create_session(tf.get_default_graph().as_graph_def(),
                                           tf.ConfigProto())
            assert isinstance(master.channel, unix.UnixChannel)
            np.testing.assert_array_equal(master.run_step(handle, {}, [x.name], [])[0],
                                          [3.0, 6.0])
        finally:
            master.close()
    assert tasks["local", 0].target


def test_a_killed_task_is_unavailable_at_once_even_mid_call_and_rejoins_when_back(cluster):
    spec = cluster_dict(ps=1, worker=1)
    ps = cluster(spec, processes=True, skip={("worker", 0)})   # its own OS process
    worker = cluster(spec, skip={("ps", 0)})["worker", 0]
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, [tf.float32], shared_name="q")
        v = tf.Variable(5.0, name="v")
    dequeue = q.dequeue()
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert sess.run(v + 1.0) == 6.0
        failed = []

        def blocked_dequeue():
            started = time.monotonic()
            try:
                sess.run(dequeue)
            except tf.errors.OpError as err:
                failed.append((err, time.monotonic() - started))

        waiter = threading.Thread(target=blocked_dequeue, daemon=True)
        waiter.start()
        time.sleep(0.5)
        os.kill(ps["ps", 0].pid, signal.SIGKILL)
        ps["ps", 0].wait()
        waiter.join(timeout=10)
        assert not waiter.is_alive(), "a call to a killed task hung"
        (err, _), = failed
        assert isinstance(err, tf.errors.UnavailableError), err
        with pytest.raises(tf.errors.UnavailableError):
            sess.run(v + 1.0)
    # The same address again: the next session reaches the new task.
    ps["ps", 0] = start_task(spec, "ps", 0)
    wait_for_port(spec["ps"][0], proc=ps["ps", 0])
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert sess.run(v + 1.0) == 6.0


def test_a_client_that_goes_away_cancels_its_steps_on_the_task(cluster):
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    with tf.device("/job:local/task:0"):
        q = tf.FIFOQueue(10, [tf.float32], shared_name="q")
        dequeue = q.dequeue()
    master = RemoteMaster(tasks.spec["local"][0], rpc.Security())
    handle = master.create_session(tf.get_default_graph().as_graph_def(), tf.ConfigProto())
    ended = []
    waiter = threading.Thread(daemon=True, target=lambda: ended.append(
        pytest.raises(tf.errors.OpError, master.run_step, handle, {}, [dequeue.name], [])))
    waiter.start()
    deadline = time.monotonic() + 10
    while server.master.active_steps() == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.master.active_steps() == 1
    master.channel.close()   # the connection drops, as when a client process dies
    waiter.join(timeout=10)
    assert ended and isinstance(ended[0].value, tf.errors.UnavailableError)
    deadline = time.monotonic() + 10
    while server.master.active_steps() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.master.active_steps() == 0
    master.close()


def test_a_send_never_blocks_when_the_peer_does_not_read():
    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    received = []

    class Recorder(unix._Link):
        def received(self, call_id, kind, method, body):
            received.append((call_id, bytes(body)))

    sender = Recorder(here, "the sender", 1 << 30)
    bodies = [bytes([i]) * (3 << 20) for i in range(4)]   # far more than a socket buffers
    started = time.monotonic()
    for i, body in enumerate(bodies):
        sender.send(i, unix.ITEM, body)
    assert time.monotonic() - started < 5
    reader = Recorder(there, "the reader", 1 << 30)
    reader.start("test-reader")
    deadline = time.monotonic() + 30
    while len(received) < len(bodies) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert received == list(enumerate(bodies))
    sender.close()
    reader.close()


def test_a_grpc_call_its_caller_does_not_keep_still_runs(cluster):
    # A step's CleanupGraph is such a call: gRPC used to cancel it once dropped.
    tasks = cluster({"worker": 1})
    worker = tasks["worker", 0]
    with tf.container("dropped"), tf.device("/job:worker/task:0"):
        v = tf.Variable(1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
    device = worker._worker.devices["/job:worker/replica:0/task:0/device:CPU:0"]
    address = tasks.spec["worker"][0]
    channel = rpc.GrpcChannel(address, rpc.Security(), address)
    try:
        channel.start("CleanupAll", wire.frame(worker_pb2.CleanupAllRequest(
            container=["dropped"])))
        gc.collect()
        assert poll_for(lambda: "dropped" not in device.resource_mgr.containers(), timeout=5)
    finally:
        channel.close()
