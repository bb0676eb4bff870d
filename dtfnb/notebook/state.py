"""What the widgets and the panel show, folded from monitor events; no display code here.

Each class takes Event protos through `apply(event)` and ignores kinds it does not
use, so one feed can serve several of them.
"""

import collections
import json

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
    """Per worker: (applied step, staleness, loss) of each gradient, and how many a
    SyncReplicasOptimizer dropped (VariableUpdateEvents). A gradient updates every
    variable, each reporting it: it counts once."""

    def __init__(self):
        self.points = collections.defaultdict(list)   # worker -> [(step, staleness, loss)]
        self.dropped = collections.Counter()          # worker -> dropped gradients
        self._seen = set()

    def apply(self, event):
        """Folds in a VariableUpdateEvent (others are ignored), once per gradient."""
        if event.WhichOneof("kind") != "variable_update":
            return
        update = event.variable_update
        worker = update.worker or event.task
        gradient = (worker, update.computed_at_step, update.applied_at_step, update.dropped)
        if gradient in self._seen:
            return
        self._seen.add(gradient)
        if update.dropped:
            self.dropped[worker] += 1
        else:
            self.points[worker].append((update.applied_at_step,
                                        update.applied_at_step - update.computed_at_step,
                                        update.loss))

    def workers(self):
        """The workers that have applied or dropped a gradient, sorted."""
        return sorted(set(self.points) | set(self.dropped))

    def has_loss(self):
        """Whether any gradient came with its loss (the field is 0 where none was)."""
        return any(loss for points in self.points.values() for _, _, loss in points)


class Tasks:
    """Each task's latest health (HealthEvents: state, steps, memory, traffic); steps and
    their traced step stats (StepEvents), for a timeline."""

    def __init__(self, traces=20):
        self.health = {}                  # task -> HealthEvent
        self.traces = collections.deque(maxlen=traces)   # StepEvents with step stats

    def apply(self, event):
        """Folds in a HealthEvent or a StepEvent with step stats (others are ignored)."""
        kind = event.WhichOneof("kind")
        if kind == "health":
            self.health[event.task] = event.health
        elif kind == "step" and event.step.step_stats.dev_stats:
            self.traces.append(event.step)

    def timeline(self):
        """Lanes of the last traced step: {device: [(node, start_us, end_us, thread)]},
        times relative to the step's first node."""
        if not self.traces:
            return {}
        stats = self.traces[-1].step_stats
        nodes = [(d.device, n) for d in stats.dev_stats for n in d.node_stats]
        origin = min((n.all_start_micros for _, n in nodes), default=0)
        lanes = collections.defaultdict(list)
        for device, n in nodes:
            start = n.all_start_micros - origin
            lanes[device].append((n.node_name, start, start + n.all_end_rel_micros,
                                  n.thread_id))
        return {device: sorted(lanes[device], key=lambda x: x[1]) for device in sorted(lanes)}

    def to_chrome_trace(self):
        """The last traced step as Chrome trace JSON (chrome://tracing, Perfetto): one
        process per device, one thread per executor thread."""
        events = []
        for pid, (device, lane) in enumerate(self.timeline().items()):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": device}})
            for name, start, end, thread in lane:
                events.append({"name": name, "ph": "X", "pid": pid, "tid": thread,
                               "ts": start, "dur": max(end - start, 0), "cat": "op"})
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})
