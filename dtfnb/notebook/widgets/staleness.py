"""StalenessPlot: per worker, how stale its gradients were, its loss by global step, and the
gradients a SyncReplicasOptimizer dropped, redrawn while training runs."""

from dtfnb.notebook.palette import colour, short
from dtfnb.notebook.state import Staleness
from dtfnb.notebook.widgets.base import EventWidget, figure_img


class StalenessPlot(EventWidget):
    """A matplotlib figure (a PNG in HTML that also carries its counts), redrawn in place
    while training runs (display it before the training starts: a cell's last value is
    shown only when the cell ends). Per worker,
    in its palette colour: a histogram of how stale its applied gradients were (the global
    step they were applied at minus the one they were computed at), its loss against the
    global step, and how many of its gradients a SyncReplicasOptimizer dropped as stale.
    From the ps tasks' VariableUpdateEvents and the workers' StepEvents.

    `source`: a LocalCluster, a tf.train.Server, a tf.Session or a target. `loss`: the
    tensor, or its name, whose fetched value is the loss; by default the fetched scalar
    whose op name ends in "loss", else the loss the optimizer reported with each gradient.
    """

    kinds = ("variable_update", "step")

    def __init__(self, source, loss=None):
        from matplotlib.figure import Figure

        self.staleness = Staleness(loss)
        self.figure = Figure(figsize=(10, 3), dpi=80, layout="constrained")
        self._axes = self.figure.subplots(1, 3, width_ratios=(2, 2, 1))
        super().__init__(source)

    def _apply(self, event):
        self.staleness.apply(event)

    def _text(self):
        return "StalenessPlot: staleness, loss and dropped gradients per worker"

    def _draw(self):
        from matplotlib.patches import Patch
        from matplotlib.ticker import MaxNLocator

        histogram, loss, dropped = self._axes
        for axes in self._axes:
            axes.clear()
        self.figure.legends.clear()
        workers = self.staleness.workers()
        width = 0.8 / max(len(workers), 1)   # the workers' bars side by side at each staleness
        curves = [self.staleness.losses(worker) for worker in workers]
        for index, (worker, curve) in enumerate(zip(workers, curves)):
            offset = (index - (len(workers) - 1) / 2) * width
            counts = self.staleness.histogram(worker)
            histogram.bar([stale + offset for stale, _ in counts], [n for _, n in counts],
                          width, color=colour(worker))
            loss.plot([step for step, _ in curve], [value for _, value in curve], "-",
                      color=colour(worker), linewidth=1)
        dropped.barh(range(len(workers)), [self.staleness.dropped[w] for w in workers],
                     color=[colour(w) for w in workers])
        dropped.set_yticks(range(len(workers)), [short(w) for w in workers], fontsize=8)
        dropped.invert_yaxis()   # the legend's order
        histogram.set(title="staleness", xlabel="steps stale", ylabel="gradients")
        loss.set(title="loss", xlabel="global step")
        dropped.set(title="dropped gradients")
        for axis in (histogram.xaxis, histogram.yaxis, dropped.xaxis):
            axis.set_major_locator(MaxNLocator(integer=True))
        for axes, empty, note in ((loss, not any(curves), 'none yet: fetch a scalar named "loss"'),
                                  (dropped, not any(self.staleness.dropped.values()), "none")):
            if empty:
                axes.text(0.5, 0.5, note, color="#888", ha="center", va="center",
                          transform=axes.transAxes)
        if workers:
            self.figure.legend(handles=[Patch(color=colour(w), label=short(w)) for w in workers],
                               loc="outside right upper", fontsize=8)
        # The counts ride along as attributes, so a page (or a test) can read what is drawn.
        points = sum(len(self.staleness.points[w]) for w in workers)
        return (f'<div class="dtfnb-staleness" data-workers="{len(workers)}" '
                f'data-points="{points}" data-dropped="{sum(self.staleness.dropped.values())}">'
                f'{figure_img(self.figure, self._text())}</div>')
