"""QueueMonitor: the live fill level of every queue of a cluster; QueuePlot: their sizes
over time."""

import time

from dtfnb.notebook import palette
from dtfnb.notebook.state import QueueLevels, Queues
from dtfnb.notebook.widgets.base import EventWidget, escape, figure_img, plural


class QueueMonitor(EventWidget):
    """One bar per queue in its device's colour (size of capacity, "(no limit)" for an
    unbounded queue, closed or not, enqueue and dequeue rates), named as TensorFlow's
    summaries name them: `queue/<name>/fraction_of_<capacity>_full`. Once a queue's task
    stopped it is greyed, "stopped at HH:MM", without rates.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target.
    """

    kinds = ("queue", "health")

    def __init__(self, source):
        self.queues = Queues()
        super().__init__(source)

    def _apply(self, event):
        self.queues.stops.apply(event)
        self.queues.apply(event)

    def _text(self):
        names = sorted({q.summary or q.name for q in self.queues.queues.values()})
        if not names:
            return "QueueMonitor: no queues yet"
        return "\n".join([f"QueueMonitor: {plural(len(names), 'queue')}"]
                         + [f"  {name}" for name in names])

    def _draw(self):
        queues = self.queues.as_list()
        if not queues:
            return "<p><i>No queue has reported yet.</i></p>"
        return ('<table class="dtfnb-queues" style="font-size:12px"><tr><th>queue</th>'
                '<th>fill</th><th>size</th><th></th><th colspan="2">rates</th></tr>'
                f'{"".join(_row(queue) for queue in queues)}</table>')


def _row(queue):
    capacity, stopped = queue["capacity"], queue["stopped_at"]
    fraction = queue["size"] / capacity if capacity else 0.0
    colour = "#999" if queue["closed"] or stopped else palette.colour(queue["device"])
    bar = (f'<div style="width:160px;height:12px;border:1px solid #888;background:#eee">'
           f'<div style="width:{min(fraction, 1.0) * 100:.0f}%;height:100%;'
           f'background:{colour}"></div></div>')
    size = f"{queue['size']} / {capacity}" if capacity is not None else \
        f"{queue['size']} (no limit)"
    if stopped:
        rates = f'<td colspan="2">stopped at {stopped}</td>'
    else:
        rates = (f"<td>{queue['enqueued_per_second']:.1f}/s in</td>"
                 f"<td>{queue['dequeued_per_second']:.1f}/s out</td>")
    style = ' style="color:#999"' if stopped else ""
    return (f'<tr{style} data-queue="{escape(queue["name"])}">'
            f'<td title="{escape(queue["device"])}">{escape(queue["summary"] or queue["name"])}'
            f"</td><td>{bar}</td><td>{size}</td>"
            f"<td>{'closed' if queue['closed'] else 'open'}</td>{rates}</tr>")


class QueuePlot(EventWidget):
    """Every queue's size over time, from the moment the plot is made: a panel per queue,
    named as TensorFlow's summary names it, its size as a step line in its device's colour
    up to its capacity (dashed), and a grey line where it closed. Make it before the
    pipeline runs; display it then to watch the queues fill and drain, or show it after,
    drawn from what happened (a matplotlib PNG in HTML that carries its counts).

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target (on this
    machine: the tasks' clocks stamp the events).
    """

    kinds = ("queue",)

    def __init__(self, source):
        from matplotlib.figure import Figure

        self.levels = QueueLevels(since=time.time())
        self.figure = Figure(figsize=(8, 1.8), dpi=80, layout="constrained")
        super().__init__(source)

    def _apply(self, event):
        self.levels.apply(event)

    def _names(self):
        return {key: queue.summary or queue.name for key, queue in self.levels.queues.items()}

    def _text(self):
        names = sorted(self._names().values())
        return "\n".join([f"QueuePlot: {plural(len(names), 'queue')} over time"]
                         + [f"  {name}" for name in names])

    def _draw(self):
        names = self._names()
        keys = sorted(names, key=lambda key: (palette.sort_key(key[0]), names[key]))
        self.figure.clear()
        self.figure.set_figheight(0.6 + 1.4 * max(len(keys), 1))
        if not keys:
            self.figure.text(0.5, 0.5, "No queue has reported yet.", color="#888",
                             ha="center", va="center")
        axes = self.figure.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0] \
            if keys else []
        for key, panel in zip(keys, axes):
            queue, levels = self.levels.queues[key], self.levels.levels[key]
            panel.step([t for t, _ in levels], [size for _, size in levels], where="post",
                       color=palette.colour(key[0]), linewidth=1.5)
            if queue.capacity >= 0:
                panel.axhline(queue.capacity, color="#888", linestyle="--", linewidth=1)
            if key in self.levels.closed_at:
                panel.axvline(self.levels.closed_at[key], color="#999", linewidth=1)
            panel.set_ylim(0, max(queue.capacity, max(s for _, s in levels), 1) * 1.08)
            panel.set_title(f"{names[key]} ({palette.short(key[0])})", fontsize=9, loc="left")
            panel.set_ylabel("size", fontsize=8)
            panel.tick_params(labelsize=8)
        if keys:
            axes[-1].set_xlabel("seconds", fontsize=8)
        points = sum(len(levels) for levels in self.levels.levels.values())
        return (f'<div class="dtfnb-queue-plot" data-queues="{len(keys)}" '
                f'data-points="{points}">{figure_img(self.figure, self._text())}</div>')
