"""The transport against bad input and strangers, as a broken or hostile client would call it:
malformed and oversized messages, the cluster token, TLS, and where servers listen."""

import os
import socket
import subprocess
import sys
import tempfile
import threading

import grpc
import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import rpc, shm, wire
from dtfnb.distributed_runtime.transport.remote import RemoteMaster
from dtfnb.protos import config_pb2, graph_pb2, master_pb2, wire_pb2, worker_pb2
from tests.helpers import ROOT, cluster_dict, tls_certificates

CPU = "/job:local/replica:0/task:0/device:CPU:0"
_UNARY = [f"{service}/{method.name}"
          for module, service in ((worker_pb2, "WorkerService"), (master_pb2, "MasterService"))
          for method in module.DESCRIPTOR.services_by_name[service].methods
          if not method.client_streaming]


@pytest.fixture
def channels():
    opened = []

    def open_channel(address, credentials=None):
        channel = grpc.secure_channel(address, credentials) if credentials \
            else grpc.insecure_channel(address)
        opened.append(channel)
        return channel

    yield open_channel
    for channel in opened:
        channel.close()


def failure(channel, method, data, **kwargs):
    """The RpcError that a call of `method` ("Service/Method") with raw bytes ends with."""
    with pytest.raises(grpc.RpcError) as caught:
        channel.unary_unary(f"/dtfnb.{method}")(data, timeout=10, **kwargs)
    return caught.value


def stream_failure(channel, messages):
    """The RpcError that RecvTensor ends with, fed by the iterable `messages`."""
    with pytest.raises(grpc.RpcError) as caught:
        for _ in channel.stream_stream("/dtfnb.WorkerService/RecvTensor")(messages, timeout=10):
            pass
    return caught.value


def remote_run(address, fetches, feeds=None, config=None, security=None):
    """Runs the default graph through the gRPC client a separate process would use."""
    master = RemoteMaster(address, security or rpc.Security())
    try:
        handle = master.create_session(tf.get_default_graph().as_graph_def(),
                                       config or config_pb2.ConfigProto())
        try:
            return master.run_step(handle, feeds or {}, [t.name for t in fetches], [])
        finally:
            master.close_session(handle)
    finally:
        master.close()


def assert_serves(server):
    """The server still runs steps, both in-process and over gRPC."""
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0]) * 3.0
        with tf.Session(server.target) as sess:
            np.testing.assert_array_equal(sess.run(x), [3.0, 6.0])
        np.testing.assert_array_equal(remote_run(server.target[len("grpc://"):], [x])[0],
                                      [3.0, 6.0])


def pinned_on_ps_and_worker():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(np.arange(4.0)) * 2.0
    with tf.device("/job:worker/task:0"):
        b = a + 1.0
    with tf.device("/job:ps/task:0"):
        return b * 10.0


# Malformed messages.

def test_garbage_to_any_method_is_invalid_argument_and_the_server_keeps_serving(
        cluster, channels):
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    channel = channels(tasks.spec["local"][0])
    for method in _UNARY:
        for garbage in (b"", b"garbage!", b"\x04\x00\x00\x00\xff\xff\xff\xff"):
            err = failure(channel, method, garbage)
            assert err.code() is grpc.StatusCode.INVALID_ARGUMENT, method
            assert "Malformed" in err.details(), method
    err = stream_failure(channel, iter([b"garbage!"]))
    assert err.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "Malformed message: header of" in err.details()
    assert isinstance(rpc.as_op_error(err, "x"), tf.errors.InvalidArgumentError)
    assert_serves(server)


def test_well_framed_bad_requests_get_clear_statuses(cluster, channels):
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    channel = channels(tasks.spec["local"][0])

    def register(*nodes):
        graph_def = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(**node) for node in nodes])
        request = worker_pb2.RegisterGraphRequest(session_handle="s", graph_def=graph_def)
        return failure(channel, "WorkerService/RegisterGraph", wire.frame(request))

    cases = [
        (register(dict(name="n", op="NoSuchOp", device=CPU)), "INVALID_ARGUMENT",
         tf.errors.InvalidArgumentError, "Op type not registered 'NoSuchOp'"),
        (register(dict(name="n", op="NoOp", device="/job:elsewhere/replica:0/task:0/"
                       "device:CPU:0")), "INVALID_ARGUMENT",
         tf.errors.InvalidArgumentError, "not a device of this task"),
        (register(dict(name="n", op="NoOp", device=CPU, input=["ghost"])), "INVALID_ARGUMENT",
         tf.errors.InvalidArgumentError, "Unknown input node 'ghost'"),
        (failure(channel, "WorkerService/RunGraph",
                 wire.frame(worker_pb2.RunGraphRequest(graph_handle="no-such-graph"))),
         "ABORTED", tf.errors.AbortedError,
         "Graph handle is not found: no-such-graph. Possibly, this worker just restarted."),
        (failure(channel, "MasterService/RunStep",
                 wire.frame(master_pb2.RunStepRequest(session_handle="no-such-session"))),
         "ABORTED", tf.errors.AbortedError, "Session no-such-session is not found"),
        # A feed whose header promises more bytes than the message holds.
        (failure(channel, "MasterService/RunStep", wire.frame(master_pb2.RunStepRequest(
            feed=[dict(name="x:0", dtype=1, shape=[1000], inline_bytes=4000)]))),
         "INVALID_ARGUMENT", tf.errors.InvalidArgumentError, "needs 4000 bytes"),
    ]
    for err, code, error_class, message in cases:
        assert err.code().name == code and message in err.details(), err
        assert isinstance(rpc.as_op_error(err, "x"), error_class)
        assert message in rpc.as_op_error(err, "x").message
    assert_serves(server)


def test_errors_with_long_or_unicode_names_keep_their_status(cluster, channels):
    # A status travels in HTTP/2 headers: the message is clipped below gRPC's limit and
    # the node name goes as binary metadata, or the error would become "unavailable".
    address = cluster({"local": 1}).spec["local"][0]
    request = master_pb2.RunStepRequest(feed=[dict(name="x" * 100_000, dtype=1, shape=[10],
                                                   inline_bytes=40)])
    err = failure(channels(address), "MasterService/RunStep", wire.frame(request))
    assert err.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith("Tensor xxx") and err.details().endswith("x [...]")
    assert len(err.details()) < 5000
    q = tf.placeholder(tf.float32, None)
    y = tf.reshape(q, [3], name="résumé")
    with pytest.raises(tf.errors.InvalidArgumentError, match="requested shape has 3") as caught:
        remote_run(address, [y], {q.name: np.ones(2, np.float32)})
    assert caught.value.node_name == "résumé"


def test_a_feed_naming_a_file_of_the_task_is_refused_not_read(cluster):
    # A SharedSlice names a process and one of its fds: only dtfnb's own blocks may be
    # mapped, or any client could read any file a task (or another process) has open.
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    p = tf.placeholder(tf.uint8, [None])
    y = tf.identity(p)
    master = RemoteMaster(tasks.spec["local"][0], rpc.Security())
    handle = master.create_session(tf.get_default_graph().as_graph_def(),
                                   config_pb2.ConfigProto())
    with tempfile.TemporaryFile() as secret:
        secret.write(b"top secret " * 10)
        secret.flush()
        slice_ = wire_pb2.SharedSlice(owner=int.from_bytes(os.urandom(8), "little"),
                                      pid=os.getpid(), fd=secret.fileno(), block_id=1,
                                      block_size=4096)
        request = master_pb2.RunStepRequest(session_handle=handle, fetch=[y.name], feed=[
            dict(name=p.name, dtype=4, shape=[20], shared=slice_)])  # 4: DT_UINT8
        # Over the Unix socket, which names this process: over gRPC no slice is mapped.
        assert master.channel.peer_pid == os.getpid()
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            master.channel.call("RunStep", wire.frame(request), timeout=10)
    master.close_session(handle)
    master.close()
    assert "is not a dtfnb shared-memory block" in caught.value.message
    assert "secret" not in caught.value.message
    assert_serves(server)


# Oversized messages.

def test_a_message_over_the_limit_is_refused_and_the_server_keeps_serving(
        cluster, channels, monkeypatch):
    monkeypatch.setenv("DTFNB_MAX_MESSAGE_BYTES", str(16 * 1024))  # read as servers start
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    address = tasks.spec["local"][0]
    err = failure(channels(address), "MasterService/RunStep", b"\x00" * 20_000)
    assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    refused = rpc.as_op_error(err, "the master")
    assert isinstance(refused, tf.errors.InvalidArgumentError)
    assert "to or from the master was refused" in refused.message
    assert "larger than max (20000 vs. 16384)" in refused.message

    inline = config_pb2.ConfigProto(disable_shared_memory=True)
    p = tf.placeholder(tf.float32, [None])
    y = p + 1.0
    big = tf.zeros([10_000])
    feed = {p.name: np.zeros(5_000, np.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds the limit of 16384"):
        remote_run(address, [y], feed, inline)  # this client's own limit
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds the limit of 16384"):
        remote_run(address, [big], config=inline)  # the server's reply
    monkeypatch.delenv("DTFNB_MAX_MESSAGE_BYTES")  # a client that sends more than it takes
    with pytest.raises(tf.errors.InvalidArgumentError, match="refused.*larger than max"):
        remote_run(address, [y], feed, inline)
    small = {p.name: np.zeros(3, np.float32)}
    np.testing.assert_array_equal(remote_run(address, [y], small, inline)[0], [1, 1, 1])
    assert_serves(server)


# The cluster token.

_CLIENT = """
import sys
import dtfnb as tf
from tests.distributed.test_transport_security import pinned_on_ps_and_worker
with tf.Session(sys.argv[1]) as sess:
    print(sess.run(pinned_on_ps_and_worker()).tolist())
"""


def test_with_a_token_members_and_clients_that_have_it_are_served(cluster, monkeypatch):
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "s3cret")
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.Session(worker.target) as sess:  # the worker's master calls the ps over gRPC
        assert sess.run(pinned_on_ps_and_worker()).tolist() == [10.0, 30.0, 50.0, 70.0]
    client = subprocess.run([sys.executable, "-c", _CLIENT, worker.target], timeout=60,
                            capture_output=True, text=True, env=dict(os.environ),
                            cwd=ROOT)
    assert client.returncode == 0, client.stderr
    assert client.stdout.strip() == "[10.0, 30.0, 50.0, 70.0]"


def test_without_the_token_every_call_is_unauthenticated(cluster, channels, monkeypatch):
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "s3cret")
    tasks = cluster({"local": 1})
    server = tasks["local", 0]
    address = tasks.spec["local"][0]
    channel = channels(address)
    status = wire.frame(worker_pb2.GetStatusRequest())
    for metadata in (None, [("dtfnb-token", "wrong")], [("dtfnb-token", "s3cret!")],
                     [("dtfnb-token", "")]):
        for method in ("WorkerService/GetStatus", "MasterService/RunStep", "MonitorService/Watch"):
            err = failure(channel, method, status, metadata=metadata)
            assert err.code() is grpc.StatusCode.UNAUTHENTICATED
            refused = rpc.as_op_error(err, f"the task at {address}")
            assert isinstance(refused, tf.errors.UnauthenticatedError)
            assert refused.message == (f"the task at {address}: Missing or wrong cluster "
                                       "token (DTFNB_CLUSTER_TOKEN)")
    reply = channel.unary_unary("/dtfnb.WorkerService/GetStatus")(
        status, timeout=10, metadata=[("dtfnb-token", "s3cret")])
    assert wire.unframe(reply, worker_pb2.GetStatusResponse)[0].device_attributes

    # A stream is refused before it sends anything: no server thread waits on it.
    hold, held_out = threading.Event(), []

    def silent():
        if not hold.wait(5):
            held_out.append(True)
        yield wire.frame(worker_pb2.TensorPush(peer=shm.local_peer()))

    try:
        assert stream_failure(channel, silent()).code() is grpc.StatusCode.UNAUTHENTICATED
    finally:
        hold.set()
    assert not held_out
    assert stream_failure(channel, iter([])).code() is grpc.StatusCode.UNAUTHENTICATED

    x = tf.constant(1.0)
    for token in ("wrong", None):
        security = rpc.Security({"DTFNB_CLUSTER_TOKEN": token} if token else {})
        with pytest.raises(tf.errors.UnauthenticatedError, match="Missing or wrong cluster"):
            remote_run(address, [x], security=security)
    assert_serves(server)


# TLS.

@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A CA and a task certificate it signs (for both ends); a rogue CA's, and their paths."""
    return tls_certificates(tmp_path_factory.mktemp("tls"), "IP:127.0.0.1,DNS:localhost")


def use_tls(monkeypatch, certificates, cert="task.pem", key="task.key", ca="ca.pem"):
    for name, file in (("CERT", cert), ("KEY", key), ("CA", ca)):
        monkeypatch.setenv(f"DTFNB_TLS_{name}", str(certificates / file))


def test_tls_between_tasks_and_clients(cluster, channels, monkeypatch, certificates):
    use_tls(monkeypatch, certificates)
    tasks = cluster({"ps": 1, "worker": 1})
    worker = tasks["worker", 0]
    fetch = pinned_on_ps_and_worker()
    with tf.Session(worker.target) as sess:  # master -> ps and ps -> worker over TLS
        assert sess.run(fetch).tolist() == [10.0, 30.0, 50.0, 70.0]
    assert remote_run(tasks.spec["worker"][0], [fetch])[0].tolist() == [10.0, 30.0, 50.0, 70.0]

    pem = {name: (certificates / name).read_bytes()
           for name in ("ca.pem", "task.pem", "task.key", "rogue.pem", "rogue.key")}
    strangers = {
        "plaintext": None,
        "no client certificate": grpc.ssl_channel_credentials(pem["ca.pem"]),
        "a rogue CA's certificate": grpc.ssl_channel_credentials(
            pem["ca.pem"], pem["rogue.key"], pem["rogue.pem"]),
        # And a client that does not trust the task's CA does not talk to it.
        "distrust": grpc.ssl_channel_credentials(pem["rogue.pem"], pem["task.key"],
                                                 pem["task.pem"]),
    }
    status = wire.frame(worker_pb2.GetStatusRequest())
    for name, credentials in strangers.items():
        err = failure(channels(tasks.spec["ps"][0], credentials), "WorkerService/GetStatus",
                      status)
        assert err.code() is grpc.StatusCode.UNAVAILABLE, name
        assert isinstance(rpc.as_op_error(err, "x"), tf.errors.UnavailableError)


def test_bad_security_settings_are_clear_errors_before_anything_starts(
        monkeypatch, certificates):
    def error(**env):
        with pytest.raises(ValueError) as caught:
            rpc.Security({f"DTFNB_{k}": str(certificates / v) if k.startswith("TLS") else v
                          for k, v in env.items()})
        return str(caught.value)

    assert "must be set together" in error(TLS_CERT="task.pem")
    assert "DTFNB_TLS_CA is set but" in error(TLS_CA="ca.pem")
    assert "DTFNB_TLS_KEY: cannot read" in error(TLS_CERT="task.pem", TLS_KEY="nowhere.key")
    assert "must be a PEM certificate and its unencrypted private key" in error(
        TLS_CERT="ext", TLS_KEY="task.key")
    assert "key values mismatch" in error(TLS_CERT="task.pem", TLS_KEY="rogue.key")
    assert "DTFNB_TLS_CA must hold PEM certificates" in error(
        TLS_CERT="task.pem", TLS_KEY="task.key", TLS_CA="ext")
    assert "printable ASCII" in error(CLUSTER_TOKEN="t\u00f6ken")
    assert "printable ASCII" in error(CLUSTER_TOKEN="token\n")
    use_tls(monkeypatch, certificates, key="rogue.key")  # not "cannot bind the port"
    with pytest.raises(ValueError, match="key values mismatch"):
        tf.train.Server(cluster_dict(local=1), "local", 0)


# Where servers listen.

def _another_local_address():
    """An IPv4 address of this machine other than loopback, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 9))  # a route lookup: nothing is sent
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_a_server_on_127_0_0_1_is_not_reachable_on_other_addresses(cluster):
    other = _another_local_address()
    if other is None:
        pytest.skip("this machine has no IPv4 address besides loopback")
    port = int(cluster({"local": 1}).spec["local"][0].rsplit(":", 1)[1])
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((other, port), timeout=2)
