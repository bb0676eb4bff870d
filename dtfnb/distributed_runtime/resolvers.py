"""Cluster resolvers: a task learns its cluster and its own place in it from the environment.

`python -m dtfnb.server` uses `resolve_from_environment()` so that the same command runs
under Kubernetes (TFJob sets `TF_CONFIG`) and under Slurm (`srun` sets `SLURM_*`), and
dtfnb needs no cluster manager of its own.
"""

import itertools
import json
import os
import re

from dtfnb.distributed_runtime.cluster import ClusterSpec


class TFConfigClusterResolver:
    """Reads the cluster and this task from the `TF_CONFIG` JSON environment variable.

    ```python
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]},
        "task": {"type": "worker", "index": 1}})
    resolver = TFConfigClusterResolver()
    resolver.master()  # 'grpc://w1:2222'
    ```

    The variable is read on every call, as TensorFlow does; arguments override it.
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer

    @property
    def task_type(self):
        """The job of this task: the one given, else `task.type` of TF_CONFIG."""
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config().get("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        """The index of this task: the one given, else `task.index` of TF_CONFIG."""
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config().get("task", {})
        if "index" not in task:
            return None
        try:
            return int(task["index"])
        except (TypeError, ValueError):
            raise ValueError(f"TF_CONFIG: task index {task['index']!r} is not an "
                             "integer") from None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        """The scheme of `master()`: the argument, else TF_CONFIG's `rpc_layer`, else grpc."""
        return self._rpc_layer or _tf_config().get("rpc_layer") or "grpc"

    def cluster_spec(self):
        """Returns a ClusterSpec based on the TF_CONFIG environment variable."""
        try:
            return ClusterSpec(_tf_config().get("cluster", {}))
        except (TypeError, ValueError) as e:
            raise ValueError(f"TF_CONFIG: bad cluster: {e}") from None

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of this task, or '' where one local task is the whole cluster."""
        session_master = _tf_config().get("session_master")
        if session_master is not None:
            return session_master
        cluster = self.cluster_spec()
        if sum(cluster.num_tasks(job) for job in cluster.jobs) <= 1:
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            raise ValueError('TF_CONFIG names no task: set "task": {"type": ..., "index": ...} '
                             "or pass task_type and task_id")
        return f"{rpc_layer or self.rpc_layer}://{cluster.task_address(task_type, task_id)}"


def _tf_config():
    text = os.environ.get("TF_CONFIG") or "{}"
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e}): {text!r}") from None
    if not isinstance(config, dict) or not isinstance(config.get("task", {}), dict):
        raise ValueError(f'TF_CONFIG must be a JSON object {{"cluster": {{...}}, "task": '
                         f'{{"type": ..., "index": ...}}}}, got {text!r}')
    return config


class SlurmClusterResolver:
    """Builds the cluster from the Slurm job step this process is a task of.

    Slurm's tasks (ranks) are given to `jobs` in the order listed: with
    `jobs={"ps": 1, "worker": 2}` rank 0 is ps 0 and ranks 1 and 2 are workers 0 and 1.
    Each task listens on `port_base` + its rank within its node. Defaults to one job,
    `worker`, of all the tasks. Reads SLURM_PROCID, SLURM_STEP_NUM_TASKS,
    SLURM_STEP_NODELIST and SLURM_STEP_TASKS_PER_NODE (the job-wide SLURM_NTASKS,
    SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE where no step is running), once, when built.
    `tasks_per_node` (an int, or {host: count}) overrides the last.
    """

    def __init__(self, jobs=None, port_base=8888, tasks_per_node=None, rpc_layer="grpc"):
        rank = _slurm_var(int, "SLURM_PROCID")
        num_tasks = _slurm_var(int, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
        hosts = _slurm_var(expand_hostlist, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST")
        if tasks_per_node is None:
            counts = _slurm_var(expand_tasks_per_node, "SLURM_STEP_TASKS_PER_NODE",
                                "SLURM_TASKS_PER_NODE")
        elif isinstance(tasks_per_node, dict):
            counts = [tasks_per_node.get(host, 0) for host in hosts]
        else:
            counts = [tasks_per_node] * len(hosts)
        if len(counts) != len(hosts):
            raise ValueError(f"Slurm lists {len(hosts)} nodes ({', '.join(hosts)}) but task "
                             f"counts for {len(counts)}: {counts}")
        addresses = [f"{host}:{port_base + local_rank}"
                     for host, count in zip(hosts, counts) for local_rank in range(count)]
        if len(addresses) != num_tasks:
            raise ValueError(f"The nodes hold {len(addresses)} tasks ({counts}) but Slurm runs "
                             f"{num_tasks}")
        jobs = {"worker": num_tasks} if jobs is None else dict(jobs)
        if sum(jobs.values()) != num_tasks:
            raise ValueError(f"jobs={jobs} ask for {sum(jobs.values())} tasks but Slurm runs "
                             f"{num_tasks}")
        if not 0 <= rank < num_tasks:
            raise ValueError(f"SLURM_PROCID={rank} is not in [0, {num_tasks})")
        cluster, start = {}, 0
        for job, count in jobs.items():
            cluster[job] = addresses[start:start + count]
            if start <= rank < start + count:
                self.task_type, self.task_id = job, rank - start
            start += count
        self._cluster = ClusterSpec(cluster)
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        """The ClusterSpec of the job's tasks, from Slurm's environment."""
        return self._cluster

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of this task (or of the task given), e.g. 'grpc://node01:8888'."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        address = self._cluster.task_address(task_type, task_id)
        return f"{rpc_layer or self.rpc_layer}://{address}"


def _slurm_var(parse, *names):
    """Parses the first of the variables `names` that is set; errors name the variable."""
    for name in names:
        value = os.environ.get(name)
        if value is not None:
            try:
                return parse(value)
            except ValueError as e:
                raise ValueError(f"Malformed {name}={value!r}: {e}") from None
    raise ValueError(f"{' or '.join(names)} is not set: is this process a task of a Slurm "
                     "job step (srun)?")


_HOST_ITEM = r"(?:[^,\[\]]|\[[^\[\]]*\])+"  # a name with [ranges], no comma outside brackets


def expand_hostlist(hostlist):
    """Expands Slurm's compressed host list, keeping its order and zero padding.

    `node[01-03,7],gpu5` → ['node01', 'node02', 'node03', 'node7', 'gpu5']: each range
    pads to the width of its first number. Several bracket groups in one name
    (`r[1-2]n[1-2]`) expand to every combination, as Slurm does.
    """
    if not re.fullmatch(rf"{_HOST_ITEM}(?:,{_HOST_ITEM})*", hostlist):
        raise ValueError("not a host list like 'node[01-03,7],gpu5'")
    hosts = []
    for item in re.findall(_HOST_ITEM, hostlist):
        parts = re.split(r"\[([^\]]*)\]", item)  # text, ranges, text, ranges, ..., text
        choices = [[part] if i % 2 == 0 else _expand_ranges(part) for i, part in enumerate(parts)]
        hosts.extend("".join(combination) for combination in itertools.product(*choices))
    return hosts


def _expand_ranges(ranges):
    numbers = []
    for item in ranges.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not match or int(match[2] or match[1]) < int(match[1]):
            raise ValueError(f"bad range {item!r} in [{ranges}]")
        first, last = match[1], match[2] or match[1]
        numbers.extend(str(n).zfill(len(first)) for n in range(int(first), int(last) + 1))
    return numbers


def expand_tasks_per_node(spec):
    """Expands Slurm's tasks-per-node list: `2(x3),1` → [2, 2, 2, 1]."""
    counts = []
    for item in spec.split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item)
        if not match:
            raise ValueError(f"bad item {item!r}: expected a count like 2 or 2(x3)")
        counts.extend([int(match[1])] * int(match[2] or 1))
    return counts


def resolve_from_environment(**slurm_options):
    """The resolver this process's environment calls for: TF_CONFIG first, then Slurm.

    Returns None where neither is set. `slurm_options` go to SlurmClusterResolver.
    """
    if os.environ.get("TF_CONFIG"):
        return TFConfigClusterResolver()
    if "SLURM_PROCID" in os.environ:
        return SlurmClusterResolver(**slurm_options)
    return None
