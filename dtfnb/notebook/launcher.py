"""The launch layer's Cluster and LocalCluster (dtfnb/launch/cluster.py), with a progress
bar while their tasks start: a widget in a notebook, a line of text elsewhere when asked."""

from dtfnb.launch import cluster
from dtfnb.notebook.progress import in_notebook, progress


class _ProgressBar:
    def _progress_bar(self, total, description):
        """A progress bar over the tasks that answer: by default in a notebook only."""
        show = in_notebook() if self.progress is None else self.progress
        return progress(total, description) if show else None


class Cluster(_ProgressBar, cluster.Cluster):
    """dtfnb.launch.Cluster (its tasks started by any launcher), with a progress bar."""


class LocalCluster(_ProgressBar, cluster.LocalCluster):
    """dtfnb.launch.LocalCluster (tasks on this machine), with a progress bar.

    ```python
    with LocalCluster({"ps": 2, "worker": 3}) as cluster:
        with tf.Session(cluster.target("worker", 0)) as sess:
            ...
    ```
    """
