"""How long a master's sessions and their steps live: sessions of other processes that
are abandoned or flood a task are closed, as are the graphs that other tasks' masters
register on a worker, a server's default deadline applies to the sessions of its own
process, and time limits too long to wait for are none."""

import secrets
import time

import grpc
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime import master, worker
from dtfnb.distributed_runtime.transport import rpc, wire
from dtfnb.distributed_runtime.transport.remote import RemoteMaster
from dtfnb.protos import config_pb2, graph_pb2, master_pb2, worker_pb2
from tests.helpers import (
    cluster_dict,
    in_thread,
    poll_for,
    start_task,
    stop_processes,
    wait_for_port,
)


def blocked_dequeue():
    """(dequeue, enqueue of 5.0) of a queue that starts empty."""
    queue = tf.FIFOQueue(1, tf.float32, shared_name="lifetime")
    return queue.dequeue(), queue.enqueue(5.0)


@pytest.fixture
def task():
    """start(**env) -> the address of a `python -m dtfnb.server` task, stopped after."""
    procs = []

    def start(**env):
        cluster = cluster_dict(local=1)
        procs.append(start_task(cluster, "local", 0, env=env))
        wait_for_port(cluster["local"][0], proc=procs[-1])
        return cluster["local"][0], procs[-1]

    yield start
    stop_processes(procs)


@pytest.fixture
def ps_and_worker():
    """start(**ps_env) -> (ps address, worker address, ps process): `python -m
    dtfnb.server` tasks, stopped after."""
    procs = []

    def start(**ps_env):
        cluster = cluster_dict(ps=1, worker=1)
        procs.append(start_task(cluster, "ps", 0, env=ps_env))
        procs.append(start_task(cluster, "worker", 0))
        wait_for_port(cluster["ps"][0], proc=procs[-2])
        wait_for_port(cluster["worker"][0], proc=procs[-1])
        return cluster["ps"][0], cluster["worker"][0], procs[-2]

    yield start
    stop_processes(procs)


@pytest.fixture
def remote_master():
    """connect(address): a client of a master in another process, closed after."""
    masters = []

    def connect(address):
        masters.append(RemoteMaster(address, rpc.Security()))
        return masters[-1]

    yield connect
    for remote in masters:
        remote.close()


def resident_kib(proc):
    with open(f"/proc/{proc.pid}/statm") as f:
        return int(f.read().split()[1]) * 4


# Abandoned sessions.

def test_an_idle_session_of_another_process_is_collected_and_its_client_aborted(
        task, remote_master):
    address, _ = task(DTFNB_SESSION_GC_SECONDS="0.5")
    client = remote_master(address)
    a = tf.constant(2.0) * 3.0
    handle = client.create_session(tf.get_default_graph().as_graph_def(),
                                   config_pb2.ConfigProto())
    assert client.run_step(handle, {}, [a.name], []) == [6.0]

    def collected():
        try:
            client.list_devices(handle)  # asks about the session without using it
        except tf.errors.InvalidArgumentError as err:  # TensorFlow's class for this call
            return err.message == (f"Session {handle} is not found. Possibly, this master "
                                   "has restarted.")
        return False

    assert poll_for(collected, timeout=10, interval=0.1)
    with pytest.raises(tf.errors.AbortedError) as info:
        client.run_step(handle, {}, [a.name], [])
    assert info.value.message == f"Session {handle} is not found."


def test_a_session_running_a_step_is_never_collected(task):
    address, _ = task(DTFNB_SESSION_GC_SECONDS="0.2")
    dequeue, enqueue = blocked_dequeue()
    a = tf.constant(1.0) + 1.0
    with tf.Session(f"grpc://{address}") as sess:
        thread, box = in_thread(lambda: sess.run(dequeue))
        time.sleep(1.0)  # five times the idle limit, while the step waits
        with tf.Session(f"grpc://{address}") as other:
            other.run(enqueue)
        thread.join(10)
        assert box == {"value": 5.0}
        assert sess.run(a) == 2.0


def test_a_monitored_session_outlives_the_collection_of_its_session(task):
    address, _ = task(DTFNB_SESSION_GC_SECONDS="0.3")
    a = tf.constant(1.0) + 1.0
    creator = tf.train.ChiefSessionCreator(master=f"grpc://{address}")
    with tf.train.MonitoredSession(session_creator=creator) as sess:
        assert sess.run(a) == 2.0
        time.sleep(1.5)  # collected meanwhile: the next run makes a new session
        assert sess.run(a) == 2.0


def test_a_create_session_storm_leaves_memory_flat_and_a_busy_session_working(task):
    """Each round opens 512 sessions and never closes them: once a master holds its
    MAX_REMOTE_SESSIONS, each new one closes the least recently used idle one."""
    address, proc = task()
    create = grpc.insecure_channel(address).unary_unary("/dtfnb.MasterService/CreateSession")
    graph = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name=f"n{i}", op="NoOp")
                                     for i in range(50)])
    request = wire.frame(master_pb2.CreateSessionRequest(graph_def=graph))
    a = tf.constant(1.0) + 1.0
    resident = []
    with tf.Session(f"grpc://{address}") as sess:
        for _ in range(6):
            for i in range(512):
                create(request, timeout=10)
                if i % 256 == 0:
                    assert sess.run(a) == 2.0
            resident.append(resident_kib(proc))
    # Before: ~18 MiB more per round, without end.
    assert resident[-1] - resident[1] < 8 * 1024, resident
    assert 2 * 512 >= master.MAX_REMOTE_SESSIONS  # the bound was reached by then


# Graphs that other tasks' masters register on a worker.

def test_an_idle_graph_of_another_task_is_collected_and_its_master_aborted(
        ps_and_worker, remote_master):
    """The worker's master never deregisters its graph on the ps (it may have died
    without closing its sessions): the ps drops it, and its next run says so."""
    ps, address, _ = ps_and_worker(DTFNB_SESSION_GC_SECONDS="0.3")
    with tf.device("/job:ps/task:0"):
        a = tf.constant(2.0) * 3.0
    client = remote_master(address)
    handle = client.create_session(tf.get_default_graph().as_graph_def(),
                                   config_pb2.ConfigProto())
    assert client.run_step(handle, {}, [a.name], []) == [6.0]
    time.sleep(1.5)  # the session on the worker's master stays; its graph on the ps goes
    with pytest.raises(tf.errors.AbortedError) as info:
        client.run_step(handle, {}, [a.name], [])
    assert info.value.message.startswith("Graph handle is not found: graph-")
    assert info.value.message.endswith(". Possibly, this worker just restarted.")


def test_a_monitored_session_outlives_the_collection_of_its_graph(ps_and_worker):
    ps, address, _ = ps_and_worker(DTFNB_SESSION_GC_SECONDS="0.3")
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0) + 1.0

    class CountSessions(tf.train.SessionRunHook):
        created = 0

        def after_create_session(self, session, coord):
            CountSessions.created += 1

    creator = tf.train.ChiefSessionCreator(master=f"grpc://{address}")
    with tf.train.MonitoredSession(session_creator=creator, hooks=[CountSessions()]) as sess:
        assert sess.run(a) == 2.0
        time.sleep(1.5)  # collected meanwhile: the next run makes a new session
        assert sess.run(a) == 2.0
    assert CountSessions.created == 2


def test_a_graph_running_a_step_is_never_collected(ps_and_worker):
    ps, address, _ = ps_and_worker(DTFNB_SESSION_GC_SECONDS="0.2")
    with tf.device("/job:ps/task:0"):
        dequeue, enqueue = blocked_dequeue()
    with tf.Session(f"grpc://{address}") as sess:
        thread, box = in_thread(lambda: sess.run(dequeue))
        time.sleep(1.0)  # five times the idle limit, while the step waits on the ps
        with tf.Session(f"grpc://{address}") as other:
            other.run(enqueue)
        thread.join(10)
        assert box == {"value": 5.0}
        sess.run(enqueue)
        assert sess.run(dequeue) == 5.0   # its graph on the ps is still there


def test_a_register_graph_storm_leaves_memory_flat_and_a_busy_graph_working(ps_and_worker):
    """A stranger registers 2048 graphs a round on the ps, each for a new session, and
    never deregisters them: once the ps holds MAX_REMOTE_GRAPHS, each new one past the
    limit drops the least recently used idle ones."""
    ps, address, proc = ps_and_worker()
    register = grpc.insecure_channel(ps).unary_unary("/dtfnb.WorkerService/RegisterGraph")
    cpu = "/job:ps/replica:0/task:0/device:CPU:0"
    graph = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name=f"n{i}", op="NoOp", device=cpu)
                                     for i in range(20)])
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0) + 1.0
    resident = []
    with tf.Session(f"grpc://{address}") as sess:
        for _ in range(3):
            for i in range(2048):
                register(wire.frame(worker_pb2.RegisterGraphRequest(
                    session_handle=secrets.token_hex(8), graph_def=graph)), timeout=10)
                if i % 512 == 0:
                    assert sess.run(a) == 2.0
            resident.append(resident_kib(proc))
    # Before: ~32 MiB more per round, without end.
    assert resident[-1] - resident[1] < 8 * 1024, resident
    assert 2 * 2048 >= worker.MAX_REMOTE_GRAPHS  # the bound was reached by then


def test_a_master_forgets_the_graphs_of_the_sessions_it_closed(cluster):
    """A master kept what it knew of each graph it registered on another task (its
    feeds, its transfer options) after the session closed: a leak per session."""
    task = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0) + 1.0
    for _ in range(3):
        with tf.Session(task.target) as sess:
            assert sess.run(a) == 2.0
    assert task._peers.worker("/job:ps/replica:0/task:0")._graphs == {}


# A server's default deadline.

def test_a_servers_operation_timeout_is_the_default_of_its_in_process_sessions(cluster):
    """As TensorFlow's LocalMaster: a session of this process on the server, with or
    without a config of its own, times out after the server's operation_timeout_in_ms
    unless it sets a deadline itself, and says "Operation timed out."."""
    server = cluster({"local": 1},
                     config=tf.ConfigProto(operation_timeout_in_ms=200))["local", 0]
    dequeue, _ = blocked_dequeue()
    for config, options in [(None, None), (tf.ConfigProto(allow_soft_placement=True), None),
                            (tf.ConfigProto(operation_timeout_in_ms=300), None),
                            (None, tf.RunOptions(timeout_in_ms=100))]:
        with tf.Session(server.target, config=config) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError) as info:
                sess.run(dequeue, options=options)
            assert info.value.message == "Operation timed out."


def test_a_servers_operation_timeout_is_not_the_default_of_other_processes(
        cluster, remote_master):
    server = cluster({"local": 1},
                     config=tf.ConfigProto(operation_timeout_in_ms=100))["local", 0]
    dequeue, enqueue = blocked_dequeue()
    client = remote_master(server.target[len("grpc://"):])
    handle = client.create_session(tf.get_default_graph().as_graph_def(),
                                   config_pb2.ConfigProto())
    thread, box = in_thread(lambda: client.run_step(handle, {}, [dequeue.name], []))
    thread.join(1.0)  # ten times the server's limit
    assert thread.is_alive()
    with tf.Session(server.target) as sess:
        sess.run(enqueue)
    thread.join(10)
    assert box == {"value": [5.0]}


# Time limits.

def test_a_time_limit_too_long_to_wait_for_is_none(cluster, remote_master):
    """RunOptions(timeout_in_ms=2**62) waited forever in TensorFlow; it failed with
    'timestamp out of range' here."""
    server = cluster({"local": 1})["local", 0]
    dequeue, enqueue = blocked_dequeue()
    forever = tf.RunOptions(timeout_in_ms=2**62)
    client = remote_master(server.target[len("grpc://"):])
    handle = client.create_session(tf.get_default_graph().as_graph_def(),
                                   config_pb2.ConfigProto())
    with tf.Session() as local, tf.Session(server.target) as in_process:
        runs = [(lambda: local.run(dequeue, options=forever), local),
                (lambda: in_process.run(dequeue, options=forever), in_process),
                (lambda: client.run_step(handle, {}, [dequeue.name], [], forever)[0],
                 in_process)]
        for run, sess in runs:
            thread, box = in_thread(run)
            thread.join(0.3)
            sess.run(enqueue)
            thread.join(10)
            assert box == {"value": 5.0}
