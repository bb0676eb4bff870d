"""StalenessPlot: how stale each worker's gradients were, and the loss, by global step."""

import base64
import io

from dtfnb.notebook.state import Staleness
from dtfnb.notebook.widgets.base import EventWidget, colour


class StalenessPlot(EventWidget):
    """A matplotlib figure, redrawn in place as gradients are applied: per worker, the
    staleness of each applied gradient (global step when applied minus global step it
    was computed at) and the loss, against the global step; and, for
    SyncReplicasOptimizer, how many stale gradients each worker had dropped. From the
    VariableUpdateEvents of the ps tasks.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target.
    """

    kinds = ("variable_update",)

    def __init__(self, source):
        from matplotlib.figure import Figure

        self.staleness = Staleness()
        self.figure = Figure(figsize=(8, 3), dpi=80, layout="constrained")
        self._axes = self.figure.subplots(1, 2)
        super().__init__(source)

    def _make_view(self):
        import ipywidgets

        return ipywidgets.Image(format="png")

    def _apply(self, event):
        self.staleness.apply(event)

    def _text(self):
        return "StalenessPlot: staleness and loss per worker against the global step"

    def _draw(self):
        stale_axes, loss_axes = self._axes
        for axes in self._axes:
            axes.clear()
        for index, worker in enumerate(self.staleness.workers()):
            points = self.staleness.points[worker]
            dropped = self.staleness.dropped[worker]
            label = worker + (f" ({dropped} dropped)" if dropped else "")
            steps = [step for step, _, _ in points]
            stale_axes.plot(steps, [s for _, s, _ in points], ".", color=colour(index),
                            label=label)
            if self.staleness.has_loss():
                loss_axes.plot(steps, [loss for _, _, loss in points], "-",
                               color=colour(index))
        stale_axes.set(title="staleness", xlabel="global step", ylabel="steps behind")
        loss_axes.set(title="loss" if self.staleness.has_loss() else "loss (none reported)",
                      xlabel="global step")
        if self.staleness.workers():
            stale_axes.legend(fontsize=7)
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()

    def _html(self):
        png = base64.b64encode(self._view.value).decode("ascii")
        return f'<img src="data:image/png;base64,{png}" alt="{self._text()}"/>'
