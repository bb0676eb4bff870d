"""The two interfaces of the distributed runtime, as TensorFlow's MasterInterface and
WorkerInterface: each implemented once in this process and once for a task in another
process, so that a caller never asks which one it got.

- MasterInterface: what a client session calls. Master (master.py) serves sessions in
  this process; transport.remote.RemoteMaster reaches one over gRPC or a Unix socket.
  targets.connect(target, config) gives the right one.
- WorkerInterface: what a MasterSession calls, once per task of its cluster. Worker
  (worker.py) runs partitions in this process; transport.remote.RemoteWorker reaches
  another task's.

A step of a session, end to end:

    master, owned = targets.connect("grpc://127.0.0.1:2222", config)
    handle = master.create_session(graph_def, config)
    values = master.run_step(handle, {"x:0": array}, ["y:0"], [])
    # inside, for each task that runs a partition of the step:
    #     call = worker.start_graph(graph_handle, step, alone)
    # then, once every call has started: call.wait() for each
"""

import abc


class MasterInterface(abc.ABC):
    """A master, as a client session sees it.

    ```python
    master, owned = targets.connect("grpc://127.0.0.1:2222", config)
    handle = master.create_session(graph_def, config)
    values = master.run_step(handle, {"x:0": array}, ["y:0"], [])
    master.close_session(handle)
    ```
    """

    @abc.abstractmethod
    def create_session(self, graph_def, config):
        """Starts a session on `graph_def` (a GraphDef) under `config` (a ConfigProto);
        returns its handle."""

    @abc.abstractmethod
    def extend_session(self, handle, graph_def):
        """Adds the nodes of `graph_def` (those the client made since) to a session."""

    @abc.abstractmethod
    def run_step(self, handle, feeds, fetches, targets, options=None, run_metadata=None):
        """Runs one step: `feeds` maps tensor names to arrays, `fetches` are tensor names,
        `targets` op names; returns the fetched arrays, in order. `options` is a
        RunOptions; `run_metadata` (a RunMetadata) is filled when given."""

    @abc.abstractmethod
    def close_session(self, handle):
        """Closes a session: cancels its steps and frees its graphs on every task."""

    @abc.abstractmethod
    def list_devices(self, session_handle=""):
        """The devices a session may use (every device of the cluster, without one)."""

    @abc.abstractmethod
    def reset(self, containers):
        """Frees `containers` on every task and closes the master's sessions."""

    @abc.abstractmethod
    def close(self):
        """Ends the master (or the connection to it)."""


class WorkerInterface(abc.ABC):
    """One task's worker, as a MasterSession sees it. `task` names the task
    ("/job:ps/replica:0/task:0"), known without asking it (it may be down).

    ```python
    handle = worker.register_graph(session_handle, {device_name: nodes}, config)
    calls = [worker.start_graph(handle, step, alone=False) for worker, handle in graphs]
    for call in calls:
        call.wait()
    ```
    """

    task = ""

    @abc.abstractmethod
    def list_devices(self):
        """The task's devices (each with `name`, `device_type`, `emulated`,
        `description`); waits until the task is up."""

    @abc.abstractmethod
    def register_graph(self, session_handle, partitions, config=None, library=()):
        """Registers the partitions of one step signature: `partitions` maps a device
        name of this task to its runtime Nodes, `library` holds the FunctionDefs they may
        call. Returns the graph's handle."""

    @abc.abstractmethod
    def start_graph(self, graph_handle, step, alone=True):
        """Starts `step` of a registered graph on the task; returns the call, whose
        `wait()` returns once the task's part has ended (within the step's deadline).
        Nothing raises: a failure fails the step (runtime.step.Step.abort). `alone`: no
        other task runs a part of the step."""

    @abc.abstractmethod
    def runs_unattended(self, graph_handle, timeout_ms):
        """Whether a step of the graph with that deadline (0: none), started with
        `alone` false, can end with no thread waiting for it: its call then takes
        `add_done_callback(fn)`, which calls fn() on the thread that ends it, and its
        `wait()` only finishes up (unless the call `needs_thread`)."""

    @abc.abstractmethod
    def deregister_session(self, session_handle):
        """Forgets every graph of a session."""

    @abc.abstractmethod
    def reset(self, containers):
        """Frees the resources of `containers` on the task's devices."""

    @abc.abstractmethod
    def close(self):
        """Ends the worker (or the connection to it)."""
