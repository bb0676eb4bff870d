"""Fuzzing every method of the master and worker services of a task process, over gRPC
and over its Unix socket: seeded, bounded, and every call under a deadline. The task
must live through it, answer every call, keep its memory, and serve a real session
right afterwards."""

import os
import random
import socket

import grpc
import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import rpc, unix, wire
from dtfnb.distributed_runtime.transport.remote import RemoteMaster
from dtfnb.protos import (
    config_pb2,
    graph_pb2,
    master_pb2,
    tensor_pb2,
    wire_pb2,
    worker_pb2,
)
from tests.helpers import cluster_dict, start_task, stop_processes, wait_for_port

pytestmark = pytest.mark.skipif(not unix.enabled(), reason="Unix sockets: Linux only")

MESSAGES_PER_METHOD = 300   # on each transport
DEADLINE = 10               # seconds, for each call
CPU = "/job:local/replica:0/task:0/device:CPU:0"
MiB = 1 << 20

# Values that have broken parsers before: zero, signs, the edges of every width.
INTEGERS = [0, 1, -1, 7, 255, 4096, 2**31 - 1, 2**31, 2**32 - 1, 2**40, 2**62, 2**63 - 1]
DTYPES = [0, 1, 2, 3, 4, 7, 9, 10, 14, 19, 20, 101, 120, 999, 2**31 - 1]
SHAPES = [[], [0], [3], [4096], [-1], [2**40], [2**31, 2**31], [2**62, 4], [1] * 70]
OPS = ["NoOp", "Const", "Identity", "Placeholder", "Add", "Mul", "NoSuchOp", ""]


class Fuzzer:
    def __init__(self, seed, task_pid, session_handle):
        self.rng = random.Random(seed)
        self.task_pid = task_pid
        self.session_handle = session_handle

    def bytes(self, most=64):
        return self.rng.randbytes(self.rng.randrange(most + 1))

    def text(self):
        return self.rng.choice(["", "x", "p:0", "y:0", "a" * 300, "é\x00/:^",
                                self.bytes(12).hex()])

    def integer(self):
        return self.rng.choice(INTEGERS)

    def handle(self):
        return self.rng.choice([self.session_handle, self.text()])

    def tensor(self, name=None):
        """A WireTensor with a hostile dtype, shape and location."""
        rng = self.rng
        tensor = wire_pb2.WireTensor(name=name or self.text(), dtype=rng.choice(DTYPES),
                                     shape=rng.choice(SHAPES))
        if rng.random() < 0.2:
            tensor.wire_dtype = rng.choice(DTYPES)
        location = rng.choice(["inline_bytes", "shared", "proto", "stream_ticket", None])
        if location == "inline_bytes":
            tensor.inline_bytes = rng.choice([0, 4, 12, 16384, 2**40, 2**64 - 1])
        elif location == "shared":
            tensor.shared.CopyFrom(wire_pb2.SharedSlice(
                owner=rng.getrandbits(64), pid=rng.choice([os.getpid(), self.task_pid, 1,
                                                           2**31 - 1]),
                fd=rng.choice([-1, 0, 1, 2, *range(3, 40)]), block_id=rng.getrandbits(64),
                block_size=rng.choice([0, 4096, MiB, 2**62]), read_only=rng.random() < 0.5))
        elif location == "proto":
            tensor.proto.CopyFrom(self.tensor_proto())
        elif location == "stream_ticket":
            tensor.stream_ticket = rng.getrandbits(64)
        return tensor

    def tensor_proto(self):
        rng = self.rng
        proto = tensor_pb2.TensorProto(dtype=rng.choice(DTYPES), tensor_content=self.bytes())
        proto.tensor_shape.dim.extend(tensor_pb2.TensorShapeProto.Dim(size=size)
                                      for size in rng.choice(SHAPES))
        proto.string_val.extend(self.bytes(8) for _ in range(rng.randrange(3)))
        return proto

    def graph(self):
        rng = self.rng
        nodes = []
        for _ in range(rng.randrange(4)):
            node = graph_pb2.NodeDef(name=self.text(), op=rng.choice(OPS),
                                     device=rng.choice([CPU, "", self.text()]),
                                     input=[self.text() for _ in range(rng.randrange(3))])
            node.attr["T"].type = rng.choice(DTYPES)
            node.attr["dtype"].type = rng.choice(DTYPES)
            node.attr["value"].tensor.CopyFrom(self.tensor_proto())
            node.attr["shape"].shape.dim.extend(tensor_pb2.TensorShapeProto.Dim(size=size)
                                                for size in rng.choice(SHAPES))
            nodes.append(node)
        return graph_pb2.GraphDef(node=nodes)

    def peer(self):
        return wire_pb2.PeerInfo(instance=self.rng.getrandbits(64),
                                 pid=self.rng.choice([os.getpid(), self.task_pid, 1]),
                                 host_id=self.text(), probe_fd=self.rng.choice([-1, 0, 5, 9]))

    def request(self, method):
        """A well-formed request of `method` with hostile field values."""
        rng = self.rng
        tensors = [self.tensor(rng.choice(["p:0", None])) for _ in range(rng.randrange(3))]
        short = config_pb2.RunOptions(timeout_in_ms=rng.choice([0, 1, 500]))
        return {
            "CreateSession": lambda: master_pb2.CreateSessionRequest(graph_def=self.graph()),
            "ExtendSession": lambda: master_pb2.ExtendSessionRequest(
                session_handle=self.handle(), graph_def=self.graph()),
            "RunStep": lambda: master_pb2.RunStepRequest(
                session_handle=self.handle(), feed=tensors, options=short,
                fetch=[rng.choice(["y:0", "p:0", self.text()])], peer=self.peer(),
                accept_shared=rng.random() < 0.5, released=[self.integer() % 2**64]),
            "CloseSession": lambda: master_pb2.CloseSessionRequest(session_handle=self.text()),
            "ListDevices": lambda: master_pb2.ListDevicesRequest(session_handle=self.handle()),
            "Reset": lambda: master_pb2.ResetRequest(container=[self.text()]),
            "GetStatus": worker_pb2.GetStatusRequest,
            "RegisterGraph": lambda: worker_pb2.RegisterGraphRequest(
                session_handle=self.handle(), graph_def=self.graph()),
            "DeregisterGraph": lambda: worker_pb2.DeregisterGraphRequest(
                session_handle=self.text()),
            "RunGraph": lambda: worker_pb2.RunGraphRequest(
                graph_handle=self.text(), step_id=self.integer(), send=tensors,
                timeout_in_ms=500, peer=self.peer(), accept_shared=rng.random() < 0.5,
                released=[self.integer() % 2**64]),
            "RecvTensor": lambda: worker_pb2.TensorPush(
                step_id=self.integer(), tensor=tensors, released=[self.integer() % 2**64],
                **({"peer": self.peer()} if rng.random() < 0.3 else {})),
            "FetchTensor": lambda: worker_pb2.FetchTensorRequest(ticket=rng.getrandbits(64)),
            "CleanupGraph": lambda: worker_pb2.CleanupGraphRequest(
                step_id=self.integer(), error_code=rng.choice([0, 3, 17, 99, -5]),
                error_message=self.text()),
            "CleanupAll": lambda: worker_pb2.CleanupAllRequest(container=[self.text()]),
        }[method]()

    def message(self, method):
        """A framed request, then maybe truncated, extended, its length field flipped, its
        bits flipped, or replaced by random bytes."""
        rng = self.rng
        request = self.request(method)
        payload = self.bytes(256) if rng.random() < 0.5 else b""
        data = bytearray(wire.frame(request, [np.frombuffer(payload, np.uint8)]))
        mutation = rng.randrange(6)
        if mutation == 1:
            del data[rng.randrange(len(data) + 1):]
        elif mutation == 2:
            data += self.bytes(128)
        elif mutation == 3 and len(data) >= 4:
            data[:4] = rng.getrandbits(32).to_bytes(4, "little")
        elif mutation == 4:
            for _ in range(rng.randrange(1, 8)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif mutation == 5:
            data = bytearray(self.bytes(200))
        return bytes(data)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1]) * 1024


@pytest.fixture(scope="module")
def task():
    cluster = cluster_dict(local=1)
    proc = start_task(cluster, "local", 0, env={"DTFNB_EARLY_TENSOR_BYTES": str(32 * MiB)})
    try:
        wait_for_port(cluster["local"][0], proc=proc)
        yield cluster["local"][0], proc
    finally:
        stop_processes([proc])


def grpc_caller(address):
    channel = grpc.insecure_channel(address)

    def call(method, messages):
        service, descriptor = wire.METHODS[method]
        path = f"/dtfnb.{service}/{method}"
        try:
            if descriptor.client_streaming:
                list(channel.stream_stream(path)(iter(messages), timeout=DEADLINE))
            elif descriptor.server_streaming:
                list(channel.unary_stream(path)(messages[0], timeout=DEADLINE))
            else:
                channel.unary_unary(path)(messages[0], timeout=DEADLINE)
        except grpc.RpcError as err:   # a clear status; never a handler's crash or a hang
            assert err.code() not in (grpc.StatusCode.DEADLINE_EXCEEDED,
                                      grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL), \
                (method, err)

    return call, channel.close


def unix_caller(address):
    channel = unix.UnixChannel(unix.socket_name(address), None, "the task")

    def call(method, messages):
        descriptor = wire.METHODS[method][1]
        try:
            if descriptor.client_streaming:
                ended = []
                stream = channel.open_stream(method, messages[0], lambda _: None, ended.append)
                for data in messages[1:]:
                    stream.send(data)
                # An echo through the same connection: every push before it was handled.
                channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()),
                             DEADLINE)
                stream.close()
            elif descriptor.server_streaming:
                list(channel.stream_from(method, messages[0], DEADLINE))
            else:
                channel.call(method, messages[0], DEADLINE)
        except tf.errors.OpError as err:
            assert not isinstance(err, (tf.errors.DeadlineExceededError,
                                        tf.errors.UnavailableError, tf.errors.UnknownError,
                                        tf.errors.InternalError)), (method, err)

    return call, channel.close


def hostile_connections(address, rng):
    """Raw Unix-socket connections with hostile envelopes, left open: strangers that claim
    huge hellos or calls, and members that claim huge bodies they never send."""
    kept = []
    for i in range(40):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(DEADLINE)
        sock.connect("\0" + unix.socket_name(address))
        if i % 2:   # a member: says hello first (no token is set)
            sock.sendall(unix._ENVELOPE.pack(0, 0, unix.HELLO, 0))
        length = rng.choice([0, 12, 4096, 4097, 2**24, 2**30, 2**31 - 1, 2**32 - 1])
        if i < 4:
            length = 1 << 30
        sock.sendall(unix._ENVELOPE.pack(length, rng.getrandbits(32), rng.randrange(256),
                                          rng.randrange(256)) + rng.randbytes(64))
        kept.append(sock)
    return kept


def serves(address, monkeypatch):
    """A real session on the task runs a small graph right, over gRPC and the Unix socket."""
    for unix_sockets in ("0", "1"):
        monkeypatch.setenv(unix.SWITCH_VARIABLE, unix_sockets)   # read by each client
        with tf.Graph().as_default() as graph:
            p = tf.placeholder(tf.float32, [None])
            y = tf.reduce_sum(p * 3.0)
        master = RemoteMaster(address, rpc.Security())
        try:
            handle = master.create_session(graph.as_graph_def(), tf.ConfigProto())
            big = np.arange(1 << 18, dtype=np.float32)   # shared memory, when allowed
            for value in (np.arange(4, dtype=np.float32), big):
                assert master.run_step(handle, {p.name: value}, [y.name], [])[0] == \
                    pytest.approx(float(value.sum()) * 3)
            assert isinstance(master.channel, unix.UnixChannel) == (unix_sockets == "1")
        finally:
            master.close()


@pytest.mark.parametrize("transport", ["grpc", "unix"])
def test_no_message_crashes_hangs_or_bloats_the_task(task, transport, monkeypatch):
    address, proc = task
    with tf.Graph().as_default() as graph:
        p = tf.placeholder(tf.uint8, [None], name="p")
        tf.identity(p, name="y")
    master = RemoteMaster(address, rpc.Security())
    handle = master.create_session(graph.as_graph_def(), tf.ConfigProto())
    fuzzer = Fuzzer(16 if transport == "grpc" else 61, proc.pid, handle)
    call, close = (grpc_caller if transport == "grpc" else unix_caller)(address)
    before = rss_bytes(proc.pid)
    kept = hostile_connections(address, fuzzer.rng) if transport == "unix" else []
    try:
        for method in wire.METHOD_NAMES:
            streaming = wire.METHODS[method][1].client_streaming
            for _ in range(MESSAGES_PER_METHOD // (10 if streaming else 1)):
                call(method, [fuzzer.message(method) for _ in range(10 if streaming else 1)])
                assert proc.poll() is None, f"the task died at {method}"
        # Strangers hold no memory: their connections were closed, not read into.
        grown = rss_bytes(proc.pid) - before
        assert grown < 400 * MiB, f"the task's memory grew by {grown >> 20} MiB"
    finally:
        for sock in kept:
            sock.close()
        close()
        master.close()
    assert proc.poll() is None
    serves(address, monkeypatch)
