"""dtfnb in Jupyter: `%load_ext dtfnb` gives the %%cluster magic (a LocalCluster of task
processes), %board (TensorBoard on a log directory), widgets fed by the monitor stream,
rich displays and the JupyterLab panel's comm. Imported in a kernel, this package loads
the extension itself.

Nothing in dtfnb imports this package: `import dtfnb` stays free of IPython.
"""

from dtfnb.notebook.experiment import Proportion, compare, compare_together
from dtfnb.notebook.launcher import Cluster, LocalCluster
from dtfnb.notebook.progress import in_notebook, progress
from dtfnb.notebook.widgets import (
    ClusterView,
    PlacementView,
    QueueMonitor,
    QueuePlot,
    StalenessPlot,
    StepTimeline,
)

__all__ = ["Cluster", "ClusterView", "LocalCluster", "PlacementView", "Proportion", "QueueMonitor",
           "QueuePlot", "StalenessPlot", "StepTimeline", "compare", "compare_together",
           "load_ipython_extension", "progress", "unload_ipython_extension"]


def load_ipython_extension(shell):
    """`%load_ext dtfnb`: registers the magics and displays, and starts the panel in a kernel."""
    from dtfnb.notebook import magics

    magics.load(shell)


def unload_ipython_extension(shell):
    """`%unload_ext dtfnb`: removes what `load_ipython_extension` registered."""
    from dtfnb.notebook import magics

    magics.unload(shell)


if in_notebook():   # the panel protocol: importing dtfnb.notebook in a kernel loads it
    import IPython

    IPython.get_ipython().extension_manager.load_extension("dtfnb")
