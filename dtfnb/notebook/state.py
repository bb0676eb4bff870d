"""What the widgets and the panel show, folded from monitor events; no display code here.

Each class takes Event protos through `apply(event)` and ignores kinds it does not
use, so one feed can serve several of them.
"""

import bisect
import collections
import json

from dtfnb.notebook.palette import sort_key

_RATE_WINDOW = 5.0   # seconds of counts behind a rate


class Placement:
    """The nodes of the last placed session, with their devices (PlacementEvents)."""

    def __init__(self, session=None):
        self._only = session          # a session handle to follow, or None: the latest
        self.session = None
        self.nodes = {}               # name -> PlacementEvent.Node
        self.emulated = set()

    def apply(self, event):
        """Folds in a PlacementEvent (others are ignored); a new session's placement starts over."""
        if event.WhichOneof("kind") != "placement":
            return
        placement = event.placement
        if self._only is not None and placement.session_handle != self._only:
            return
        if placement.session_handle != self.session:  # a new session: start over
            self.session, self.nodes, self.emulated = placement.session_handle, {}, set()
        self.emulated.update(placement.emulated_device)
        for node in placement.node:
            self.nodes[node.name] = node

    def devices(self):
        """The devices the placed nodes were assigned to, sorted."""
        return sorted({node.assigned_device for node in self.nodes.values()})

    def edges(self):
        """(source, destination, is_control) for every input of a placed node."""
        for node in self.nodes.values():
            for name in node.inputs:
                source = name.lstrip("^").split(":")[0]
                if source in self.nodes:
                    yield source, node.name, name.startswith("^")

    def cross_device_edges(self):
        """The edges the master cuts into a Send/Recv pair."""
        return [(s, d, c) for s, d, c in self.edges()
                if self.nodes[s].assigned_device != self.nodes[d].assigned_device]

    def as_dict(self):
        """The panel protocol's "placement" (None before the first run)."""
        if self.session is None:
            return None
        return {"session": self.session, "devices": self.devices(),
                "emulated": sorted(self.emulated),
                "nodes": [{"name": n.name, "op": n.op, "device": n.assigned_device,
                           "requested": n.requested_device, "inputs": list(n.inputs)}
                          for n in self.nodes.values()]}


class Rate:
    """Events per second of a growing total, over the last few seconds."""

    def __init__(self):
        self._samples = collections.deque()

    def add(self, time, total):
        """Records that the total was `total` at `time` (seconds)."""
        self._samples.append((time, total))
        while self._samples and self._samples[0][0] < time - _RATE_WINDOW:
            self._samples.popleft()

    def per_second(self):
        """The total's growth per second over the samples kept, 0.0 with fewer than two."""
        if len(self._samples) < 2:
            return 0.0
        (t0, n0), (t1, n1) = self._samples[0], self._samples[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0


class Queues:
    """Every queue's latest fill level and its enqueue and dequeue rates (QueueEvents)."""

    def __init__(self):
        self.queues = {}   # (device, name) -> QueueEvent
        self._rates = collections.defaultdict(lambda: (Rate(), Rate()))

    def apply(self, event):
        """Folds in a QueueEvent (others are ignored): the queue's fill level and its rates."""
        if event.WhichOneof("kind") != "queue":
            return
        queue = event.queue
        self.queues[(queue.device, queue.name)] = queue
        enqueued, dequeued = self._rates[(queue.device, queue.name)]
        enqueued.add(event.time, queue.enqueued)
        dequeued.add(event.time, queue.dequeued)

    def rates(self, device, name):
        """(enqueues per second, dequeues per second) lately."""
        enqueued, dequeued = self._rates[(device, name)]
        return enqueued.per_second(), dequeued.per_second()

    def as_list(self):
        """The panel protocol's "queues"."""
        return [{"name": q.name, "device": q.device, "size": q.size, "capacity": q.capacity,
                 "closed": q.closed, "summary": q.summary}
                for _, q in sorted(self.queues.items())]


class Staleness:
    """Per worker (the task that computed the gradients): how stale each applied gradient
    was and how many a SyncReplicasOptimizer dropped (VariableUpdateEvents; a gradient
    updates every variable, each reporting it: it counts once), and its loss against the
    global step (its steps' fetched scalars, StepEvent.scalars; else the loss its
    optimizer reported with each gradient).

    `loss`: the name of the loss tensor ("loss:0", or a Tensor); by default the fetched
    scalar whose op name ends in "loss".
    """

    def __init__(self, loss=None):
        loss = getattr(loss, "name", loss)
        self.loss = loss if loss is None or ":" in loss else loss + ":0"
        self.points = collections.defaultdict(list)   # worker -> [(applied at, staleness)]
        self.dropped = collections.Counter()          # worker -> dropped gradients
        self._step_losses = collections.defaultdict(list)     # worker -> [(time, loss)]
        self._update_losses = collections.defaultdict(list)   # worker -> [(step, loss)]
        self._global_steps = []   # (time, global step) of every gradient, in time order
        self._seen = set()

    def apply(self, event):
        """Folds in a VariableUpdateEvent, once per gradient, or the loss a StepEvent
        fetched (others are ignored)."""
        kind = event.WhichOneof("kind")
        if kind == "step":
            loss = self._loss_in(event.step.scalars)
            if loss is not None and not event.step.error:
                self._step_losses[event.task].append((event.step.start_time, loss))
            return
        if kind != "variable_update":
            return
        update = event.variable_update
        worker = update.worker or event.task
        gradient = (worker, update.computed_at_step, update.applied_at_step, update.dropped)
        if gradient in self._seen:
            return
        self._seen.add(gradient)
        bisect.insort(self._global_steps, (event.time, update.applied_at_step))
        if update.dropped:
            self.dropped[worker] += 1
            return
        self.points[worker].append((update.applied_at_step,
                                    update.applied_at_step - update.computed_at_step))
        if update.loss:   # 0 where the optimizer was given no loss tensor
            self._update_losses[worker].append((update.computed_at_step, update.loss))

    def _loss_in(self, scalars):
        if self.loss is not None:
            return scalars.get(self.loss)
        names = sorted(n for n in scalars if n.rsplit(":", 1)[0].lower().endswith("loss"))
        return scalars[names[0]] if names else None

    def workers(self):
        """The workers that have applied or dropped a gradient or reported a loss, sorted."""
        return sorted(set(self.points) | set(self.dropped) | set(self._step_losses)
                      | set(self._update_losses))

    def histogram(self, worker):
        """[(staleness, gradients that stale)] of `worker`'s applied gradients, by staleness."""
        return sorted(collections.Counter(stale for _, stale in self.points[worker]).items())

    def losses(self, worker):
        """[(global step, loss)] of `worker`: a step's fetched loss at the global step of
        the last gradient applied before the step started (its own count of steps when no
        gradient reported one); else the losses its gradients were reported with."""
        fetched = self._step_losses.get(worker)
        if not fetched:
            return list(self._update_losses.get(worker, ()))
        if not self._global_steps:
            return [(index, loss) for index, (_, loss) in enumerate(fetched, 1)]
        curve = []
        for time, loss in fetched:
            index = bisect.bisect_right(self._global_steps, (time, float("inf")))
            curve.append((self._global_steps[index - 1][1] if index else 0, loss))
        return curve


class Tasks:
    """Each task's latest health (HealthEvents: state, work done, memory, traffic) and when
    it stopped; the step stats of traced steps (StepEvents), merged by step: a step's
    stats may come whole from its master or in parts from several tasks' streams."""

    def __init__(self, traces=20):
        self.health = {}       # task -> HealthEvent
        self.stopped_at = {}   # task -> when it stopped (seconds since the epoch)
        self._traces = {}      # step id -> {device: DeviceStepStats}, in order of arrival
        self._keep = traces

    def apply(self, event):
        """Folds in a HealthEvent or a StepEvent with step stats (others are ignored)."""
        kind = event.WhichOneof("kind")
        if kind == "health":
            self.health[event.task] = event.health
            if event.health.state == "serving":   # serving (again)
                self.stopped_at.pop(event.task, None)
            else:                                 # its last word
                self.stopped_at.setdefault(event.task, event.time)
        elif kind == "step" and event.step.step_stats.dev_stats:
            devices = self._traces.setdefault(event.step.step_id, {})
            for stats in event.step.step_stats.dev_stats:   # a device's stats come once
                devices.setdefault(stats.device, stats)
            while len(self._traces) > self._keep:
                del self._traces[next(iter(self._traces))]

    def stopped(self, task, when):
        """Notes that `task` was seen stopped at `when` (its process exited, its stream
        ended) unless it said so itself before."""
        self.stopped_at.setdefault(task, when)

    def timeline(self):
        """The last traced step as a Timeline ({} lanes before one)."""
        if not self._traces:
            return Timeline({}, [])
        starts = {step: min((n.all_start_micros for d in devices.values() for n in d.node_stats),
                            default=0) for step, devices in self._traces.items()}
        last = max(starts, key=starts.get)   # parts of an older step may come later
        devices, origin = self._traces[last], starts[last]
        lanes, halves = {}, collections.defaultdict(list)
        for device in sorted(devices, key=sort_key):
            bars, ends = [], []   # ends: where each row of the lane is free again
            for n in sorted(devices[device].node_stats, key=lambda n: n.all_start_micros):
                start = n.all_start_micros - origin
                end = start + n.all_end_rel_micros
                row = next((r for r, free in enumerate(ends) if free <= start), len(ends))
                ends[row:row + 1] = [end]
                bars.append(Bar(n.node_name, start, end, row))
                if n.timeline_label.count(" ") == 3:   # "<tensor> <src> -> <dst>"
                    halves[n.timeline_label].append((device, bars[-1]))
            lanes[device] = bars
        flows = []
        for label, ran in halves.items():
            tensor, source, _, destination = label.split(" ")
            sends = [bar for device, bar in ran if device == source]
            recvs = [bar for device, bar in ran if device == destination]
            flows += [Flow(tensor, source, send, destination, recv)   # loop iterations in turn
                      for send, recv in zip(sends, recvs)]
        return Timeline(lanes, flows)

    def to_chrome_trace(self):
        """The last traced step as Chrome trace JSON (chrome://tracing, Perfetto): one
        process per task, one thread per device (and per row of ops that overlap on
        it), and a flow arrow from each _Send to its _Recv."""
        timeline = self.timeline()
        events, pids, threads = [], {}, {}   # task -> pid; (device, row) -> (pid, tid)
        for device, bars in timeline.lanes.items():
            task = _task_of(device)
            if task not in pids:
                pids[task] = len(pids)
                events += _trace_names("process", pids[task], None, task)
            pid = pids[task]
            for row in sorted({bar.row for bar in bars}):
                tid = sum(1 for p, _ in threads.values() if p == pid)
                threads[device, row] = pid, tid
                name = device.rsplit("/", 1)[-1] + (f" ({row + 1})" if row else "")
                events += _trace_names("thread", pid, tid, name)
            events += [{"name": bar.name, "ph": "X", "cat": "op", "ts": bar.start,
                        "dur": bar.end - bar.start, "pid": pid, "tid": threads[device, bar.row][1]}
                       for bar in bars]
        for index, flow in enumerate(timeline.flows):   # bound to the slices they leave and reach
            for phase, device, bar in (("s", flow.source, flow.send),
                                       ("f", flow.destination, flow.recv)):
                pid, tid = threads[device, bar.row]
                events.append({"name": flow.tensor, "ph": phase, "cat": "transfer", "id": index,
                               "pid": pid, "tid": tid, "ts": (bar.start + bar.end) / 2,
                               **({"bp": "e"} if phase == "f" else {})})
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})


Bar = collections.namedtuple("Bar", "name start end row")
Bar.__doc__ = """One op's run on a device: microseconds from the step's first op, and the row
of its lane (ops that overlap in time take rows of their own)."""
Flow = collections.namedtuple("Flow", "tensor source send destination recv")
Flow.__doc__ = """A tensor crossing devices: its _Send's Bar on device `source`, its _Recv's
on `destination`."""
Timeline = collections.namedtuple("Timeline", "lanes flows")
Timeline.__doc__ = """A traced step: lanes {device: [Bar]} in palette order, and [Flow]."""


def _task_of(device):
    """"/job:ps/replica:0/task:0/device:CPU:0" -> "/job:ps/replica:0/task:0"."""
    return device.split("/device:")[0]


def _trace_names(kind, pid, tid, name):
    """Chrome trace metadata naming a "process" or "thread" and keeping it in that order."""
    ids = {"pid": pid} if tid is None else {"pid": pid, "tid": tid}
    return [{"name": f"{kind}_name", "ph": "M", **ids, "args": {"name": name}},
            {"name": f"{kind}_sort_index", "ph": "M", **ids,
             "args": {"sort_index": pid if tid is None else tid}}]
