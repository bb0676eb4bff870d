"""ClusterView: the tasks of a cluster, their health, and a timeline of a traced step."""

from dtfnb.notebook.launcher import LocalCluster
from dtfnb.notebook.state import Tasks
from dtfnb.notebook.widgets.base import EventWidget, colour, escape, plural

_LANE, _TIMELINE_WIDTH = 22, 640


def task_devices(cluster, task):
    """The device names of a LocalCluster's task, emulated GPUs marked."""
    cpus = [f"{task.name}/device:CPU:{i}" for i in range(cluster.cpus)]
    return cpus + [f"{task.name}/device:GPU:{i} (emulated)" for i in range(cluster.gpus)]


class ClusterView(EventWidget):
    """A table of the tasks (state, devices, steps per second, steps run, tensor bytes
    sent per step, memory), from their HealthEvents and, for a LocalCluster, its
    processes; below it, the step-stats
    timeline of the last traced step (`RunOptions(trace_level=FULL_TRACE)`), one lane
    per device. `to_chrome_trace()` exports that step for chrome://tracing or Perfetto.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target.
    """

    kinds = ("health", "step")

    def __init__(self, source):
        self.cluster = source if isinstance(source, LocalCluster) else None
        self.tasks = Tasks()
        super().__init__(source)

    def _apply(self, event):
        self.tasks.apply(event)

    def to_chrome_trace(self):
        """The last traced step as Chrome trace JSON text."""
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
                      for task in self.cluster.tasks]
        else:
            lines += [f"  {name}" for name in names]
        return "\n".join(lines)

    def _draw(self):
        processes = {t.name: t for t in self.cluster.tasks} if self.cluster else {}
        rows = []
        for name in self._task_names():
            health = self.tasks.health.get(name)
            task = processes.get(name)
            state = task.state if task else (health.state if health else "unknown")
            devices = "<br>".join(escape(d.rsplit("/", 1)[-1]) for d in
                                  task_devices(self.cluster, task)) if task else ""
            numbers = ["", "", "", ""]
            if health:
                numbers = [f"{health.steps_per_second:.1f}", str(health.graphs_run),
                           _bytes(health.bytes_sent_per_step), _bytes(health.resident_bytes)]
            rows.append(f"<tr><td>{escape(name)}</td><td>{_state(state)}</td><td>{devices}</td>"
                        + "".join(f"<td>{n}</td>" for n in numbers) + "</tr>")
        table = ('<table class="dtfnb-cluster" style="font-size:12px"><tr><th>task</th>'
                 '<th>state</th><th>devices</th><th>steps/s</th><th>steps</th>'
                 f'<th>sent/step</th><th>memory</th></tr>{"".join(rows)}</table>')
        return table + timeline_svg(self.tasks.timeline())


def _bytes(n):
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _state(state):
    colours = {"serving": "#59a14f", "starting": "#edc948", "stopping": "#f28e2b",
               "dead": "#e15759"}
    return f'<span style="color:{colours.get(state, "#888")}">&#9679;</span> {escape(state)}'


def timeline_svg(lanes):
    """One lane per device, one bar per node execution ({device: [(node, start_us,
    end_us, thread)]}); empty before a traced step."""
    if not lanes:
        return ""
    end = max(stop for lane in lanes.values() for _, _, stop, _ in lane) or 1
    scale = _TIMELINE_WIDTH / end
    label_width = 260
    parts = []
    for index, (device, lane) in enumerate(lanes.items()):
        y = 20 + index * _LANE
        parts.append(f'<text x="4" y="{y + 13}" font-size="10">{escape(device)}</text>')
        for name, start, stop, _ in lane:
            parts.append(f'<rect x="{label_width + start * scale:.1f}" y="{y}" '
                         f'width="{max((stop - start) * scale, 1):.1f}" height="{_LANE - 4}" '
                         f'fill="{colour(index)}"><title>{escape(name)}: {stop - start} us'
                         '</title></rect>')
    height = 24 + len(lanes) * _LANE
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_width + _TIMELINE_WIDTH + 8}"'
            f' height="{height}" font-family="sans-serif"><text x="4" y="12" font-size="11">'
            f'last traced step: {end} us</text>{"".join(parts)}</svg>')
