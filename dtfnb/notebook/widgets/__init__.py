"""Widgets that draw a cluster from its monitor stream: placement, queues, staleness, tasks."""

from dtfnb.notebook.widgets.cluster import ClusterView, StepTimeline
from dtfnb.notebook.widgets.placement import PlacementView
from dtfnb.notebook.widgets.queues import QueueMonitor, QueuePlot
from dtfnb.notebook.widgets.staleness import StalenessPlot

__all__ = ["ClusterView", "PlacementView", "QueueMonitor", "QueuePlot", "StalenessPlot",
           "StepTimeline"]
