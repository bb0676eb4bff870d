"""Hostile peers against a task process (`python -m dtfnb.server`): what they send must
never crash it, hand out memory it did not fill, or make it allocate before it knows
who is calling. Each test is an attack that worked before it was fixed."""

import os
import socket
import subprocess
import sys
import time

import grpc
import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import rpc, shm, unix, wire
from dtfnb.distributed_runtime.transport.remote import RemoteMaster
from dtfnb.protos import master_pb2, wire_pb2, worker_pb2
from dtfnb.runtime import rendezvous
from tests.helpers import ROOT, cluster_dict, poll_for, start_task, stop_processes, wait_for_port

pytestmark = pytest.mark.skipif(not shm.available, reason="needs Linux memfd and /proc")

MiB = 1 << 20


@pytest.fixture
def task():
    """start(**env): one task process (job "local"); returns (address, Popen)."""
    procs = []

    def start(**env):
        cluster = cluster_dict(local=1)
        proc = start_task(cluster, "local", 0, env=env)
        procs.append(proc)
        wait_for_port(cluster["local"][0], proc=proc)
        return cluster["local"][0], proc

    yield start
    stop_processes(procs)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        kib = next(line for line in f if line.startswith("VmRSS:")).split()[1]
    return int(kib) * 1024


class Session:
    """A session on the task with `y = identity(p)`, and raw calls to send it anything,
    over its Unix socket or over gRPC (`channels`)."""

    def __init__(self, address, dtype=tf.uint8):
        with tf.Graph().as_default() as graph:
            self.p = tf.placeholder(dtype, [None], name="p")
            self.y = tf.identity(self.p, name="y")
        self.master = RemoteMaster(address, rpc.Security())
        self.handle = self.master.create_session(graph.as_graph_def(), tf.ConfigProto())
        self.channels = {"unix": unix.UnixChannel(unix.socket_name(address), None, "the task"),
                         "grpc": rpc.GrpcChannel(address, rpc.Security(), "the task")}

    def call(self, request, payloads=(), over="unix"):
        """RunStep `request`; the reply's values, or the OpError."""
        channel = self.channels[over]
        try:
            data = channel.call("RunStep", wire.frame(request, payloads), timeout=10)
        except tf.errors.OpError as err:
            return err
        response, payload = wire.unframe(data, master_pb2.RunStepResponse)
        return wire.Incoming(payload, channel.peer_pid).values(response.tensor)["0"]

    def run(self, over="unix", **feed):
        """RunStep fetching y with p fed from the WireTensor fields `feed`."""
        return self.call(master_pb2.RunStepRequest(session_handle=self.handle, fetch=["y:0"],
                                                   feed=[dict(name="p:0", **feed)]), over=over)

    def check(self):
        """The task still runs steps right."""
        value = np.arange(10, dtype=self.p.dtype.as_numpy_dtype)
        np.testing.assert_array_equal(
            self.master.run_step(self.handle, {"p:0": value}, ["y:0"], [])[0], value)

    def close(self):
        for channel in self.channels.values():
            channel.close()
        self.master.close()


def assert_refused(err, message):
    if isinstance(err, grpc.RpcError):
        err = rpc.as_op_error(err, "the task")
    assert isinstance(err, tf.errors.InvalidArgumentError), f"served: {err!r}"
    assert message in err.message, err


def test_a_peer_that_shrinks_a_block_it_fed_cannot_crash_the_task(task):
    # The peer names its own memfd, named as dtfnb names its blocks; then shrinks it and
    # feeds it again: a task that kept the mapping would die of SIGBUS reading it.
    address, proc = task()
    session = Session(address)
    fd = os.memfd_create("dtfnb-block-1", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, MiB)
        forged = wire_pb2.SharedSlice(owner=int.from_bytes(os.urandom(8), "little"),
                                      pid=os.getpid(), fd=fd, block_id=1, block_size=MiB)
        for size in (MiB, 0):
            os.ftruncate(fd, size)
            assert_refused(session.run(dtype=4, shape=[MiB], shared=forged),  # 4: uint8
                           "is not sealed against shrinking")
            assert proc.poll() is None
        session.check()
    finally:
        os.close(fd)
        session.close()


def test_a_bogus_shared_slice_is_invalid_argument_never_unavailable(task):
    # MonitoredSession retries UnavailableError: a peer's bad slice must not look like it.
    address, proc = task()
    session = Session(address)
    try:
        closed = os.open("/dev/null", os.O_RDONLY)
        os.close(closed)
        shared = wire_pb2.SharedSlice(owner=7, pid=os.getpid(), fd=closed, block_id=1,
                                      block_size=MiB)
        assert_refused(session.run(dtype=4, shape=[16], shared=shared), "cannot map")
        too_small = shm.block_pool().lend(np.ones(1 << 16, np.uint8), proc.pid)
        too_small.block_size = 1 << 30
        assert_refused(session.run(dtype=4, shape=[1 << 24], shared=too_small),
                       "does not fit shared block")
        session.check()
    finally:
        session.close()


# Another client of the task, on this host: lends the task a block holding a secret (as
# a session's feed would), prints its SharedSlice and waits.
VICTIM_BLOCK = """
import sys
import numpy as np
from dtfnb.distributed_runtime.transport import shm
secret = shm.block_pool().lend(np.full(1 << 20, 0x5A, np.uint8), int(sys.argv[1]))
print(secret.SerializeToString().hex(), flush=True)
sys.stdin.readline()
"""

# A session of another client, on this host, that feeds 1 MiB through shared memory: it
# prints its process's instance, waits for a line, then prints what each step fetched.
VICTIM_SESSION = """
import sys
import numpy as np
import dtfnb as tf
from dtfnb.distributed_runtime.transport import shm
with tf.Graph().as_default():
    p = tf.placeholder(tf.uint8, [None])
    y = tf.identity(p)
    with tf.Session("grpc://" + sys.argv[1]) as sess:
        sess.run(y, {p: np.zeros(1, np.uint8)})
        print(shm.local_peer().instance, flush=True)
        sys.stdin.readline()
        for i in range(1, 5):
            print(np.unique(sess.run(y, {p: np.full(1 << 20, i, np.uint8)})).tolist(),
                  flush=True)
"""


def other_process(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_a_peer_cannot_make_the_task_serve_another_processs_block(task):
    # A token holder named another client's block (its pid and fd) in a feed and fetched
    # the bytes back through the task: over gRPC from anywhere, or over the Unix socket.
    address, proc = task()
    session = Session(address)
    victim = other_process(VICTIM_BLOCK, str(proc.pid))
    try:
        secret = wire_pb2.SharedSlice.FromString(bytes.fromhex(victim.stdout.readline()))
        assert secret.pid == victim.pid
        assert session.channels["unix"].peer_pid == proc.pid   # replies: the task's blocks
        assert_refused(session.run(dtype=4, shape=[MiB], shared=secret),
                       f"A shared block of process {victim.pid} came from process "
                       f"{os.getpid()}: a process may send only its own blocks")
        assert_refused(session.run("grpc", dtype=4, shape=[MiB], shared=secret),
                       "Shared memory is accepted only over the Unix socket")
        session.check()
    finally:
        victim.communicate("\n", timeout=10)
        session.close()
    assert proc.poll() is None


def test_a_shared_slice_over_grpc_is_refused_by_every_method(task):
    # gRPC names no process at the other end, so no slice that comes over it is mapped,
    # not even one of the caller's own blocks.
    address, proc = task()
    session = Session(address)
    own = shm.block_pool().lend(np.ones(MiB, np.uint8), proc.pid)
    refused = "Shared memory is accepted only over the Unix socket of a task on this host"
    try:
        assert_refused(session.run("grpc", dtype=4, shape=[MiB], shared=own), refused)
        assert np.array_equal(session.run(dtype=4, shape=[MiB], shared=own),
                              np.ones(MiB, np.uint8))   # its own block, on the Unix socket
        channel = session.channels["grpc"]
        run_graph = worker_pb2.RunGraphRequest(graph_handle="any", send=[
            dict(name="p:0", dtype=4, shape=[MiB], shared=own)])
        with pytest.raises(tf.errors.InvalidArgumentError, match=refused):
            channel.call("RunGraph", wire.frame(run_graph), timeout=10)
        ended = []
        stream = channel.open_stream("RecvTensor", wire.frame(worker_pb2.TensorPush(
            step_id=1, tensor=[dict(name="k", dtype=4, shape=[MiB], shared=own)])),
            lambda _: None, ended.append)
        poll_for(lambda: ended, timeout=10)
        stream.close()
        assert_refused(ended[0], refused)
        session.check()
    finally:
        session.close()
    assert proc.poll() is None


def test_a_block_planted_under_another_clients_key_never_reaches_its_steps(task):
    # The task cached mappings by the (instance, block id) a slice claims: a peer that
    # named its own block under another client's instance had the task read its bytes
    # in place of that client's next feeds.
    address, proc = task()
    victim = other_process(VICTIM_SESSION, address)
    session = Session(address)
    try:
        instance = int(victim.stdout.readline())
        planted = shm.block_pool().lend(np.full(MiB, 0xEE, np.uint8), proc.pid)
        for block_id in range(1, 9):   # the victim's first blocks
            planted.owner, planted.block_id = instance, block_id
            assert np.array_equal(session.run(dtype=4, shape=[MiB], shared=planted),
                                  np.full(MiB, 0xEE, np.uint8))   # its own bytes, served
        out, _ = victim.communicate("\n", timeout=60)
        assert out.split("\n")[:4] == ["[1]", "[2]", "[3]", "[4]"]
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
        session.close()
    assert proc.poll() is None


def test_a_peer_cannot_end_a_clients_lease_and_overwrite_what_it_fetched(task):
    # A request's `released` ended leases on the task's blocks whoever sent it: a token
    # holder naming small block ids let the task reuse a block that a client still
    # read, overwriting the client's fetched tensor in place.
    address, proc = task()
    session = Session(address)
    try:
        fetched = session.master.run_step(session.handle, {"p:0": np.full(MiB, 1, np.uint8)},
                                          ["y:0"], [])[0]
        steal = master_pb2.RunStepRequest(
            session_handle=session.handle, fetch=["y:0"], released=range(1, 65),
            feed=[dict(name="p:0", dtype=4, shape=[1], inline_bytes=1)])
        assert session.call(steal, [np.zeros(1, np.uint8)], over="grpc") == [0]
        session.master.run_step(session.handle, {"p:0": np.full(MiB, 2, np.uint8)}, ["y:0"], [])
        assert (fetched == 1).all()
    finally:
        session.close()
    assert proc.poll() is None


def test_a_stream_ticket_in_a_request_is_refused_never_served_uninitialised(task):
    # A stream ticket is a reply's: in a request nothing would ever fill the tensor, and
    # fetching it back returned the task's heap (other sessions' values among it).
    address, proc = task()
    session = Session(address, tf.float32)
    try:
        for shape in ([4096], [2**40]):
            assert_refused(session.run(dtype=1, shape=shape, stream_ticket=1),
                           "names a stream ticket, which only a reply may hold")
        session.check()
    finally:
        session.close()
    channel = grpc.insecure_channel(address)
    try:
        run_graph = worker_pb2.RunGraphRequest(graph_handle="any", send=[
            dict(name="p:0", dtype=1, shape=[4096], stream_ticket=1)])
        with pytest.raises(grpc.RpcError) as caught:
            channel.unary_unary("/dtfnb.WorkerService/RunGraph")(wire.frame(run_graph),
                                                                 timeout=10)
        assert_refused(caught.value, "only a reply may hold")
        push = worker_pb2.TensorPush(step_id=1, tensor=[
            dict(name="k", dtype=1, shape=[4096], stream_ticket=1)])
        with pytest.raises(grpc.RpcError) as caught:
            for _ in channel.stream_stream("/dtfnb.WorkerService/RecvTensor")(
                    iter([wire.frame(push)]), timeout=10):
                pass
        assert_refused(caught.value, "only a reply may hold")
    finally:
        channel.close()
    assert proc.poll() is None


def unix_connection(address):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect("\0" + unix.socket_name(address))
    return sock


def closed_by_peer(sock):
    try:
        return sock.recv(1 << 16) == b""
    except ConnectionResetError:
        return True


def test_a_stranger_on_the_unix_socket_makes_the_task_allocate_nothing(task):
    # A 12-byte header claimed a 1 GiB hello: the task allocated and zeroed it all before
    # it checked the token. Now it closes the connection; and a member's claim costs
    # memory only as its bytes arrive.
    address, proc = task(DTFNB_CLUSTER_TOKEN="s3cret")
    before = rss_bytes(proc.pid)
    for kind in (unix.HELLO, unix.CALL):
        stranger = unix_connection(address)
        try:
            stranger.sendall(unix._ENVELOPE.pack(1 << 30, 0, kind, 0))
            assert closed_by_peer(stranger)
        finally:
            stranger.close()
    member = unix_connection(address)
    try:
        member.sendall(unix._ENVELOPE.pack(6, 0, unix.HELLO, 0) + b"s3cret")
        assert unix.read_message(member, 1 << 16, "the task")[1] == unix.HELLO
        member.sendall(unix._ENVELOPE.pack(1 << 30, 1, unix.CALL,
                                            wire.METHOD_INDEX["RunStep"]) + b"\0" * MiB)
        time.sleep(0.5)   # the task reads what came; a zeroed buffer would show at once
        assert rss_bytes(proc.pid) - before < 200 * MiB
    finally:
        member.close()
    channel = unix.UnixChannel(unix.socket_name(address), "s3cret", "the task")
    try:
        reply = channel.call("GetStatus", wire.frame(worker_pb2.GetStatusRequest()), 10)
        assert wire.unframe(reply, worker_pb2.GetStatusResponse)[0].local_socket
    finally:
        channel.close()
    assert proc.poll() is None


def test_a_stranger_that_never_says_hello_is_dropped(task):
    address, _ = task()
    stranger = unix_connection(address)
    try:
        assert closed_by_peer(stranger)   # within unix._CONNECT_SECONDS, not never
    finally:
        stranger.close()


def test_tensors_pushed_to_steps_that_never_start_are_bounded_in_bytes(task):
    address, proc = task(DTFNB_EARLY_TENSOR_BYTES=str(16 * MiB))
    channel = grpc.insecure_channel(address)
    chunk = np.ones(MiB, np.uint8)

    def pushes():
        for step_id in range(1, 301):
            push = worker_pb2.TensorPush(step_id=step_id, tensor=[
                dict(name="k", dtype=4, shape=[MiB], inline_bytes=MiB)])
            yield wire.frame(push, [chunk])

    before = rss_bytes(proc.pid)
    try:
        stream = channel.stream_stream("/dtfnb.WorkerService/RecvTensor")(pushes(),
                                                                         timeout=30)
        assert list(stream) == []
    finally:
        channel.close()
    assert rss_bytes(proc.pid) - before < 150 * MiB   # 300 MiB were pushed
    assert proc.poll() is None


def test_early_tensors_over_the_limit_fail_their_step_clearly_and_expire_on_a_timer():
    table = rendezvous.RendezvousTable(orphan_seconds=0.3, limit_bytes=3000)
    for step_id in (1, 2, 3):
        table.deliver(step_id, "k", np.zeros(1000, np.uint8))
    with pytest.raises(tf.errors.ResourceExhaustedError, match="DTFNB_EARLY_TENSOR_BYTES"):
        table.start(1)   # the oldest, dropped to make room
    assert table.start(3).items["k"].nbytes == 1000
    table.deliver(4, "k", np.zeros(10, np.uint8))
    deadline = time.monotonic() + 5
    while table.sweep() and time.monotonic() < deadline:
        time.sleep(0.05)   # the table's own thread sweeps them meanwhile
    with pytest.raises(tf.errors.CancelledError):
        table.start(2)


def test_a_task_without_shared_memory_neither_offers_nor_accepts_it(task):
    address, proc = task(DTFNB_SHARED_MEMORY="0")
    session = Session(address, tf.float32)
    try:
        status = session.master.status()
        assert status.peer.probe_fd == -1 and not shm.can_map(status.peer)
        assert status.local_socket   # the Unix socket still serves it
        lent = shm.block_pool().lend(np.ones(1 << 16, np.uint8), proc.pid)
        assert_refused(session.run(dtype=4, shape=[1 << 16], shared=lent),
                       "Shared memory is switched off")
        # A client that says it takes shared memory gets the bytes inline all the same.
        big = np.arange(1 << 18, dtype=np.float32)
        request = master_pb2.RunStepRequest(
            session_handle=session.handle, fetch=["y:0"], accept_shared=True,
            peer=shm.local_peer(), feed=[dict(name="p:0", dtype=1, shape=big.shape,
                                              inline_bytes=big.nbytes)])
        data = session.channels["unix"].call("RunStep", wire.frame(request, [big.view(np.uint8)]),
                                             timeout=10)
        response, payload = wire.unframe(data, master_pb2.RunStepResponse)
        assert response.tensor[0].WhichOneof("location") == "inline_bytes"
        np.testing.assert_array_equal(wire.Incoming(payload).values(response.tensor)["0"],
                                      big)
        np.testing.assert_array_equal(session.master.run_step(
            session.handle, {"p:0": big}, ["y:0"], [])[0], big)
    finally:
        session.close()
    assert proc.poll() is None
