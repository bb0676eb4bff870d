"""ClusterView: the tasks of a cluster, the work each did, and one timeline of a traced
step across all of them."""

import time

from dtfnb.launch import Cluster
from dtfnb.notebook.palette import colour, short
from dtfnb.notebook.state import Tasks, Traffic, step_timeline
from dtfnb.notebook.widgets.base import EventWidget, escape, human_bytes, plural

_ROW_HEIGHT, _LANE_GAP, _LABEL_WIDTH, _TIMELINE_WIDTH = 9, 5, 110, 640
_LIVE = ("starting", "serving", "stopping")
_GREY = ' style="color:#888"'


def task_devices(cluster, task):
    """The device names of a LocalCluster's task, emulated GPUs marked."""
    cpus = [f"{task.name}/device:CPU:{i}" for i in range(cluster.cpus)]
    return cpus + [f"{task.name}/device:GPU:{i} (emulated)" for i in range(cluster.gpus)]


class ClusterView(EventWidget):
    """A table of the tasks: state, devices, the work each did (steps run as a master,
    graphs run: the RunGraph calls it served, as a ps serves every step's variables; the
    tensor bytes it sent to other tasks), the bytes it sent and received per step,
    graphs per second and memory, from their HealthEvents and TrafficEvents and, for a
    LocalCluster, its processes. A stopped task reads "stopped at HH:MM" and shows no
    rates; a task with emulated conditions (a slower link, a slow task: see LocalCluster)
    says them under its name, "emulated: 100 Mbit/s, 2 ms". Below it, the bytes per step
    on each link, from each task (a row) to each other (a column): medians over the
    latest steps (see state.Traffic), a stopped task's greyed. Then one timeline of the
    last traced step (`RunOptions(trace_level=FULL_TRACE)`) across every task: a lane per
    device in its palette colour, and an arrow from each _Send to its _Recv.
    `to_chrome_trace()` exports the same step for Perfetto or chrome://tracing.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target.
    """

    kinds = ("health", "step", "traffic")

    def __init__(self, source):
        self.cluster = source if isinstance(source, Cluster) else None
        self.tasks = Tasks()
        self.traffic = Traffic()
        super().__init__(source)

    def _apply(self, event):
        self.tasks.apply(event)
        self.traffic.apply(event)

    def to_chrome_trace(self):
        """The last traced step as Chrome trace JSON text: a process per task, a thread per
        device, a flow per tensor that crossed devices."""
        with self._lock:
            return self.tasks.to_chrome_trace()

    def _task_names(self):
        if self.cluster is not None:
            return [task.name for task in self.cluster.tasks]
        return sorted(self.tasks.health)

    def _text(self):
        names = self._task_names()
        title = f"ClusterView {self.cluster.name!r}" if self.cluster else "ClusterView"
        lines = [f"{title}: {plural(len(names), 'task')}"]
        if self.cluster is not None:
            lines += [f"  {task.name}: {plural(len(task_devices(self.cluster, task)), 'device')}"
                      + (f"; emulated: {task.emulated}" if task.emulated else "")
                      for task in self.cluster.tasks]
        else:
            lines += [f"  {name}" for name in names]
        return "\n".join(lines)

    def _emulated(self, name, process):
        """The task's emulated conditions as it reports them, else as its LocalCluster
        started it ("" for none)."""
        health = self.tasks.health.get(name)
        if health is not None:
            return health.emulated
        return process.emulated if process is not None else ""

    def _state(self, name, process):
        """(state, whether it is live): a LocalCluster's process says, else the task's
        last HealthEvent."""
        if process is not None:
            state = process.state
            if state not in _LIVE:
                self.tasks.stopped(name, time.time())
        else:
            health = self.tasks.health.get(name)
            state = "stopped" if name in self.tasks.stopped_at else (
                health.state if health else "unknown")
        if state in _LIVE or state == "unknown":
            return state, True
        when = time.localtime(self.tasks.stopped_at[name])
        return f"{state} at {time.strftime('%H:%M', when)}", False

    def _draw(self):
        processes = {t.name: t for t in self.cluster.tasks} if self.cluster else {}
        rows, stopped = [], set()
        for name in self._task_names():
            health = self.tasks.health.get(name)
            task = processes.get(name)
            state, live = self._state(name, task)
            if not live:
                stopped.add(name)
            devices = "<br>".join(escape(d.rsplit("/", 1)[-1]) for d in
                                  task_devices(self.cluster, task)) if task else ""
            numbers = [""] * 3
            if health:
                numbers = [str(health.steps_run), str(health.graphs_run),
                           human_bytes(health.bytes_sent)]
            per_step = self.traffic.per_step(name)
            numbers += [_bytes(n) for n in per_step] if per_step else ["", ""]
            numbers += ([f"{health.steps_per_second:.1f}", human_bytes(health.resident_bytes)]
                        if health and live else ["", ""])
            emulated = self._emulated(name, task)
            label = f'<span style="color:{colour(name)}">&#9632;</span> {escape(name)}' + (
                f'<br><small style="color:#888">emulated: {escape(emulated)}</small>'
                if emulated else "")
            cells = [label, _state_html(state, live), devices, *numbers]
            style = "" if live else ' style="color:#888"'
            rows.append(f"<tr{style}>" + "".join(f"<td>{cell}</td>" for cell in cells)
                        + "</tr>")
        table = ('<table class="dtfnb-cluster" style="font-size:12px"><tr><th>task</th>'
                 '<th>state</th><th>devices</th><th title="steps run as a master">steps</th>'
                 '<th title="RunGraph calls served">graphs run</th>'
                 '<th title="tensor bytes sent to other tasks">sent</th>'
                 '<th title="tensor bytes sent to other tasks per step it took part in">'
                 'sent/step</th><th title="tensor bytes received from other tasks per step '
                 'it took part in">received/step</th>'
                 f'<th>graphs/s</th><th>memory</th></tr>{"".join(rows)}</table>')
        return (table + links_table(self.traffic, self._task_names(), stopped)
                + timeline_svg(self.tasks.timeline()))


def _bytes(n):
    return human_bytes(round(n))


def links_table(traffic, names, stopped):
    """The bytes per step on each link (a state.Traffic's), from each task (a row) to
    each other (a column), for the tasks that moved any: `names` in their order, then
    others; those in `stopped` greyed and marked so. "" before any traffic."""
    moved = traffic.tasks()
    tasks = [name for name in names if name in moved] + [t for t in moved if t not in names]
    if not tasks:
        return ""

    def label(task, cell):
        grey = task in stopped
        text = f'<span style="color:{colour(task)}">&#9632;</span> {escape(short(task))}' + (
            " (stopped)" if grey else "")
        return f'<{cell}{_GREY if grey else ""}>{text}</{cell}>'

    rows = []
    for source in tasks:
        cells = []
        for destination in tasks:
            nbytes = traffic.link(source, destination)
            text = "&#8212;" if source == destination else _bytes(nbytes) if nbytes else ""
            grey = source in stopped or destination in stopped
            cells.append(f'<td{_GREY if grey else ""}>{text}</td>')
        rows.append(f"<tr>{label(source, 'th')}{''.join(cells)}</tr>")
    return ('<div style="font-size:12px;margin-top:6px">tensor bytes per step, from each '
            'task (row) to each other (column): the median of the last '
            f'{traffic.steps} steps that moved any</div>'
            '<table class="dtfnb-links" style="font-size:12px"><tr><th>from \\ to</th>'
            + "".join(label(task, "th") for task in tasks) + f'</tr>{"".join(rows)}</table>')


def _state_html(state, live):
    colours = {"serving": "#59a14f", "starting": "#edc948", "stopping": "#f28e2b"}
    dot = colours.get(state, "#888") if live else ("#e15759" if state.startswith("dead")
                                                   else "#888")
    return f'<span style="color:{dot}">&#9679;</span> {escape(state)}'


def timeline_svg(timeline, row_height=_ROW_HEIGHT):
    """A traced step (a state.Timeline) drawn: a lane per device, with a row for each op
    that overlaps another; bars in the device's colour, named where the name fits (rows of
    `row_height` 12 or more); an arrow from each _Send to its _Recv. "" before a traced
    step."""
    if not timeline.lanes:
        return ""
    end = max(bar.end for bars in timeline.lanes.values() for bar in bars) or 1
    scale = _TIMELINE_WIDTH / end
    parts, rows_at, y = [], {}, 22   # (device, row) -> the row's middle
    for device, bars in timeline.lanes.items():
        fill = colour(device)
        parts.append(f'<text x="4" y="{y + 10}" font-size="11" fill="{fill}">'
                     f'<title>{escape(device)}</title>{escape(short(device))}</text>')
        for bar in bars:
            top = y + bar.row * row_height
            rows_at[device, bar.row] = top + (row_height - 1) / 2
            parts.append(f'<rect x="{_LABEL_WIDTH + bar.start * scale:.1f}" y="{top}" '
                         f'width="{max((bar.end - bar.start) * scale, 1):.1f}" '
                         f'height="{row_height - 1}" fill="{fill}" stroke="#fff" '
                         f'stroke-width="0.5">'
                         f'<title>{escape(bar.name)}: '
                         f'{bar.end - bar.start} us</title></rect>')
            if row_height >= 12 and (bar.end - bar.start) * scale > 6.5 * len(bar.name) + 6:
                parts.append(f'<text x="{_LABEL_WIDTH + bar.start * scale + 3:.1f}" '
                             f'y="{top + row_height - 4}" font-size="10" fill="#fff">'
                             f'{escape(bar.name)}</text>')
        y += max(1 + max(bar.row for bar in bars), 2) * row_height + _LANE_GAP
    for flow in timeline.flows:
        parts.append(
            f'<line x1="{_LABEL_WIDTH + (flow.send.start + flow.send.end) / 2 * scale:.1f}" '
            f'y1="{rows_at[flow.source, flow.send.row]:.1f}" '
            f'x2="{_LABEL_WIDTH + flow.recv.end * scale:.1f}" '
            f'y2="{rows_at[flow.destination, flow.recv.row]:.1f}" stroke="#333" '
            f'stroke-width="1" marker-end="url(#dtfnb-flow)"><title>{escape(flow.tensor)}: '
            f'{escape(short(flow.source))} -&gt; {escape(short(flow.destination))}</title></line>')
    title = (f"last traced step: {end} us on {plural(len(timeline.lanes), 'device')}, "
             f"{plural(len(timeline.flows), 'tensor')} sent between them")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LABEL_WIDTH + _TIMELINE_WIDTH + 8}"'
            f' height="{y + 4}" font-family="sans-serif"><defs><marker id="dtfnb-flow" '
            'viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
            'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>'
            f'<text x="4" y="12" font-size="11">{escape(title)}</text>{"".join(parts)}</svg>')


class StepTimeline:
    """The timeline of one traced run, drawn as ClusterView draws its last traced step but
    with ops named on their bars where the names fit: from the RunMetadata of a run with
    `RunOptions(trace_level=FULL_TRACE)`, of any session, local or on a cluster.
    Displayed, it is an SVG; its text form counts what it shows, without timings."""

    def __init__(self, run_metadata):
        self.timeline = step_timeline({stats.device: stats
                                       for stats in run_metadata.step_stats.dev_stats})

    def _repr_svg_(self):
        return timeline_svg(self.timeline, row_height=14)

    def __repr__(self):
        lanes = self.timeline.lanes
        at_once = max((1 + max(bar.row for bar in bars) for bars in lanes.values()), default=0)
        return (f"StepTimeline: {plural(sum(map(len, lanes.values())), 'op')} on "
                f"{plural(len(lanes), 'device')}, at most {at_once} at once on one device")
