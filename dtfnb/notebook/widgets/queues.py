"""QueueMonitor: the live fill level of every queue of a cluster."""

from dtfnb.notebook.state import Queues
from dtfnb.notebook.widgets.base import EventWidget, escape, plural


class QueueMonitor(EventWidget):
    """One bar per queue (size of capacity, closed or not, enqueue and dequeue rates),
    named as TensorFlow's summaries name them: `queue/<name>/fraction_of_<capacity>_full`.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target.
    """

    kinds = ("queue",)

    def __init__(self, source):
        self.queues = Queues()
        super().__init__(source)

    def _apply(self, event):
        self.queues.apply(event)

    def _text(self):
        names = sorted({q.summary or q.name for q in self.queues.queues.values()})
        if not names:
            return "QueueMonitor: no queues yet"
        return "\n".join([f"QueueMonitor: {plural(len(names), 'queue')}"]
                         + [f"  {name}" for name in names])

    def _draw(self):
        if not self.queues.queues:
            return "<p><i>No queue has reported yet.</i></p>"
        rows = []
        for (device, name), q in sorted(self.queues.queues.items()):
            fraction = q.size / q.capacity if q.capacity > 0 else 0.0
            enqueues, dequeues = self.queues.rates(device, name)
            bar = (f'<div style="width:160px;height:12px;border:1px solid #888;'
                   f'background:#eee"><div style="width:{min(fraction, 1.0) * 100:.0f}%;'
                   f'height:100%;background:{"#999" if q.closed else "#4e79a7"}"></div></div>')
            capacity = q.capacity if q.capacity > 0 else "unbounded"
            rows.append(
                f'<tr><td title="{escape(device)}">{escape(q.summary or name)}</td><td>{bar}</td>'
                f"<td>{q.size} / {capacity}</td><td>{'closed' if q.closed else 'open'}</td>"
                f"<td>{enqueues:.1f}/s in</td><td>{dequeues:.1f}/s out</td></tr>")
        return ('<table class="dtfnb-queues" style="font-size:12px"><tr><th>queue</th>'
                '<th>fill</th><th>size</th><th></th><th colspan="2">rates</th></tr>'
                f'{"".join(rows)}</table>')
