"""ClusterSpec: the jobs of a cluster and each task's "host:port", as tf.train.ClusterSpec."""

import re
import socket

from dtfnb.protos import cluster_pb2

# TensorFlow's device names only accept such job names (`/job:<name>`).
_JOB_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class ClusterSpec:
    """A cluster as jobs of tasks, each task a network address.

    ```python
    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222"],
                                    "worker": ["w0:2222", "w1:2222"]})
    ```

    A job may also be sparse, `{"worker": {1: "w1:2222"}}`, so that a task needs
    to know only the tasks it talks to. Also built from a ClusterDef or another
    ClusterSpec.
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster._jobs
        elif isinstance(cluster, cluster_pb2.ClusterDef):
            cluster = _cluster_def_to_dict(cluster)
        elif not isinstance(cluster, dict):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")
        self._jobs = {name: _job_tasks(name, tasks) for name, tasks in sorted(cluster.items())}

    def __bool__(self):
        return bool(self._jobs)

    def __eq__(self, other):
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._jobs == other._jobs

    def __repr__(self):
        items = ", ".join(f"{job!r}: {tasks!r}" for job, tasks in self.as_dict().items())
        return f"ClusterSpec({{{items}}})"

    def as_dict(self):
        """Job name → list of addresses for a dense job, {index: address} for a sparse one."""
        result = {}
        for job, tasks in self._jobs.items():
            dense = list(tasks) == list(range(len(tasks)))
            result[job] = list(tasks.values()) if dense and tasks else dict(tasks)
        return result

    def as_cluster_def(self):
        """Returns a `tf.train.ClusterDef` protocol buffer based on this cluster."""
        cluster_def = cluster_pb2.ClusterDef()
        for job, tasks in self._jobs.items():
            cluster_def.job.add(name=job, tasks=tasks)
        return cluster_def

    @property
    def jobs(self):
        """Returns a list of job names in this cluster."""
        return list(self._jobs)

    def num_tasks(self, job_name):
        """Returns the number of tasks defined in the given job."""
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """Returns a list of valid task indices in the given job."""
        return list(self._job(job_name))

    def task_address(self, job_name, task_index):
        """Returns the address of the given task in the given job ("host:port")."""
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name):
        """Addresses ordered by task index, with None for the holes of a sparse job."""
        tasks = self._job(job_name)
        return [tasks.get(i) for i in range(max(tasks, default=-1) + 1)]

    def _job(self, job_name):
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]


def _cluster_def_to_dict(cluster_def):
    cluster = {}
    for job in cluster_def.job:
        if job.name in cluster:
            raise ValueError(f"Duplicate job {job.name!r} in ClusterDef")
        cluster[job.name] = dict(job.tasks)
    return cluster


def _job_tasks(job, tasks):
    """Checks one job of a spec; returns its tasks as {index: address}, sorted by index."""
    if not isinstance(job, str):
        raise TypeError(f"Job name {job!r} must be a string")
    if not _JOB_NAME.fullmatch(job):
        raise ValueError(f"Invalid job name {job!r}: it must match [A-Za-z][A-Za-z0-9_]*")
    if isinstance(tasks, (list, tuple)):
        tasks = dict(enumerate(tasks))
    elif not isinstance(tasks, dict):
        raise TypeError(f"The tasks for job {job!r} must be a list or a dictionary from "
                        "integers to strings.")
    checked = {}
    for index, address in tasks.items():
        try:
            index = int(index)  # JSON (TF_CONFIG) gives sparse indices as strings
        except (TypeError, ValueError):
            raise ValueError(f"Task index {index!r} in job {job!r} is not an integer") from None
        if index < 0:
            raise ValueError(f"Task index {index} in job {job!r} is negative")
        if index in checked:
            raise ValueError(f"Duplicate task index {index} in job {job!r}")
        if not isinstance(address, str):
            raise TypeError(f"Task address {address!r} of task {index} in job {job!r} must be "
                            "a string")
        checked[index] = address
    return dict(sorted(checked.items()))


# A task process logs "<task> serving at <target>" once its server listens: launchers read
# the address from that line, and a cluster counts a task up only after it (another
# process may be answering on a port the task failed to take).
SERVING = "serving at"
# ...and says this when another process took its port first: a cluster that picked the
# port itself then picks another (launch/cluster.py).
CANNOT_BIND = "cannot bind"


def local_addresses(n):
    """`n` "127.0.0.1:port" addresses on distinct ports that are free now, for a cluster
    of tasks on this machine (tutorials, tests; the OS may reuse a port later)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in sockets]
    finally:
        for s in sockets:
            s.close()
