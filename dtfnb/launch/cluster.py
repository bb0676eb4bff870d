"""Cluster: every task of a cluster as its own `dtfnb.server` process, started by a
Launcher; LocalCluster: one on this machine, from the fork server.

```python
with LocalCluster({"ps": 2, "worker": 3}) as cluster:
    with tf.Session(cluster.target("worker", 0)) as sess:
        ...

cluster = Cluster({"ps": ["hostA:2222"], "worker": ["hostB:2222"]},
                  SSHLauncher(python="/opt/venv/bin/python"))
```

The cluster is ready once every task has said it listens and accepts connections (a
port picked free may be taken by another process before the task binds it: a
LocalCluster that picked it starts again on others). Its tasks
die with this process (each launcher ties them to it: see its module); an atexit hook
stops what is still running first. A task's stdout and stderr go to a bounded per-task buffer
(`logs()`), never to this process's output.
"""

import atexit
import collections
import contextlib
import signal
import socket
import subprocess
import threading
import time

from dtfnb.base.errors import DeadlineExceededError, UnavailableError
from dtfnb.distributed_runtime.cluster import (
    CANNOT_BIND,
    SERVING,
    ClusterSpec,
    local_addresses,
)
from dtfnb.distributed_runtime.emulation import describe, task_conditions
from dtfnb.launch.launcher import TaskStart
from dtfnb.launch.local import LocalLauncher
from dtfnb.launch.tfjob import to_tfjob

_LOCAL_HOSTS = ("127.0.0.1", "localhost")
_LOG_LINES = 2000
_POLL_SECONDS = 0.01
_PICKS = 3   # starts of a LocalCluster on ports it picked, should others take them first
_live = {}   # id -> Cluster started and not stopped, in start order (kept alive)
_live_lock = threading.Lock()


def live_clusters():
    """The Clusters of this process that were started and not stopped, oldest first."""
    with _live_lock:
        return list(_live.values())


class Task:
    """One task: its address, state, process (a launcher's TaskProcess) and the tail of
    its output."""

    def __init__(self, job, index, address, link=None, slow=None):
        self.job, self.index = job, index
        self._address = address
        self.link, self.slow = link, slow
        self.emulated = describe(link, slow)
        self.process = None
        self._reader = None
        self.log = collections.deque(maxlen=_LOG_LINES)
        self._stop_requested = False
        self._serving = False
        self._listens = False   # the task's output said it listens

    @property
    def name(self):
        """The task's device name prefix, "/job:<job>/replica:0/task:<index>"."""
        return f"/job:{self.job}/replica:0/task:{self.index}"

    @property
    def address(self):
        """"host:port", as the cluster gives it or as the task reported it (None until it
        has, where the launcher picks addresses)."""
        reported = self.process.address if self.process is not None else None
        return reported or self._address

    @property
    def state(self):
        """"starting", "serving", "stopping", "stopped" (as asked) or "dead" (it exited
        unasked, or was killed)."""
        if self.process is None:
            return "stopped"
        exited = self.process.poll() is not None
        if self._stop_requested:
            return "stopped" if exited else "stopping"
        if exited:
            return "dead"
        return "serving" if self._serving else "starting"

    def move_to(self, address):
        """Gives the task, stopped, another address for its next start."""
        self._address = address

    def flags(self, cpus, gpus):
        """The server flags of this task: its devices and emulated conditions."""
        return ["--cpus", str(cpus), "--emulated-gpus", str(gpus),
                *(["--link", self.link] if self.link else []),
                *(["--slow", self.slow] if self.slow else [])]

    def started(self, process):
        """Takes the started task's `process` and starts a thread that reads its output."""
        self._stop_requested = False
        self._serving = False
        self._listens = False
        self.process = process
        self._reader = threading.Thread(target=self._read_output, args=(process,),
                                        daemon=True, name=f"dtfnb-log-{self.job}-{self.index}")
        self._reader.start()

    def _read_output(self, process):
        with contextlib.closing(process.stdout):
            for line in process.stdout:
                self.log.append(line.rstrip("\n"))
                self._listens = self._listens or SERVING in line

    def answers(self):
        """Whether the task listens, as its own output says, and accepts connections now
        (and remembers that it did): a port it failed to take may answer for another
        process."""
        if self.address is None or not self._listens:
            return False
        host, port = self.address.rsplit(":", 1)
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), 0.2):
            self._serving = True
        return self._serving

    def send(self, signum):
        """Sends `signum` to the task's process if it is running (SIGTERM marks it as asked to
        stop)."""
        if self.process is not None and self.process.poll() is None:
            self._stop_requested = self._stop_requested or signum == signal.SIGTERM
            self.process.send_signal(signum)

    def wait(self, timeout):
        """Waits until the process has exited; kills it if it takes longer than `timeout`."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5.0)
        self._reader.join(5.0)  # so that logs() holds the task's last words


class Cluster:
    """A cluster of task processes, started by `launcher`.

    Args:
      spec: the cluster as a dict of job name to addresses or a `tf.train.ClusterSpec`;
        a dict of job name to task count where the launcher picks the addresses (sbatch).
      launcher: what starts the tasks (default: a LocalLauncher, on this machine).
      name: what the cluster is called in listings (`%%cluster --name`).
      cpus, gpus: CPU devices and emulated GPU devices of each task.
      link: every task's emulated network link, "100Mbit,2ms" (BANDWIDTH[,LATENCY]).
      links: links by task ("ps:0") or job ("ps"), over `link`.
      slow: emulated slow tasks by task ("worker:2") or job ("worker"): "x3", "+20ms"
        or "pareto:1.5,10ms". A task's key wins over its job's (see
        dtfnb/distributed_runtime/emulation.py for the model).
      timeout: seconds that starting may take before DeadlineExceededError.
      progress: show a progress bar while starting (default: in a notebook only; the
        notebook's classes draw it).
      start: start the tasks now (else with `start()`).

    `spec` is its tf.train.ClusterSpec, `target(job, task)` a task's "grpc://host:port".
    """

    def __init__(self, spec, launcher=None, name="cluster", cpus=1, gpus=0, link=None,
                 links=None, slow=None, timeout=30.0, progress=None, start=True):
        self.name = name
        self.launcher = launcher if launcher is not None else LocalLauncher()
        if isinstance(spec, ClusterSpec):
            spec = spec.as_dict()
        if self.launcher.picks_addresses:
            self._requested = spec
            names = [(job, index) for job, count in sorted(spec.items())
                     for index in range(count)]
            self.spec = None   # known once the tasks report their addresses
        else:
            self.spec = ClusterSpec(spec)
            self._requested = self.spec.as_dict()
            names = [(job, index) for job in self.spec.jobs
                     for index in self.spec.task_indices(job)]
        if cpus < 1 or gpus < 0:
            raise ValueError(f"cpus must be >= 1 and gpus >= 0, got cpus={cpus}, gpus={gpus}")
        self.cpus, self.gpus = cpus, gpus
        self.progress = progress
        self._timeout = timeout
        emulated = task_conditions([f"{job}:{index}" for job, index in names], link, links,
                                   slow)
        self._tasks = {(job, index): Task(job, index,
                                          self.spec and self.spec.task_address(job, index),
                                          *emulated[f"{job}:{index}"])
                       for job, index in names}
        if start:
            self.start()

    @property
    def tasks(self):
        """Every Task, ordered by job and index."""
        return list(self._tasks.values())

    def target(self, job, task=0):
        """The task's session target, "grpc://host:port"."""
        return f"grpc://{self._task(job, task).address}"

    def state(self, job, task=0):
        """"starting", "serving", "stopping", "stopped" or "dead"."""
        return self._task(job, task).state

    def pid(self, job, task=0):
        """The process id of task `task` of `job` on its host, or None if it was not
        started."""
        process = self._task(job, task).process
        return None if process is None else process.pid

    def start(self):
        """Starts every task that is not running and waits until all of them answer."""
        self._start([t for t in self.tasks if t.state in ("stopped", "dead")])
        with _live_lock:
            _live[id(self)] = self

    def stop(self, timeout=10.0):
        """Stops every task (SIGTERM), waiting up to `timeout` seconds before killing."""
        with _live_lock:
            _live.pop(id(self), None)
        for task in self.tasks:
            task.send(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for task in self.tasks:
            task.wait(max(0.0, deadline - time.monotonic()))
        self.launcher.close()

    def restart(self, job, task=0):
        """Stops one task if it runs, then starts it again on the same address."""
        one = self._task(job, task)
        one.send(signal.SIGTERM)
        one.wait(10.0)
        self._start([one])

    def kill(self, job, task=0):
        """Kills one task with SIGKILL, as a crash would (its state becomes "dead")."""
        one = self._task(job, task)
        one.send(signal.SIGKILL)
        one.wait(10.0)

    def logs(self, job, task=0):
        """The task's recent output (its last 2000 lines), as one string."""
        return "\n".join(self._task(job, task).log)

    def to_tfjob(self, name, image, **options):
        """A Kubeflow TFJob manifest for this cluster's jobs and task counts: see
        tfjob.to_tfjob, which takes the same `options`."""
        return to_tfjob(self.spec, name, image, **options)

    def _task(self, job, task):
        if (job, task) not in self._tasks:
            raise ValueError(f"No task {task!r} of job {job!r} in cluster {self.name!r}: it "
                             f"has {', '.join(t.name for t in self.tasks)}")
        return self._tasks[(job, task)]

    def _progress_bar(self, total, description):
        """A bar counting the tasks that answer, or None (the notebook's classes draw one)."""
        return None

    def _start(self, tasks):
        if not tasks:
            return
        processes = self.launcher.start(
            self._requested, [TaskStart(t.job, t.index, t.flags(self.cpus, self.gpus))
                              for t in tasks])
        for task, process in zip(tasks, processes):
            task.started(process)
        bar = self._progress_bar(len(tasks), f"Starting {self.name}")
        waiting = list(tasks)
        deadline = time.monotonic() + self._timeout
        while waiting:
            for task in list(waiting):
                if task.answers():
                    waiting.remove(task)
                    if bar is not None:
                        bar.update(1)
                elif task.process.poll() is not None:
                    self._fail(UnavailableError, f"{task.name} exited with code "
                               f"{task.process.returncode} while starting", task)
            if waiting and time.monotonic() > deadline:
                where = waiting[0].address or "its address"
                self._fail(DeadlineExceededError, f"{waiting[0].name} did not answer at "
                           f"{where} within {self._timeout} s", waiting[0])
            time.sleep(_POLL_SECONDS if waiting else 0)
        if bar is not None:
            bar.close()
        if self.launcher.picks_addresses:
            self.spec = ClusterSpec({job: {t.index: t.address for t in tasks}
                                     for job, tasks in self._jobs().items()})

    def _jobs(self):
        jobs = {}
        for task in self.tasks:
            jobs.setdefault(task.job, []).append(task)
        return jobs

    def _fail(self, error_class, message, task):
        time.sleep(0.1)  # the reader thread takes the last lines
        tail = "\n".join(list(task.log)[-20:])
        self.stop()
        raise error_class(None, None, f"{message}; its last output:\n{tail}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        jobs = ", ".join(f"{job}: {len(tasks)}" for job, tasks in self._jobs().items())
        via = "" if self.launcher.name == "local" else f" via {self.launcher.name}"
        states = collections.Counter(task.state for task in self.tasks)
        summary = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        emulated = "; ".join(f"{task.job}:{task.index} {task.emulated}"
                             for task in self.tasks if task.emulated)
        emulated = f"; emulated: {emulated}" if emulated else ""
        return f"<{type(self).__name__} {self.name!r} ({jobs}){via}: {summary}{emulated}>"


class LocalCluster(Cluster):
    """A cluster of task processes on this machine, forked from the fork server.

    Args:
      spec_or_counts: how many tasks each job has, `{"ps": 2, "worker": 3}` (on free
        ports of `host`, or `ports` / from `port_base`), or the chapter's cluster as a
        dict of addresses or a `tf.train.ClusterSpec` (every address on this machine).
      name: what the cluster is called in listings (`%%cluster --name`).
      host: the address tasks bind when given as counts (default 127.0.0.1).
      ports: one port per task, in the order of the jobs and their tasks.
      port_base: ports port_base, port_base + 1, ... in that order.
      The other arguments are Cluster's: cpus, gpus, link, links, slow, timeout,
      progress, start.

    `spec` is its tf.train.ClusterSpec, `target(job, task)` a task's "grpc://host:port".
    """

    def __init__(self, spec_or_counts, name="cluster", host="127.0.0.1", ports=None,
                 port_base=None, cpus=1, gpus=0, link=None, links=None, slow=None,
                 timeout=30.0, progress=None, start=True):
        spec = ClusterSpec(addresses(spec_or_counts, host, ports, port_base))
        for job in spec.jobs:
            for index in spec.task_indices(job):
                _check_local(spec.task_address(job, index))
        # Task counts on ports picked here: free when picked, but another process may take
        # one before its task binds it. Then `start` picks them again.
        self._picked = (spec_or_counts, host) if ports is None and port_base is None and \
            not isinstance(spec_or_counts, ClusterSpec) and \
            all(isinstance(n, int) for n in spec_or_counts.values()) else None
        super().__init__(spec, LocalLauncher(), name=name, cpus=cpus, gpus=gpus, link=link,
                         links=links, slow=slow, timeout=timeout, progress=progress,
                         start=start)

    def start(self):
        """Starts every task that is not running and waits until all of them answer; on
        ports it picked, once more on others where another process took one first."""
        for attempt in range(_PICKS):
            try:
                return super().start()
            except UnavailableError as err:
                if self._picked is None or CANNOT_BIND not in err.message \
                        or attempt == _PICKS - 1:
                    raise
            self.spec = ClusterSpec(addresses(*self._picked))
            self._requested = self.spec.as_dict()
            for task in self.tasks:
                task.move_to(self.spec.task_address(task.job, task.index))


def addresses(spec_or_counts, host="127.0.0.1", ports=None, port_base=None):
    """The cluster as {job: [address, ...]}: as given, or for task counts ({"ps": 2}) on
    `host`, at `ports`, from `port_base` or on ports free on this machine now."""
    if isinstance(spec_or_counts, ClusterSpec):
        spec_or_counts = spec_or_counts.as_dict()
    if not isinstance(spec_or_counts, dict) or not spec_or_counts:
        raise TypeError("A cluster needs a dict of job name to task count "
                        f"({{'ps': 2, 'worker': 3}}) or to addresses, got {spec_or_counts!r}")
    counts = {job: tasks for job, tasks in spec_or_counts.items() if isinstance(tasks, int)}
    if not counts:
        if ports is not None or port_base is not None:
            raise ValueError("ports and port_base apply to task counts, not to addresses")
        return spec_or_counts
    if len(counts) != len(spec_or_counts):
        raise ValueError("Give every job of a cluster as a task count or every job as "
                         f"addresses, not a mix: {spec_or_counts!r}")
    for job, n in counts.items():
        if isinstance(n, bool) or n < 1:
            raise ValueError(f"Job {job!r} needs at least one task, got {n!r}")
    total = sum(counts.values())
    if ports is not None and port_base is not None:
        raise ValueError("Give ports or port_base, not both")
    if ports is not None:
        if len(ports) != total:
            raise ValueError(f"{len(ports)} ports given for {total} tasks")
        chosen = [f"{host}:{int(port)}" for port in ports]
    elif port_base is not None:
        chosen = [f"{host}:{int(port_base) + i}" for i in range(total)]
    else:
        chosen = [f"{host}:{a.rsplit(':', 1)[1]}" for a in local_addresses(total)]
    taken = iter(chosen)
    return {job: [next(taken) for _ in range(n)] for job, n in counts.items()}


def _check_local(address):
    host = address.rpartition(":")[0]
    if host not in _LOCAL_HOSTS:
        raise ValueError(f"A LocalCluster starts tasks on this machine only: {address!r} is "
                         f"not on {' or '.join(_LOCAL_HOSTS)}")


@atexit.register
def _stop_live_clusters():
    for cluster in live_clusters():
        cluster.stop(timeout=2.0)
