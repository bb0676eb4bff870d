"""Master: sessions over a cluster's devices; places, partitions and runs each step.

A MasterSession holds the GraphDef received so far. At a run it places every
node not placed yet (the whole graph, as TensorFlow does), then, once per
(feeds, fetches, targets) signature, prunes, partitions per device and
registers the partitions with the workers; later runs with that signature
only execute. The session drives each step itself, over its Cluster: the Worker of
each task (interfaces.WorkerInterface) starts its part, and the session waits for
them all. It publishes each placement and each plan (what one signature runs, where,
and the tensors it moves between devices: a PlanEvent), and each step while someone
watches (with the bytes each transfer moved and the scalars it fetched), and the bytes
each step exchanged with each other task (a TrafficEvent), to its task's EventLog.

Sessions of other processes are closed when idle for long, or when too many are
open; sessions of this process are their client's to close.
"""

import functools
import itertools
import random
import sys
import threading
import time

from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.errors import (
    AbortedError,
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
)
from dtfnb.distributed_runtime.collector import IdleCollector
from dtfnb.distributed_runtime.interfaces import MasterInterface
from dtfnb.protos import config_pb2, graph_pb2, monitor_pb2
from dtfnb.runtime import partition as partitioning
from dtfnb.runtime.events import EventLog
from dtfnb.runtime.nodes import nodes_from_graph_def, parse_input
from dtfnb.runtime.placer import place
from dtfnb.runtime.pools import CALLER_THREAD, session_pools
from dtfnb.runtime.stats import StepStatsCollector, cost_graph
from dtfnb.runtime.step import Step

# Sessions of other processes that one master keeps open: beyond, the least recently
# used idle ones are closed, so that a storm of CreateSession cannot exhaust the task.
MAX_REMOTE_SESSIONS = 1024
# What an in-process session of a server says when its deadline passes (TensorFlow's
# LocalMaster); a local session's (DirectSession's) is the step's own.
_LOCAL_MASTER_TIMEOUT = "Operation timed out."


class _Plan:
    """What one signature runs: its id in the session (PlanEvent.plan_id), a registered
    graph per worker, the fetched tensors' names, the rendezvous keys of its transfers
    (in the PlanEvent's order), and how many times it ran (for
    GraphOptions.build_cost_model)."""

    __slots__ = ("id", "graphs", "fetches", "partitions", "transfers", "runs")

    def __init__(self, plan_id, graphs, fetches, partitions, transfers):
        self.id = plan_id
        self.graphs = graphs
        self.fetches = fetches
        self.partitions = partitions
        self.transfers = transfers
        self.runs = itertools.count()


_TASK_FIELDS = ("job", "replica", "task")
_DEVICE_FIELDS = _TASK_FIELDS + ("device_type", "device_index")


def _matches(spec, name, fields):
    """Whether `name` has every field that the (partial) `spec` sets."""
    return all(getattr(spec, f) is None or getattr(spec, f) == getattr(name, f)
               for f in fields)


class Cluster:
    """The tasks that a master's sessions run on, as the master sees them: this task
    (`task_spec`), a Worker per task (this task's own and a RemoteWorker for each other
    one: the same methods), and this task's event log. A session places, registers and
    runs its steps through it; it never calls back into its Master.

    `client_device`: where a local session (TensorFlow's DirectSession) feeds and
    fetches, its CPU:0; None on a server, whose clients feed and fetch through
    transfers. `traffic`: a server's traffic.Traffic, where each step's bytes to and from
    other tasks are counted (a session publishes them as the step ends); None locally."""

    def __init__(self, task_spec, workers, events, client_device=None, traffic=None):
        self.task_spec = task_spec
        self.task = task_spec.to_string()
        self.workers = workers
        self.events = events
        self.traffic = traffic
        self.client_device = client_device
        self.steps_run = 0   # by every session, for the task's health events
        self._lock = threading.Lock()

    def step_ran(self):
        """Counts one more step run, by any session, for the task's health events."""
        with self._lock:
            self.steps_run += 1

    def devices(self, filters=()):
        """Every device of the cluster that matches one of `filters` (all when there are
        none); waits, as TensorFlow does, until each task that may match is up, so that a
        between-graph worker filtered to "/job:ps" and itself never waits for the others."""
        specs = [DeviceSpec.from_string(f) for f in filters]
        devices = []
        for worker in self.workers:
            task = DeviceSpec.from_string(worker.task)
            if specs and not any(_matches(spec, task, _TASK_FIELDS) for spec in specs):
                continue
            devices.extend(d for d in worker.list_devices()
                           if not specs or any(_matches(spec, DeviceSpec.from_string(d.name),
                                                        _DEVICE_FIELDS) for spec in specs))
        return devices

    @property
    def own_worker(self):
        """This task's Worker."""
        return next(w for w in self.workers if w.task == self.task)


class MasterSession:
    """One client session on a master: the GraphDef it sent so far, where its nodes are
    placed, and a plan per (feeds, fetches, targets) signature it ran. It drives its own
    steps over its `cluster`: registers each plan's partitions with the workers that run
    them, starts them, waits for them, and publishes what it placed and ran.

    ```python
    session = MasterSession(handle, cluster, config_pb2.ConfigProto())
    session.extend(graph_def)
    values = session.run({}, ["y:0"], [])   # the arrays of the fetched tensors
    ```

    `remote`: created by a client in another process. `default_timeout_ms`, and
    `timeout_message` unless None, apply to steps whose options and config set no
    deadline, and to what a step that runs out of time raises. `distributed`: a session
    of a server (TensorFlow's MasterSession, not its DirectSession): it has no inter-op
    pools of its own."""

    def __init__(self, handle, cluster, config, remote=False, default_timeout_ms=0,
                 timeout_message=None, distributed=False):
        self.handle = handle
        self.remote = remote
        self.last_used = time.monotonic()
        self._cluster = cluster
        self._config = config
        self._default_timeout_ms = default_timeout_ms
        self._timeout_message = timeout_message
        self._distributed = distributed
        self._pools = (None,) if distributed else session_pools(config)
        self._nodes = {}
        self._library = {}  # function name -> FunctionDef
        self._versions = graph_pb2.VersionDef()  # the client's, which partition graphs carry
        self._placement = {}
        self._placed_version = 0
        self._plans = {}
        self._parked_plans = {}
        self._plan_ids = itertools.count(1)
        self._active_steps = set()
        self._closed = False
        self._lock = threading.Lock()

    @property
    def device_filters(self):
        """The device filters of the session's ConfigProto: the devices it may place on."""
        return self._config.device_filters

    def extend(self, graph_def):
        """Adds the nodes and functions of `graph_def` that the session does not have yet."""
        self.last_used = time.monotonic()
        with self._lock:
            for node in nodes_from_graph_def(graph_def, known=self._nodes):
                self._nodes[node.name] = node
            self._library.update((f.name, f) for f in graph_def.library)
            self._versions = graph_def.versions
            # New nodes must be placed at the next run, whatever it fetches (TensorFlow
            # places the whole graph). Park the plans so that the run takes the slow path
            # once; they stay valid, since new nodes never feed old ones.
            self._parked_plans.update(self._plans)
            self._plans = {}

    def _place_new_nodes(self):
        if self._placed_version == len(self._nodes):
            return
        self._place(list(self._nodes.values()))
        self._placed_version = len(self._nodes)

    def _place(self, nodes):
        """Places those of `nodes` not yet placed; logs and publishes where they went."""
        devices = self._cluster.devices(self.device_filters)
        before = set(self._placement)
        place(nodes, devices, self._cluster.task_spec, self._placement,
              self._config.allow_soft_placement)
        new = [n for n in nodes if n.name not in before]
        if self._config.log_device_placement:
            labels = {d.name: " (emulated)" if d.emulated else "" for d in devices}
            lines = [f"{n.name}: ({n.op}): {self._placement[n.name]}"
                     f"{labels[self._placement[n.name]]}\n" for n in new]
            sys.stdout.write("".join(lines))
            sys.stdout.flush()
        # Published whether watched or not: the log keeps it for watchers who come later.
        event = monitor_pb2.Event()
        event.placement.session_handle = self.handle
        event.placement.emulated_device.extend(d.name for d in devices if d.emulated)
        for n in new:
            self._add_placed(event.placement.node, n)
        self._cluster.events.publish(event)

    def _add_placed(self, nodes, node):
        """Adds `node`, where it was placed, and its graph inputs to `nodes` (the
        PlacementEvent.Nodes of an event)."""
        nodes.add(name=node.name, op=node.op, requested_device=node.requested_device,
                  assigned_device=self._placement[node.name],
                  inputs=[f"{src}:{index}" for src, index in node.inputs]
                  + ["^" + src for src in node.control_inputs])

    def _plan(self, feeds, fetches, targets):
        key = (feeds, fetches, targets)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        with self._lock:
            if self._distributed and (self._config.use_per_session_threads
                                      or self._config.session_inter_op_thread_pool):
                # TensorFlow's master refuses them as it first takes the graph, which its
                # client sends at the first run (no plan is kept: every run fails so).
                raise InvalidArgumentError(None, None, "Distributed session does not "
                                           "support session thread pool options.")
            if not self._config.graph_options.place_pruned_graph:
                self._place_new_nodes()
            plan = self._parked_plans.pop(key, None)
            if plan is not None:
                self._plans[key] = plan
                return plan
            fetch_pairs = [self._tensor(name) for name in fetches]
            feed_types = {}
            for name in feeds:
                node_name, index = self._tensor(name)
                feed_types[f"{node_name}:{index}"] = self._nodes[node_name].output_types[index]
            for target in targets:
                if target not in self._nodes:
                    raise InvalidArgumentError(None, None, f"Target {target} was not found "
                                               "in the Graph")
            order = partitioning.prune(self._nodes, set(feed_types), fetch_pairs, targets)
            if self._config.graph_options.place_pruned_graph:
                self._place([self._nodes[name] for name in order])
            parts = partitioning.partition(order, self._nodes, self._placement, feed_types,
                                           fetch_pairs, self._cluster.client_device)
            transfers = partitioning.transfers(parts)
            plan = self._plans[key] = _Plan(next(self._plan_ids), self._register(parts),
                                            fetches, parts, [k for k, _ in transfers])
            self._publish_plan(plan, key, order, transfers)
        return plan

    def _publish_plan(self, plan, key, order, transfers):
        """Publishes what a new plan runs: the graph's nodes in `order` (pruned, in
        topological order) and where each runs, and its `transfers` (partitioning's).
        Published whether watched or not, as placements are."""
        event = monitor_pb2.Event()
        described = event.plan
        described.session_handle = self.handle
        described.plan_id = plan.id
        for names, field in zip(key, (described.feeds, described.fetches, described.targets)):
            field.extend(names)
        for name in order:
            self._add_placed(described.node, self._nodes[name])
        for rendezvous_key, consumers in transfers:
            src, dst, tensor = rendezvous_key.split(";")[:3]
            described.transfer.add(tensor=tensor, src_device=src, dst_device=dst,
                                   consumers=consumers)
        described.emulated_device.extend(
            d.name for d in self._cluster.devices(self.device_filters)
            if d.emulated and d.name in plan.partitions)
        self._cluster.events.publish(event)

    def _register(self, partitions):
        """Registers each task's share of `partitions`, with the session's functions;
        returns [(worker, graph handle)], this task's last: its part runs on the thread
        that starts it, once the other tasks' parts are on their way."""
        graphs = []
        library = list(self._library.values())
        for worker in self._cluster.workers:
            # Asks only the tasks that run something: another may be down (device_filters).
            mine = {d: nodes for d, nodes in partitions.items()
                    if d.rpartition("/device:")[0] == worker.task}
            if mine:
                graphs.append((worker, worker.register_graph(self.handle, mine, self._config,
                                                             library)))
        graphs.sort(key=lambda graph: graph[0].task == self._cluster.task)
        return graphs

    def _inter_op_pool(self, options):
        """The pool that RunOptions.inter_op_thread_pool chooses for a step: one of the
        session's, or the caller's thread (-1). A distributed session's steps use each
        device's own pool whatever the index, as TensorFlow's workers use theirs."""
        if options is None or self._distributed:
            return self._pools[0]
        index = options.inter_op_thread_pool
        if index == -1:
            return CALLER_THREAD
        if not 0 <= index < len(self._pools):
            raise InvalidArgumentError(None, None, f"Invalid inter_op_thread_pool: {index}")
        return self._pools[index]

    def _builds_cost_model(self, plan):
        """Whether this run of `plan` ends one of GraphOptions.build_cost_model's periods
        (counted after its first build_cost_model_after runs), as TensorFlow's."""
        options = self._config.graph_options
        counted = next(plan.runs) - options.build_cost_model_after
        return (options.build_cost_model > 0 and counted >= 0
                and (counted + 1) % options.build_cost_model == 0)

    def _tensor(self, name):
        node_name, index = parse_input(name)
        node = self._nodes.get(node_name)
        if node is None or index >= len(node.output_types):
            raise InvalidArgumentError(None, None, f"Tensor {name}, specified in either "
                                       "feed_devices or fetch_devices was not found in the Graph")
        return node_name, index

    def run(self, feeds, fetches, targets, options=None, run_metadata=None):
        """Runs one step: `feeds` maps tensor names to arrays; returns the fetched arrays."""
        return self.run_prepared(self.prepare(feeds, fetches, targets, options, run_metadata))

    def prepare(self, feeds, fetches, targets, options=None, run_metadata=None):
        """The step that `run` would run, planned but not started, for `run_prepared`:
        its caller may cancel it (`.step`) before and while it runs."""
        inter_op_pool = self._inter_op_pool(options)
        plan = self._plan(tuple(feeds), tuple(fetches), tuple(targets))
        timeout = (options.timeout_in_ms if options is not None and options.timeout_in_ms
                   else self._config.operation_timeout_in_ms) or self._default_timeout_ms
        tracing = (run_metadata is not None and options is not None
                   and options.trace_level == config_pb2.RunOptions.FULL_TRACE)
        costing = run_metadata is not None and self._builds_cost_model(plan)
        step = Step(timeout, feeds, StepStatsCollector() if tracing or costing else None)
        step.inter_op_pool = inter_op_pool
        if self._cluster.events.watching:  # its StepEvent tells what each transfer moved
            step.sent = {}
        return PreparedStep(plan, step, options, run_metadata, tracing, costing)

    def run_prepared(self, prepared):
        """Runs a step made by `prepare` on its workers: starts every task's part (the
        other tasks' first), then waits for each. Returns the fetched values, in the
        order of the fetches; raises the step's first error."""
        start = time.time()
        # A lone call needs no watching: nothing else of the step runs meanwhile.
        calls = self._start(prepared, alone=len(prepared.plan.graphs) == 1)
        return self._finish(prepared, calls, start)

    def runs_unattended(self, feeds, fetches, targets):
        """Whether a step of this signature, with no RunOptions and no RunMetadata, can
        start on a thread that must not wait (one reading a connection) and end on the
        thread that ends its last part (`run_unattended`): its plan is made (making one
        calls other tasks), it has no deadline to watch, and each part can end so."""
        plan = self._plans.get((tuple(feeds), tuple(fetches), tuple(targets)))
        return (plan is not None
                and not (self._config.operation_timeout_in_ms or self._default_timeout_ms)
                and all(worker.runs_unattended(handle, 0) for worker, handle in plan.graphs))

    def run_unattended(self, prepared, done):
        """`run_prepared` for a step whose signature `runs_unattended`: returns once the
        step has started (raises if the session is closed), and calls `done(result)` on
        the thread that ends the step's last part, where `result()` returns the fetched
        values or raises the step's error."""
        start = time.time()
        calls = self._start(prepared, alone=False)
        left = len(calls)
        lock = threading.Lock()

        def finish():
            done(functools.partial(self._finish, prepared, calls, start))

        def part_ended():
            nonlocal left
            with lock:
                left -= 1
                if left:
                    return
            if any(call.needs_thread for call in calls):
                threading.Thread(target=finish, daemon=True, name="dtfnb-step-end").start()
            else:
                finish()

        for call in calls:
            call.add_done_callback(part_ended)

    def _start(self, prepared, alone):
        """Starts every task's part of a prepared step, the other tasks' first (see
        Master); returns their calls."""
        step = prepared.step
        # Added, then checked against cancel_steps, which marks first, then lists: a step
        # that starts as the session closes is either cancelled there or refused here.
        self._active_steps.add(step)
        if self._closed:
            self._active_steps.discard(step)
            raise CancelledError(None, None, "Session has been closed.")
        return [worker.start_graph(handle, step, alone) for worker, handle in prepared.plan.graphs]

    def _finish(self, prepared, calls, start):
        """Waits for the calls of a started step (`start`: its time.time()), publishes
        it, and returns its fetched values or raises its first error."""
        plan, step = prepared.plan, prepared.step
        error = None
        try:
            for call in calls:  # each bounded by the step's deadline
                call.wait()
            if not step.succeed():  # cancelled as it ended: what it dequeued went back
                raise step.error
        except Exception as err:
            error = err
            if (isinstance(err, DeadlineExceededError) and step.deadline is not None
                    and self._timeout_message is not None):
                error = DeadlineExceededError(None, None, self._timeout_message)
            raise error from None
        finally:
            self.last_used = time.monotonic()  # a running step keeps it busy meanwhile
            self._active_steps.discard(step)
            self._cluster.step_ran()
            self._publish_step(plan, step, start, error)
            if self._cluster.traffic is not None:
                self._cluster.traffic.publish(step.id, self.handle)
        if prepared.run_metadata is not None:
            self._describe(prepared)
        return [step.fetched[i] for i in range(len(plan.fetches))]

    def _publish_step(self, plan, step, start, error):
        """Publishes a step of `plan` that started at `start` (time.time()), if someone
        watches: what its transfers moved (if measured from its start) and the numeric
        scalars it fetched."""
        events = self._cluster.events
        if not events.watching:
            return
        event = monitor_pb2.Event()
        described = event.step
        described.session_handle = self.handle
        described.step_id = step.id
        described.plan_id = plan.id
        described.start_time = start
        described.duration = time.time() - start
        if error is not None:
            described.error = f"{type(error).__name__}: {getattr(error, 'message', error)}"
        else:
            for i, name in enumerate(plan.fetches):
                value = step.fetched[i]
                if getattr(value, "ndim", None) == 0 and value.dtype.kind in "iuf":
                    described.scalars[name] = float(value)
        if step.sent is not None:
            described.transfer_bytes.extend(step.sent.get(k, 0) for k in plan.transfers)
        if step.stats is not None:
            step.stats.to_proto(described.step_stats)
        events.publish(event)

    def _describe(self, prepared):
        """Fills the RunMetadata of a step that ran: it describes this run only, as
        TensorFlow's."""
        run_metadata, stats = prepared.run_metadata, prepared.step.stats
        run_metadata.Clear()
        if prepared.tracing:
            stats.to_proto(run_metadata.step_stats)
        if prepared.costing:
            cost_graph(prepared.plan.partitions, stats.to_proto(), run_metadata.cost_graph)
        if prepared.options is not None and prepared.options.output_partition_graphs:
            for device, nodes in sorted(prepared.plan.partitions.items()):
                graph = run_metadata.partition_graphs.add(versions=self._versions)
                graph.node.extend(n.to_node_def(device) for n in nodes)

    @property
    def busy(self):
        """Whether a step of the session is running."""
        return bool(self._active_steps)

    def cancel_steps(self):
        """Asks the steps still running to stop (Step.cancel), so that closing never waits
        on a blocked kernel nor drops what another task dequeued for them; refuses new
        ones."""
        self._closed = True
        steps = list(self._active_steps)
        for step in steps:
            step.cancel(CancelledError(None, None, "Step was cancelled by an explicit call to "
                                       "`Session::Close()`."))


class PreparedStep:
    """A step of a session, planned and made but not started (MasterSession.prepare):
    what `run_prepared` needs, and the `step`, for its caller to cancel."""

    __slots__ = ("plan", "step", "options", "run_metadata", "tracing", "costing")

    def __init__(self, plan, step, options, run_metadata, tracing, costing):
        self.plan = plan
        self.step = step
        self.options = options
        self.run_metadata = run_metadata
        self.tracing = tracing
        self.costing = costing


class Master(MasterInterface):
    """The master service of one task: creates sessions and closes them; each session
    runs its own steps (MasterSession) over the task's view of its cluster.

    ```python
    master = Master(local_task_spec(), [worker])
    handle = master.create_session(graph_def, config_pb2.ConfigProto())
    values = master.run_step(handle, {}, ["y:0"], [])
    master.close_session(handle)
    ```

    `workers`: a Worker per task of the cluster, this task's among them. `events`: the
    task's EventLog (default: a new one), also reachable as `master.events`, so that a
    notebook can watch a local session in-process. `traffic`: a server's
    traffic.Traffic, which counts the bytes of its steps to and from other tasks.

    `server_config`: the default_session_config of the server this master serves, None
    for a local session's own master. As in TensorFlow, its operation_timeout_in_ms is the
    default deadline of the sessions of this process (not of other processes), which then
    time out with "Operation timed out.".

    `session_gc_seconds`: a session of another process that has run nothing for longer
    is closed, as TensorFlow's master does with its session_gc_seconds (0: never); its
    client's next call gets AbortedError, on which a MonitoredSession makes a new one.
    """

    def __init__(self, task_spec, workers, events=None, server_config=None,
                 session_gc_seconds=0.0, traffic=None):
        self.events = events if events is not None else EventLog(task_spec.to_string())
        # A local session (TensorFlow's DirectSession) feeds and fetches on its CPU:0.
        client_device = None if server_config is not None else task_spec.merge_from(
            DeviceSpec(device_type="CPU", device_index=0)).to_string()
        self._cluster = Cluster(task_spec, workers, self.events, client_device, traffic)
        self._sessions = {}
        self._lock = threading.Lock()
        self._server_config = server_config
        self._collector = IdleCollector(self._sessions, self._lock, session_gc_seconds,
                                        MAX_REMOTE_SESSIONS, "session",
                                        "sessions of other processes", "master", self._close)

    def list_devices(self, session_handle=""):
        """The devices a session may use (all, without a handle): TensorFlow's ListDevices."""
        if not session_handle:
            return self._cluster.devices()
        session = self._sessions.get(session_handle)
        if session is None:  # not AbortedError here, in TensorFlow's master
            raise InvalidArgumentError(None, None, f"Session {session_handle} is not found. "
                                       "Possibly, this master has restarted.")
        return self._cluster.devices(session.device_filters)

    def local_device_names(self):
        """The names of this task's own devices."""
        return set(self._cluster.own_worker.devices)

    def create_session(self, graph_def, config, remote=False):
        """A new session's handle; `remote`: its client is in another process."""
        # Random, as TensorFlow's: the workers of a cluster keep the state of sessions of
        # many masters (in other processes) by this handle.
        handle = f"{random.getrandbits(64):016x}"
        distributed = self._server_config is not None
        if remote or not distributed:
            session = MasterSession(handle, self._cluster, config, remote,
                                    distributed=distributed)
        else:
            session = MasterSession(handle, self._cluster, config,
                                    default_timeout_ms=self._server_config.operation_timeout_in_ms,
                                    timeout_message=_LOCAL_MASTER_TIMEOUT, distributed=True)
        session.extend(graph_def)
        self._collector.add(handle, session)
        return handle

    def session(self, handle):
        """The MasterSession of `handle`; AbortedError if there is none."""
        session = self._sessions.get(handle)
        if session is None:
            raise AbortedError(None, None, f"Session {handle} is not found.")
        return session

    def extend_session(self, handle, graph_def):
        """Adds the nodes of `graph_def` (those the client made since) to a session."""
        self.session(handle).extend(graph_def)

    def run_step(self, handle, feeds, fetches, targets, options=None, run_metadata=None):
        """Runs one step of session `handle`; returns the fetched arrays."""
        return self.session(handle).run(feeds, fetches, targets, options, run_metadata)

    def active_steps(self):
        """The number of steps running now, in every session."""
        return sum(len(session._active_steps) for session in list(self._sessions.values()))

    @property
    def steps_run(self):
        """The number of steps run so far, by every session."""
        return self._cluster.steps_run

    def close_session(self, handle):
        """Closes a session: cancels its steps and frees its graphs on every task; AbortedError if
        it is unknown."""
        with self._lock:
            session = self._sessions.pop(handle, None)
        if session is None:
            raise AbortedError(None, None, f"Session {handle} is not found. Possibly, this "
                               "master has restarted.")
        self._close(session)

    def _close(self, session):
        session.cancel_steps()
        for worker in self._cluster.workers:
            worker.deregister_session(session.handle)

    def _drop_all_sessions(self):
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            self._close(session)

    def reset(self, containers):
        """Frees the containers on every task and closes this master's sessions."""
        for worker in self._cluster.workers:
            worker.reset(containers)
        self._drop_all_sessions()

    def close(self):
        """Closes every session (cancelling their steps), the workers, then the event log."""
        self._collector.stop()
        self._drop_all_sessions()
        for worker in self._cluster.workers:
            worker.close()
        self.events.close()


def local_task_spec(job="localhost", task=0):
    """The DeviceSpec of task `task` of `job` ("/job:localhost/replica:0/task:0" by default)."""
    return DeviceSpec(job, 0, task)


