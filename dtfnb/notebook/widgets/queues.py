"""QueueMonitor: the live fill level of every queue of a cluster."""

from dtfnb.notebook import palette
from dtfnb.notebook.state import Queues
from dtfnb.notebook.widgets.base import EventWidget, escape, plural


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
