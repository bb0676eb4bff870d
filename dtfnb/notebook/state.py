"""What the widgets and the panel show, folded from monitor events; no display code here.

Each class takes Event protos through `apply(event)` and ignores kinds it does not
use, so one feed can serve several of them.
"""

import bisect
import collections
import json
import statistics
import threading
import time as clock

from dtfnb.notebook import palette
from dtfnb.protos import monitor_pb2

_RATE_WINDOW = 5.0   # seconds of counts behind a rate
_RUNS_KEPT = 10      # per session
_SESSIONS_KEPT = 20  # the sessions with the newest runs; older ones are forgotten
_TRAFFIC_STEPS = 20  # the latest steps behind a task's or a link's bytes per step
STOPPED_STATES = ("stopping", "stopped", "dead")
FEED_STATES = ("stopped", "dead")   # a Feed's own HealthEvents (stream.py): they carry no counts


def hh_mm(time):
    """`time` (seconds since the epoch) as local "HH:MM", as views show a stop."""
    return clock.strftime("%H:%M", clock.localtime(time))


def task_of(device):
    """"/job:ps/replica:0/task:0/device:CPU:0" -> "/job:ps/replica:0/task:0"."""
    return device.split("/device:")[0]


class Cells:
    """When each cell of this kernel started, to tell the cell a step ran in: the one
    that started last before it. IPython's pre_run_cell feeds it (see `watch`)."""

    def __init__(self, keep=1000):
        self._starts = collections.deque(maxlen=keep)   # [start time, execution count]
        self._lock = threading.Lock()

    def watch(self, shell):
        """Records the cells `shell` runs from now on; returns a function that stops it."""
        def started(_info):
            # IPython 9 counts the cell before pre_run_cell, 8 after: post_run_cell's
            # result says which, and corrects the count.
            self.started(shell.execution_count - 1)

        def ran(result):
            if result.execution_count is not None:
                self.ran(result.execution_count)

        shell.events.register("pre_run_cell", started)
        shell.events.register("post_run_cell", ran)
        return lambda: (shell.events.unregister("pre_run_cell", started),
                        shell.events.unregister("post_run_cell", ran))

    def started(self, count, time=None):
        """Cell `count` starts now (or at `time`)."""
        with self._lock:
            self._starts.append([clock.time() if time is None else time, count])

    def ran(self, count):
        """The cell that started last has execution count `count`."""
        with self._lock:
            if self._starts:
                self._starts[-1][1] = count

    def at(self, time):
        """The execution count of the cell that started last at or before `time`, or None."""
        with self._lock:
            for start, count in reversed(self._starts):
                if start <= time:
                    return count
        return None


CELLS = Cells()   # this kernel's cells: one history for the panel and every view


class Stops:
    """When each task stopped (HealthEvents: a server says "stopping" as it stops, and a
    Feed says "stopped" or "dead" when a task's stream ends); a task serving again is
    live again. `stop(task, state)` records what a view learns otherwise (a LocalCluster's
    task states)."""

    def __init__(self):
        self.at = {}   # task -> time it stopped (seconds since the epoch)

    def apply(self, event):
        """Folds in a HealthEvent (others are ignored)."""
        if event.WhichOneof("kind") == "health":
            self.saw(event.health.task or event.task, event.health.state, event.time)

    def saw(self, task, state, time=None):
        """Task `task` was in `state` at `time` (default now)."""
        if state in STOPPED_STATES:
            self.at.setdefault(task, clock.time() if time is None else time)
        elif state == "serving":
            self.at.pop(task, None)

    def stopped_at(self, device):
        """"HH:MM" when the task of `device` (or the task itself) stopped, else None."""
        time = self.at.get(task_of(device))
        return None if time is None else hh_mm(time)


class Work:
    """What each task did, from its HealthEvents: steps run as master, graphs run as a
    worker (RunGraph calls served) and tensor bytes sent to and received from other
    tasks. A Feed's own "stopped" and "dead" events carry no counts: they change nothing."""

    def __init__(self):
        self.of = {}   # task -> the protocol's IWork

    def apply(self, event):
        """Folds in a HealthEvent a task published (others are ignored)."""
        if event.WhichOneof("kind") == "health" and event.health.state not in FEED_STATES:
            health = event.health
            self.of[health.task or event.task] = {
                "steps_run": health.steps_run, "graphs_run": health.graphs_run,
                "bytes_sent": health.bytes_sent, "bytes_received": health.bytes_received}

    def work(self, task):
        """The protocol's IWork of `task` (zeros before its first HealthEvent)."""
        return self.of.get(task, {"steps_run": 0, "graphs_run": 0, "bytes_sent": 0,
                                  "bytes_received": 0})


class Traffic:
    """The tensor bytes each task sent and received per step, in all and per peer task
    (TrafficEvents: one per task per step it took part in): medians over the last 20
    steps of each task, and of each link over the last 20 steps that moved bytes on it."""

    def __init__(self, steps=_TRAFFIC_STEPS):
        self.steps = steps
        self._tasks = collections.defaultdict(lambda: collections.deque(maxlen=steps))
        self._links = collections.defaultdict(lambda: collections.deque(maxlen=steps))
        self._heard = collections.defaultdict(lambda: collections.deque(maxlen=steps))

    def apply(self, event):
        """Folds in a TrafficEvent (others are ignored)."""
        if event.WhichOneof("kind") != "traffic":
            return
        task, links = event.task, event.traffic.link
        self._tasks[task].append((sum(link.sent for link in links),
                                  sum(link.received for link in links)))
        for link in links:   # each direction as its sender and its receiver counted it
            if link.sent:
                self._links[task, link.peer].append(link.sent)
            if link.received:
                self._heard[link.peer, task].append(link.received)

    def per_step(self, task):
        """(bytes sent, bytes received) per step of `task`: the medians over the last
        steps it took part in; None before its first."""
        steps = self._tasks.get(task)
        if not steps:
            return None
        return (statistics.median(sent for sent, _ in steps),
                statistics.median(received for _, received in steps))

    def link(self, source, destination):
        """The bytes per step that `source` sent to `destination`: the median over the
        last steps that moved any, as the sender counted them (else as the receiver did,
        when only its stream is watched: both count the same); None if none moved."""
        sizes = self._links.get((source, destination)) or self._heard.get((source, destination))
        return statistics.median(sizes) if sizes else None

    def tasks(self):
        """Every task that sent or received bytes, sorted."""
        return sorted({task for pair in [*self._links, *self._heard] for task in pair})


def device_dict(name, stops, emulated=False):
    """The protocol's IDevice of device `name`."""
    return {"name": name, "short": palette.short(name), "colour": palette.colour(name),
            "emulated": emulated, "stopped_at": stops.stopped_at(name)}


class Run:
    """One step a session ran (a StepEvent), with the task of its master. `planned`: a
    stand-in made from a PlanEvent, for a session whose steps nobody watched (they are
    published only while someone does): step 0 at the time of the plan, bytes unknown."""

    def __init__(self, task, step, planned=False):
        self.task, self.step, self.planned = task, step, planned
        self.number = 0   # the how-manieth step of its session this kernel saw (0: stand-in)

    @property
    def session(self):
        """The handle of the session that ran it."""
        return self.step.session_handle

    @property
    def plan(self):
        """The key of its plan: "<session>/<plan id>"."""
        return f"{self.session}/{self.step.plan_id}"

    @property
    def end(self):
        """When it ended, seconds since the epoch."""
        return self.step.start_time + self.step.duration


class Runs:
    """Per session, the plans it ran (PlanEvents) and its last 10 runs (StepEvents);
    where each session runs (`targets`: handle -> target, as its tf.Session names it;
    `addresses`: task -> "grpc://host:port"); stops come from `stops`, cells from `cells`.
    """

    def __init__(self, stops=None, cells=CELLS):
        self.stops = Stops() if stops is None else stops
        self.cells = cells
        self.plans = {}          # "<session>/<plan id>" -> PlanEvent
        self.sessions = {}       # handle -> deque of Runs, newest first
        self.tasks = {}          # handle -> the task of its master
        self.targets = {}
        self.addresses = {}
        self._counts = collections.Counter()   # handle -> steps seen
        self._first_seen = {}                  # handle -> when its first run started

    def apply(self, event):
        """Folds in a PlanEvent or a StepEvent (others are ignored)."""
        kind = event.WhichOneof("kind")
        if kind == "plan":
            plan = event.plan
            self.plans[f"{plan.session_handle}/{plan.plan_id}"] = plan
            runs = self.sessions.get(plan.session_handle)
            if not runs or runs[0].planned:
                self._add(Run(event.task, monitor_pb2.StepEvent(
                    session_handle=plan.session_handle, plan_id=plan.plan_id,
                    start_time=event.time), planned=True))
        elif kind == "step":
            self._add(Run(event.task, event.step))

    def _add(self, run):
        self._first_seen.setdefault(run.session, run.step.start_time)
        if not run.planned:
            self._counts[run.session] += 1
            run.number = self._counts[run.session]
        runs = self.sessions.pop(run.session, None)
        if runs is None or runs[0].planned:   # a stand-in gives way to what ran
            runs = collections.deque(maxlen=_RUNS_KEPT)
        runs.appendleft(run)
        self.sessions[run.session] = runs   # the most recently run session last
        self.tasks[run.session] = run.task
        if len(self.sessions) > _SESSIONS_KEPT:
            self._forget(next(iter(self.sessions)))

    def _forget(self, session):
        del self.sessions[session]
        self.tasks.pop(session, None)
        self._counts.pop(session, None)
        self._first_seen.pop(session, None)
        for key in [k for k, plan in self.plans.items() if plan.session_handle == session]:
            del self.plans[key]

    def latest(self, session=None):
        """The newest run of `session`, or of any session; None before the first."""
        if session is not None:
            runs = self.sessions.get(session)
            return runs[0] if runs else None
        newest = [runs[0] for runs in self.sessions.values() if runs]
        return max(newest, key=lambda run: run.end, default=None)

    def find(self, session, step):
        """The kept run of `session` with step id `step`, or None."""
        return next((r for r in self.sessions.get(session, ()) if r.step.step_id == step),
                    None)

    def target(self, session):
        """Where `session` runs: its tf.Session's target, else its master's address,
        else "in-process"."""
        return (self.targets.get(session) or self.addresses.get(self.tasks.get(session))
                or "in-process")

    def run_dict(self, run):
        """The protocol's IRun of `run`."""
        step = run.step
        return {"id": f"{run.session}/{step.step_id}", "session": run.session,
                "target": self.target(run.session), "task": run.task, "step": step.step_id,
                "number": run.number, "cell": self.cells.at(step.start_time),
                "time": step.start_time, "duration": step.duration, "error": step.error,
                "plan": run.plan, "transfer_bytes": list(step.transfer_bytes)}

    def session_dicts(self):
        """The protocol's ISessions, newest run first."""
        sessions = sorted(self.sessions.items(), key=lambda item: -item[1][0].end)
        return [{"session": session, "target": self.target(session),
                 "cell": self.cells.at(self._first_seen[session]),
                 "stopped_at": self.stops.stopped_at(self.tasks.get(session, "")),
                 "runs": [self.run_dict(run) for run in runs]}
                for session, runs in sessions]

    def plan_dicts(self):
        """The protocol's plans, of the kept runs only: {key: IPlan}."""
        keys = {run.plan for runs in self.sessions.values() for run in runs}
        return {key: plan_dict(self.plans[key]) for key in sorted(keys) if key in self.plans}

    def devices(self):
        """Every device a kept plan names, with whether it is an emulated GPU."""
        devices = {}
        for plan in self.plans.values():
            for node in plan.node:
                devices.setdefault(node.assigned_device, False)
            for device in plan.emulated_device:
                if device in devices:
                    devices[device] = True
        return devices

    def run_placement(self, run):
        """The protocol's IRunPlacement of `run`: what one step ran, where, and the bytes
        each cross-device pair moved; None when its plan is not known."""
        plan = self.plans.get(run.plan)
        if plan is None:
            return None
        emulated = set(plan.emulated_device)
        used = sorted({node.assigned_device for node in plan.node}, key=palette.sort_key)
        sizes = run.step.transfer_bytes
        transfers = [dict(edge, bytes=sizes[i] if i < len(sizes) else None)
                     for i, edge in enumerate(_transfer_dicts(plan))]
        return {"version": 1, "run": self.run_dict(run),
                "devices": [device_dict(d, self.stops, d in emulated) for d in used],
                "nodes": _node_dicts(plan), "transfers": transfers}


def _node_dicts(plan):
    return [{"name": n.name, "op": n.op, "device": n.assigned_device,
             "requested": n.requested_device, "inputs": list(n.inputs)} for n in plan.node]


def _transfer_dicts(plan):
    return [{"tensor": t.tensor, "src": t.src_device, "dst": t.dst_device,
             "consumers": list(t.consumers)} for t in plan.transfer]


def plan_dict(plan):
    """The protocol's IPlan of a PlanEvent."""
    return {"session": plan.session_handle, "nodes": _node_dicts(plan),
            "transfers": _transfer_dicts(plan), "feeds": list(plan.feeds),
            "fetches": list(plan.fetches), "targets": list(plan.targets)}


class Rate:
    """Events per second of a growing total, over the last few seconds."""

    def __init__(self):
        self._samples = collections.deque()

    def add(self, time, total):
        """Records that the total was `total` at `time` (seconds)."""
        self._samples.append((time, total))
        while self._samples and self._samples[0][0] < time - _RATE_WINDOW:
            self._samples.popleft()

    def per_second(self, now=None):
        """The total's growth per second from the first sample kept until `now` (default:
        the clock's now), over at least a second: a burst of three enqueues reads 2/s, not
        the thousands its milliseconds would give, and fades as it ages. 0.0 with fewer
        than two samples or when the last is older than the window."""
        now = clock.time() if now is None else now
        if len(self._samples) < 2 or self._samples[-1][0] < now - _RATE_WINDOW:
            return 0.0
        (t0, n0), (_, n1) = self._samples[0], self._samples[-1]
        return (n1 - n0) / max(now - t0, 1.0)


class Queues:
    """Every queue's latest fill level and its enqueue and dequeue rates (QueueEvents);
    a queue whose task stopped (per `stops`) has no rates."""

    def __init__(self, stops=None):
        self.stops = Stops() if stops is None else stops
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
        """(enqueues per second, dequeues per second) lately; 0 once its task stopped."""
        if self.stops.stopped_at(device) is not None:
            return 0.0, 0.0
        enqueued, dequeued = self._rates[(device, name)]
        return enqueued.per_second(), dequeued.per_second()

    def as_list(self):
        """The panel protocol's "queues"."""
        queues = []
        for (device, name), q in sorted(self.queues.items()):
            enqueued, dequeued = self.rates(device, name)
            queues.append({"name": name, "device": device, "size": q.size,
                           "capacity": q.capacity if q.capacity >= 0 else None,
                           "closed": q.closed, "summary": q.summary,
                           "enqueued_per_second": enqueued, "dequeued_per_second": dequeued,
                           "stopped_at": self.stops.stopped_at(device)})
        return queues


class QueueLevels:
    """Every queue's size over time, as its QueueEvents reported it: per queue, (seconds
    after the first event folded, size), the last `keep` of each, and when it closed.
    Events stamped before `since` (seconds since the epoch, as the tasks stamp them) are
    ignored: the levels start when a plot is made, not with what a task kept for replay."""

    def __init__(self, since=None, keep=10000):
        self.since = since
        self.start = None       # the time of the first event folded
        self.queues = {}        # (device, name) -> its latest QueueEvent
        self.levels = {}        # (device, name) -> deque of (seconds, size)
        self.closed_at = {}     # (device, name) -> seconds
        self._keep = keep

    def apply(self, event):
        """Folds in a QueueEvent (others, and older ones than `since`, are ignored)."""
        if event.WhichOneof("kind") != "queue" or (self.since is not None
                                                   and event.time < self.since):
            return
        if self.start is None:
            self.start = event.time
        queue, seconds = event.queue, event.time - self.start
        key = (queue.device, queue.name)
        self.queues[key] = queue
        self.levels.setdefault(key, collections.deque(maxlen=self._keep)).append(
            (seconds, queue.size))
        if queue.closed:
            self.closed_at.setdefault(key, seconds)


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
        self.health = {}       # task -> its last HealthEvent with counts
        self.stops = Stops()
        self._traces = {}      # step id -> {device: DeviceStepStats}, in order of arrival
        self._keep = traces

    @property
    def stopped_at(self):
        """{task: when it stopped (seconds since the epoch)}."""
        return self.stops.at

    def apply(self, event):
        """Folds in a HealthEvent or a StepEvent with step stats (others are ignored)."""
        kind = event.WhichOneof("kind")
        if kind == "health":
            self.stops.apply(event)
            if event.health.state not in FEED_STATES:   # a Feed's own keep the counts
                self.health[event.task] = event.health
        elif kind == "step" and event.step.step_stats.dev_stats:
            devices = self._traces.setdefault(event.step.step_id, {})
            for stats in event.step.step_stats.dev_stats:   # a device's stats come once
                devices.setdefault(stats.device, stats)
            while len(self._traces) > self._keep:
                del self._traces[next(iter(self._traces))]

    def stopped(self, task, when):
        """Notes that `task` was seen stopped at `when` (its process exited, its stream
        ended) unless it said so itself before."""
        self.stops.saw(task, "stopped", when)

    def timeline(self):
        """The last traced step as a Timeline ({} lanes before one)."""
        if not self._traces:
            return Timeline({}, [])
        starts = {step: min((n.all_start_micros for d in devices.values() for n in d.node_stats),
                            default=0) for step, devices in self._traces.items()}
        last = max(starts, key=starts.get)   # parts of an older step may come later
        return step_timeline(self._traces[last])

    def to_chrome_trace(self):
        """The last traced step as Chrome trace JSON (chrome://tracing, Perfetto): one
        process per task, one thread per device (and per row of ops that overlap on
        it), and a flow arrow from each _Send to its _Recv."""
        timeline = self.timeline()
        events, pids, threads = [], {}, {}   # task -> pid; (device, row) -> (pid, tid)
        for device, bars in timeline.lanes.items():
            task = task_of(device)
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


def step_timeline(devices):
    """A traced step as a Timeline, from its step stats ({device: DeviceStepStats}): a lane
    per device in palette order, ops that overlap in rows of their own, a Flow per
    transfer."""
    origin = min((n.all_start_micros for d in devices.values() for n in d.node_stats),
                 default=0)
    lanes, halves = {}, collections.defaultdict(list)
    for device in sorted(devices, key=palette.sort_key):
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


Bar = collections.namedtuple("Bar", "name start end row")
Bar.__doc__ = """One op's run on a device: microseconds from the step's first op, and the row
of its lane (ops that overlap in time take rows of their own)."""
Flow = collections.namedtuple("Flow", "tensor source send destination recv")
Flow.__doc__ = """A tensor crossing devices: its _Send's Bar on device `source`, its _Recv's
on `destination`."""
Timeline = collections.namedtuple("Timeline", "lanes flows")
Timeline.__doc__ = """A traced step: lanes {device: [Bar]} in palette order, and [Flow]."""


def _trace_names(kind, pid, tid, name):
    """Chrome trace metadata naming a "process" or "thread" and keeping it in that order."""
    ids = {"pid": pid} if tid is None else {"pid": pid, "tid": tid}
    return [{"name": f"{kind}_name", "ph": "M", **ids, "args": {"name": name}},
            {"name": f"{kind}_sort_index", "ph": "M", **ids,
             "args": {"sort_index": pid if tid is None else tid}}]
