"""Worker: a task's devices; registers graph partitions and runs them per step."""

import secrets
import threading
import time
import weakref

from dtfnb.base import dtypes
from dtfnb.base.errors import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    InvalidArgumentError,
)
from dtfnb.distributed_runtime.collector import IdleCollector
from dtfnb.distributed_runtime.emulation import Conditions
from dtfnb.distributed_runtime.interfaces import WorkerInterface
from dtfnb.runtime import blas
from dtfnb.runtime.collectives import JOIN_STEP_ID, Collectives
from dtfnb.runtime.executor import Executor, SessionState
from dtfnb.runtime.functions import FunctionLibrary
from dtfnb.runtime.rendezvous import RendezvousTable
from dtfnb.runtime.step import tensor_bytes

# Graphs that masters of other tasks keep registered on one worker: beyond, the least
# recently used idle ones are dropped, so that a storm of RegisterGraph cannot exhaust the
# task. A session registers one per signature it runs, so this is far above real use.
MAX_REMOTE_GRAPHS = 4096


class TransferOptions:
    """How a session's tensors cross to other tasks: narrower floats, shared memory."""

    __slots__ = ("float_type", "shared_memory")

    def __init__(self, config=None):
        float_type = config.transfer_float_type if config is not None else 0
        self.float_type = dtypes.as_dtype(float_type) if float_type else None
        self.shared_memory = config is None or not config.disable_shared_memory


class _Outbound:
    """A step's sends on one task. Tensors for other tasks wait until the sending thread
    runs out of ready work (`Step.flush`), then go together: one message, and one
    wakeup of the transport, per peer instead of per tensor."""

    __slots__ = ("_worker", "_options", "_held", "_lock")

    def __init__(self, worker, options):
        self._worker = worker
        self._options = options
        self._held = []
        self._lock = threading.Lock()

    def send(self, step, key, value):
        device = key.split(";", 2)[1]
        local = device in self._worker.devices
        if step.sent is not None:
            step.count_sent(key, tensor_bytes(value, None if local else
                                              self._options.float_type))
        if local:
            step.rendezvous.send(key, value)
        else:
            with self._lock:
                self._held.append((device, key, value))

    def flush(self, step):
        if not self._held:  # a thread that held some flushes them itself
            return
        with self._lock:
            held, self._held = self._held, []
        self._worker.push(step.id, held, self._options, step.abort)


class _Graph:
    """A registered graph: its session, its partitions' executors, the tensors its steps
    must feed, and the steps its master cleaned up before they started here; `remote`:
    registered by the master of another task; `steps`: how many of its steps run here."""

    __slots__ = ("session", "executors", "options", "feeds", "cancelled", "remote",
                 "last_used", "steps")

    # Cleanups that came after their step had ended here are never claimed: keep the last.
    _CANCELLED_KEPT = 256

    def __init__(self, session, executors, options, feeds, remote):
        self.session = session
        self.executors = executors
        self.options = options
        self.feeds = feeds
        self.cancelled = {}   # step id -> True, oldest first
        self.remote = remote
        self.last_used = time.monotonic()
        self.steps = 0

    @property
    def busy(self):
        """Whether a step of the graph is running here."""
        return self.steps > 0

    def cancel_before_start(self, step_id):
        self.cancelled[step_id] = True
        if len(self.cancelled) > self._CANCELLED_KEPT:
            del self.cancelled[next(iter(self.cancelled))]


class Worker(WorkerInterface):
    """The worker service of one task: registers the partitions a master sends it and
    runs them, one step at a time each, on the task's devices. The servicers of
    transport/services.py adapt the same methods for masters in other processes.

    ```python
    worker = Worker(create_devices(config, "localhost", 0, 1, events), 1)
    handle = worker.register_graph(session_handle, {device_name: nodes}, config)
    worker.start_graph(handle, Step()).wait()   # a failure is in the step's error
    ```

    `peers`, given to a task of a cluster, carries tensors to other tasks
    (`peers.push(step_id, [(device, key, value)], options, on_error)`); steps then take
    their rendezvous from a table by step id, since a peer's tensor may arrive first.
    `conditions` (emulation.Conditions) are the task's emulated link, which the
    transport applies, and its slowness, which delays the end of each step's partitions
    here. `traffic` (traffic.Traffic), given to a task of a cluster, counts the tensor
    bytes it exchanges with other tasks, which the transport adds to.

    Any peer may call a task, so a step's id and its graph's handle, both random and
    known only to the step's master, are what make a call about a step the master's: a
    RunGraph may not join a step already running here, and a cleanup stops a step only
    if it names the graph that the step runs.

    A graph of another task's master that has run nothing for `graph_gc_seconds` (0:
    never) is dropped, as are the least recently used idle ones beyond MAX_REMOTE_GRAPHS:
    the master may have ended without deregistering it. Its next RunGraph is then
    AbortedError, on which a MonitoredSession makes a new session. Graphs of this task's
    own master are that master's to deregister.
    """

    def __init__(self, devices, blas_threads, peers=None, graph_gc_seconds=0.0,
                 conditions=None, traffic=None):
        self.devices = {d.name: d for d in devices}
        self.conditions = conditions or Conditions()
        self.task = next(iter(self.devices)).rpartition("/device:")[0]
        self._graphs = {}
        # A session's state lives as long as one of its graphs (or steps) holds it.
        self._sessions = weakref.WeakValueDictionary()
        self._peers = peers
        self._rendezvous = RendezvousTable() if peers is not None else None
        self.collectives = Collectives(self.task, self._rendezvous or RendezvousTable(),
                                       peers, traffic, TransferOptions())
        for device in devices:
            device.collectives = self.collectives
        self._running = {}
        self._lock = threading.Lock()
        self._collector = IdleCollector(self._graphs, self._lock, graph_gc_seconds,
                                        MAX_REMOTE_GRAPHS, "graph", "graphs of other tasks",
                                        "worker")
        self.graphs_run = 0    # steps run here (HealthEvent)
        self.traffic = traffic
        # Intra-op parallelism is BLAS's: its threads are set per task (process-wide), so
        # that several tasks on one host do not fight for the same cores, and fewer while
        # other processes keep cores busy (blas.adjust at each step).
        blas.configure(blas_threads)

    def list_devices(self):
        """The task's devices."""
        return list(self.devices.values())

    def register_graph(self, session_handle, partitions, config=None, library=(),
                       remote=False):
        """`partitions` maps a device name of this task to its runtime Nodes; `library`
        holds the FunctionDefs their nodes may call; `remote`: from another task's
        master."""
        with self._lock:
            state = self._sessions.get(session_handle)
            if state is None:
                state = SessionState(session_handle, FunctionLibrary())
                self._sessions[session_handle] = state
        state.functions.add(library)
        executors = [Executor(nodes, self.devices[name], state)
                     for name, nodes in partitions.items()]
        feeds = frozenset(node.attrs["tensor_name"] for nodes in partitions.values()
                          for node in nodes if node.op == "_Feed")
        # Random, so that a handle from before a restart of this task is never valid again,
        # and so that only the master that registered the graph can name it.
        handle = f"graph-{secrets.token_hex(8)}"
        self._collector.add(handle, _Graph(session_handle, executors, TransferOptions(config),
                                           feeds, remote))
        return handle

    def start_graph(self, graph_handle, step, alone=True):
        """Starts one step of a registered graph here and runs it on this thread as far
        as it goes; returns the call, whose `wait()` returns once it has ended here.
        Nothing raises: what fails, fails the step (Step.abort), where its master finds
        it. `alone` (no other task runs a part of the step) matters only to calls that
        cross to another process (RemoteWorker)."""
        blas.adjust()
        try:
            if self._rendezvous is None:  # a local session's task: all of the step is here
                return _GraphRun(step, self._graph(graph_handle).executors)
            graph = self._admit(graph_handle, step)
        except Exception as err:
            step.abort(err)
            return _GraphRun(step)
        step.outbound = _Outbound(self, graph.options)
        step.rendezvous = self._rendezvous.start(step.id)
        return _GraphRun(step, graph.executors, lambda: self._end(graph, step),
                         self.conditions.slow)

    def runs_unattended(self, graph_handle, timeout_ms):
        """Whether a step of the graph, with that deadline, can start on a thread that
        must not wait (the one reading a connection) and end on whichever thread ends it
        (see _GraphRun.add_done_callback): one partition whose kernels never block, no
        deadline to watch, no emulated slowness to sleep."""
        graph = self._graphs.get(graph_handle)
        return (graph is not None and len(graph.executors) == 1 and not timeout_ms
                and graph.executors[0].never_blocks and self.conditions.slow is None)

    def _admit(self, graph_handle, step):
        """The graph that `step` runs here, once the step is known to be its master's and
        entered in the running table (from where a cleanup aborts it)."""
        with self._lock:  # from the lookup on, the graph is not collected
            graph = self._graph(graph_handle)
            missing = graph.feeds.difference(step.feeds)
            if missing:
                raise InvalidArgumentError(None, None, f"RunGraph of {graph_handle} has no "
                                           f"value for the fed tensor {min(missing)}")
            if graph.cancelled.pop(step.id, False):
                self._rendezvous.finish(step.id)  # drops what peers sent for it
                raise CancelledError(None, None, f"Step {step.id} was cleaned up before it "
                                     "started on this task")
            if step.id in self._running:  # shares no rendezvous with another master's step
                raise AlreadyExistsError(None, None, f"Step {step.id} is already running on "
                                         "this task")
            self._running[step.id] = (graph_handle, step)
            graph.steps += 1
            self.graphs_run += 1
        return graph

    def _end(self, graph, step):
        """Ends a step here: well (Step.succeed) while a cleanup could still abort it, so
        that what it dequeued either goes back or is its master's; then forgets it."""
        step.succeed()
        with self._lock:
            self._running.pop(step.id, None)
            graph.steps -= 1
            graph.last_used = time.monotonic()
        self._rendezvous.finish(step.id)

    def _graph(self, handle):
        graph = self._graphs.get(handle)
        if graph is None:
            # TensorFlow's answer: AbortedError makes a MonitoredSession recreate its session.
            raise AbortedError(None, None, f"Graph handle is not found: {handle}. "
                               "Possibly, this worker just restarted.")
        return graph

    def push(self, step_id, tensors, options, on_error):
        """Sends [(device, key, value)] of a step to the tasks of those devices; a failure
        goes to `on_error(error)`."""
        self._peers.push(step_id, tensors, options, on_error)

    def deliver(self, step_id, key, value):
        """A tensor another task sent to one of this task's devices, or a member it
        announced to the groups of collective ops."""
        if step_id == JOIN_STEP_ID:
            self.collectives.joined(key, value)
        else:
            self._rendezvous.deliver(step_id, key, value)

    def cleanup_step(self, step_id, graph_handle, error):
        """Its master saw the step fail: aborts what runs of it here, or, before it starts,
        makes the start fail. A cleanup that names another graph than the step's is a
        peer's forgery: it changes nothing."""
        with self._lock:
            running = self._running.get(step_id)
            if running is None:
                graph = self._graphs.get(graph_handle)
                if graph is not None:
                    graph.cancel_before_start(step_id)
                return
        handle, step = running
        if handle == graph_handle:
            step.abort(error)

    def deregister_session(self, session_handle):
        """Forgets every graph of a session."""
        with self._lock:
            for handle in [h for h, g in self._graphs.items() if g.session == session_handle]:
                del self._graphs[handle]

    def reset(self, containers):
        """Frees the resources of `containers` on the task's devices."""
        for device in self.devices.values():
            for container in containers:
                device.resource_mgr.cleanup(container)

    def close(self):
        """Aborts the steps still running here (another task's master may never end them),
        then frees the graphs and the devices' threads."""
        self._collector.stop()
        with self._lock:
            self._graphs.clear()
            running = [step for _, step in self._running.values()]
        for step in running:
            step.abort(CancelledError(None, None, "The task is stopping."))
        for device in self.devices.values():
            device.close()
        self.conditions.close()


class _GraphRun:
    """A step of a registered graph on this task, started (Worker.start_graph): the first
    partition runs on the starting thread as far as it goes, the others on their devices'
    pools. `wait()` waits for them all, records what failed in the step, sleeps what a
    `slow` task (emulation.Slowness) adds, then runs `end`."""

    __slots__ = ("_step", "_waits", "_end", "_run")
    needs_thread = False   # its `wait()` after a done callback waits for nothing

    def __init__(self, step, executors=(), end=None, slow=None):
        self._step = step
        self._end = end
        started = time.monotonic()
        waits = [ex.device.blocking_pool.submit(ex.run, step).result for ex in executors[1:]]
        self._run = executors[0].start(step) if executors else None
        if self._run is not None:
            waits.insert(0, self._run.wait)
        if slow is not None:   # the emulated compute, after the real one
            waits.append(lambda: step.sleep(slow.delay(time.monotonic() - started)))
        self._waits = waits

    def wait(self):
        for wait in self._waits:
            try:
                wait()
            except Exception as err:  # the step keeps the first error; others follow it
                self._step.abort(err)
        self._finish()

    def _finish(self):
        end, self._end = self._end, None   # once, after a done callback too
        if end is not None:
            end()

    def add_done_callback(self, fn):
        """For a step that Worker.runs_unattended: calls `fn()` once the step has ended
        here (an error is the step's), on the thread that ends it; `wait()` then only
        finishes up."""
        def ended():
            self._finish()
            fn()
        if self._run is None:   # refused before it started
            ended()
        else:
            self._run.add_done_callback(ended)
