"""place(), prune(), partition() and Step as pure code: no session, no sockets."""

import os
import threading

import pytest

from dtfnb.base import dtypes
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.errors import CancelledError, DeadlineExceededError, InvalidArgumentError
from dtfnb.runtime.nodes import Node
from dtfnb.runtime.partition import partition, prune
from dtfnb.runtime.placer import place
from dtfnb.runtime.step import Step


class FakeDevice:
    def __init__(self, name):
        self.name = name
        self.spec = DeviceSpec.from_string(name)
        self.device_type = self.spec.device_type
        self.index = self.spec.device_index


CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"
PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
PS1 = "/job:ps/replica:0/task:1/device:CPU:0"
WORKER0 = "/job:worker/replica:0/task:0/device:CPU:0"
WORKER1 = "/job:worker/replica:0/task:1/device:CPU:0"
F32 = dtypes.float32
INT = dtypes.int32


def node(name, op="Add", inputs=(), device="", out=(F32,), **attrs):
    return Node(name, op, [(i, 0) for i in inputs], [], device, attrs, list(out))


def gpu_kernels_for_floats(op, device_type, attrs):
    return device_type == "CPU" or attrs.get("dtype", F32) != INT


LOCAL_TASK = DeviceSpec("localhost", 0, 0)


def run_place(nodes, devices, task=LOCAL_TASK, soft=False, has_kernel=gpu_kernels_for_floats):
    return place(nodes, [FakeDevice(d) for d in devices], task, {}, soft, has_kernel)


def test_unpinned_prefers_gpu_and_falls_back_to_cpu_without_a_gpu_kernel():
    nodes = [node("f", "VariableV2"), node("i", "VariableV2", dtype=INT, out=(INT,))]
    assert run_place(nodes, [CPU, GPU]) == {"f": GPU, "i": CPU}


def test_ref_edges_colocate_and_partial_pins_prefer_the_masters_task_then_names():
    nodes = [node("x", "VariableV2", device="/job:ps", out=(F32._as_ref,)),
             node("x/Assign", "Assign", ["x"], device="/job:worker"),
             node("x/read", "Identity", ["x"], device="/job:worker"),
             node("y", "Add", device="/task:1"), node("z", "Add", device="/task:0")]
    placement = run_place(nodes, [PS0, PS1, WORKER0, WORKER1],
                          task=DeviceSpec("worker", 0, 0))
    # Assign uses the ref in place; Identity only reads it. As in TensorFlow, a spec
    # with no job is any task's: the master's if it matches, else the first by name.
    assert placement == {"x": PS0, "x/Assign": PS0, "x/read": WORKER0, "y": PS1,
                         "z": WORKER0}


def test_a_resource_edge_overrides_its_users_pin_and_classes_must_agree():
    handle = dtypes.resource
    nodes = [node("q", "FIFOQueueV2", device="/job:ps/task:0", out=(handle,)),
             node("put", "QueueEnqueueV2", ["q"], device="/job:worker/task:1", out=()),
             node("c", "Add", device="/job:worker/task:1", _class=["loc:@put"])]
    devices = [PS0, WORKER0, WORKER1]
    with pytest.raises(InvalidArgumentError, match=r"Cannot colocate nodes "
                       r"\{\{colocation_node c\}\} and \{\{colocation_node put\}\}: Cannot "
                       r"merge devices with incompatible jobs: '/job:ps/task:0' and "
                       r"'/job:worker/task:1'"):
        run_place(nodes, devices, task=DeviceSpec("worker", 0, 0))
    placement = run_place(nodes, devices, task=DeviceSpec("worker", 0, 0), soft=True)
    assert placement == {"q": PS0, "put": PS0, "c": WORKER1}  # soft: c stays apart


def test_impossible_pin_fails_or_softly_falls_back():
    nodes = [node("i", "VariableV2", device="/device:GPU:0", dtype=INT, out=(INT,))]
    with pytest.raises(InvalidArgumentError, match="no supported kernel for GPU devices"):
        run_place(nodes, [CPU, GPU])
    assert run_place(nodes, [CPU, GPU], soft=True) == {"i": CPU}
    with pytest.raises(InvalidArgumentError, match="CUDA is not enabled"):
        run_place(nodes, [CPU])


def test_unknown_job_fails_even_with_soft_placement():
    with pytest.raises(InvalidArgumentError, match="explicitly assigned to /job:nope"):
        run_place([node("a", device="/job:nope")], [CPU], soft=True)


def test_placed_nodes_stay():
    placement = {"a": CPU}
    place([node("a"), node("b", inputs=["a"])], [FakeDevice(CPU), FakeDevice(GPU)],
          DeviceSpec("localhost", 0, 0), placement, False, lambda *a: True)
    assert placement == {"a": CPU, "b": GPU}


def test_prune_cuts_fed_edges_and_orders_topologically():
    nodes = {n.name: n for n in [node("a", "Const"), node("q", "Dequeue", ["a"]),
                                 node("b", "Add", ["q", "a"]), node("unused", "Const")]}
    assert prune(nodes, {"q:0"}, [("b", 0)], []) == ["a", "b"]
    assert prune(nodes, set(), [("b", 0)], []) == ["a", "q", "b"]


def test_prune_rejects_cycles():
    nodes = {"a": node("a", inputs=["b"]), "b": node("b", inputs=["a"])}
    with pytest.raises(InvalidArgumentError, match="cycle"):
        prune(nodes, set(), [("a", 0)], [])


def test_partition_inserts_one_send_recv_pair_per_edge_and_device():
    nodes = {n.name: n for n in [node("a", "Const"), node("b", "Neg", ["a"]),
                                 node("c", "Add", ["a", "b"])]}
    placement = {"a": GPU, "b": CPU, "c": CPU}
    parts = partition(["a", "b", "c"], nodes, placement, {}, [("c", 0)])
    ops = {device: sorted(n.op for n in part) for device, part in parts.items()}
    assert ops == {GPU: ["Const", "_Send"], CPU: ["Add", "Neg", "_Fetch", "_Recv"]}
    send = next(n for n in parts[GPU] if n.op == "_Send")
    recv = next(n for n in parts[CPU] if n.op == "_Recv")
    assert send.attrs["key"] == recv.attrs["key"] == f"{GPU};{CPU};a:0"


def test_step_rendezvous_receive_may_come_first():
    step = Step()
    got = []
    receiver = threading.Thread(target=lambda: got.append(step.recv("k")))
    receiver.start()
    step.send("k", 42)
    receiver.join(5)
    assert got == [42]


def test_step_deadline_and_abort_wake_a_blocked_receive():
    step = Step(timeout_ms=50)
    with pytest.raises(CancelledError):
        step.recv("never")
    # The step fails for its deadline, and the error names no kernel.
    assert isinstance(step.error, DeadlineExceededError)
    assert step.error.message == "Timed out waiting for notification"
    step = Step()
    errors = []

    def wait():
        try:
            step.recv("never")
        except CancelledError as err:
            errors.append(err)

    waiter = threading.Thread(target=wait)
    waiter.start()
    step.abort(InvalidArgumentError(None, None, "boom"))
    waiter.join(5)
    assert len(errors) == 1


def test_a_forked_process_draws_its_own_step_ids():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next step id and leave at once
        os.write(write, str(Step().id).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as child:
        child_id = int(child.read())
    assert abs(child_id - Step().id) > 1000


def test_a_step_asked_to_stop_fails_as_cancelled_whatever_breaks_next():
    # Its session's graphs may be gone from its tasks when its RunGraph arrives there.
    step = Step()
    cancelled = CancelledError(None, None, "Step was cancelled by an explicit call to "
                               "`Session::Close()`.")
    step.cancel(cancelled)
    assert step.error is None  # asked, not failed: its parts decide
    step.abort(InvalidArgumentError(None, None, "Graph handle is not found"))
    assert step.error is cancelled


def test_a_step_asked_to_stop_that_ends_well_succeeds():
    step = Step()
    step.cancel(CancelledError(None, None, "closing"))
    assert step.succeed() and step.error is None
    step.abort(CancelledError(None, None, "too late"))
    assert step.error is None
