"""tf.train.Server: one task of a cluster, serving its master and its worker over gRPC,
and over a Unix socket for processes on its host (transport/unix.py).

A task owns its devices and their resources (variables, queues, readers), so every
session of every client that places an op on this task shares them. Unlike
TensorFlow's, a server can be stopped: `stop()` frees the port.

Every task also serves its event stream (placements, steps, health): read
`server.events` in this process, or `dtfnb.distributed_runtime.transport.monitor.watch(target)`
from anywhere.

A task closes the sessions of other processes that have run nothing for a day
($DTFNB_SESSION_GC_SECONDS; 0: never) and keeps at most 1024 of them (MAX_REMOTE_SESSIONS)
open, closing the least recently used idle ones to open more. Its worker does the same
with the graphs that masters of other tasks register on it (at most 4096,
MAX_REMOTE_GRAPHS).
"""

import os
import sys
import threading
import time

import numpy as np

from dtfnb.base.cores import usable_cores
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.distributed_runtime.cluster import ClusterSpec
from dtfnb.distributed_runtime.emulation import Conditions
from dtfnb.distributed_runtime.master import Master
from dtfnb.distributed_runtime.traffic import Traffic
from dtfnb.distributed_runtime.transport import monitor, rpc, shm
from dtfnb.distributed_runtime.transport.remote import Peers
from dtfnb.distributed_runtime.transport.services import start_server
from dtfnb.distributed_runtime.worker import Worker
from dtfnb.protos import cluster_pb2, config_pb2, monitor_pb2
from dtfnb.runtime.devices import create_devices
from dtfnb.runtime.events import EventLog

_running = {}   # target -> Server, for sessions in this process (no gRPC hop needed)
_running_lock = threading.Lock()
_HEALTH_SECONDS = 1.0   # between health events, while someone watches
# Sessions of other processes idle for longer are closed: those of clients that exited
# without closing them. A day: no one leaves a notebook longer and expects it to run on.
SESSION_GC_VARIABLE = "DTFNB_SESSION_GC_SECONDS"
_SESSION_GC_SECONDS = 24 * 3600.0


def running_server(target):
    """The server of this process whose target is `target`, if any."""
    with _running_lock:
        return _running.get(target)


def task_name(job, task):
    """The full name of a task: `/job:<job>/replica:0/task:<task>`."""
    return f"/job:{job}/replica:0/task:{task}"


class Server:
    """An in-process task: `tf.train.Server(cluster, job_name, task_index)`.

    One task of a cluster, as in the chapter: a master (which sessions with this
    server's `target` talk to), a worker with the task's devices and resources,
    and the gRPC service that other tasks and clients reach at its address.
    `python -m dtfnb.server` runs one as its own process; `LocalCluster` starts
    several.

    ```python
    cluster = tf.train.ClusterSpec({"ps": ["localhost:2221"],
                                    "worker": ["localhost:2222"]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(1.0)
    with tf.Session(worker.target) as sess:   # grpc://localhost:2222
        sess.run(w.initializer)
        print(sess.run(w * 2))                # 2.0, w lives on the ps task
    ps.stop(); worker.stop()
    ```

    Args:
      server_or_cluster_def: a ClusterSpec, a dict or ClusterDef of jobs, or a
        ServerDef (which names the job and task itself).
      job_name, task_index: which task of the cluster this is.
      protocol: "grpc" (the only one).
      config: the default ConfigProto of sessions on this task (device counts...).
      start: start serving at once (else call `start()`).
      emulate: dtfnb's own, not TensorFlow's: this task's emulated conditions,
        `dict(link="100Mbit,2ms", slow="x3")` (see distributed_runtime/emulation.py).
      bind: dtfnb's own: the host to listen on at the task's port ("0.0.0.0": every
        interface, as TensorFlow's servers do) instead of the task's address, which the
        task still gives as its own.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, emulate=None, bind=None):
        self._server_def = _server_def(server_or_cluster_def, job_name, task_index, protocol,
                                       config)
        cluster = ClusterSpec(self._server_def.cluster)
        self._job, self._task = self._server_def.job_name, self._server_def.task_index
        self._address = cluster.task_address(self._job, self._task)
        self._bind = bind
        config = self._server_def.default_session_config
        cores = _cores_per_task(cluster, self._address)
        blas_threads = config.intra_op_parallelism_threads or cores
        others = {task_name(job, index): cluster.task_address(job, index)
                  for job in cluster.jobs for index in cluster.task_indices(job)
                  if (job, index) != (self._job, self._task)}
        self._security = rpc.Security()
        self.emulated = Conditions(task_name(self._job, self._task), **(emulate or {}))
        self.events = EventLog(task_name(self._job, self._task))
        self.traffic = Traffic(self.events)
        self._peers = Peers(others, self._security, self.traffic, self.emulated.link)
        gc_seconds = _session_gc_seconds()
        self._worker = Worker(create_devices(config, self._job, self._task, blas_threads,
                                             self.events, cores),
                              blas_threads, peers=self._peers, graph_gc_seconds=gc_seconds,
                              conditions=self.emulated, traffic=self.traffic)
        for device in self._worker.devices.values():
            if device.xp is np:
                device.shared_arrays = shm.block_pool().empty
        self.master = Master(DeviceSpec(self._job, 0, self._task),
                             [self._worker] + [self._peers.worker(t) for t in sorted(others)],
                             self.events, server_config=config,
                             session_gc_seconds=gc_seconds, traffic=self.traffic)
        self._monitor = monitor.MonitorServicer(self.events)
        self._grpc = None
        self._health = None
        self._last_health = (time.monotonic(), None, None)  # (when, graphs_run, bytes_sent)
        self._stopping = threading.Event()
        self.stopped = threading.Event()  # set once stop() has finished
        if start:
            self.start()

    @property
    def target(self):
        """Returns the target for a `tf.Session` to connect to this server ("grpc://host:port")."""
        return f"grpc://{self._address}"

    @property
    def server_def(self):
        """Returns the `tf.train.ServerDef` for this server."""
        return self._server_def

    def start(self):
        """Starts serving (a no-op if already started)."""
        if self._grpc is not None:
            return
        if self._stopping.is_set():
            raise RuntimeError("A stopped server cannot be started again; create a new one.")
        host, _, requested = self._address.rpartition(":")
        listen = self._address if self._bind is None else f"{self._bind}:{requested}"
        self._grpc = start_server(listen, self.master, self._worker, self._security,
                                  extra_handlers=[self._monitor.handler()])
        if requested == "0":  # the OS chose the port: say which, everywhere
            self._address = f"{host}:{self._grpc.port}"
            for job in self._server_def.cluster.job:
                if job.name == self._job:
                    job.tasks[self._task] = self._address
        with _running_lock:
            _running[self.target] = self
        self._health = threading.Thread(target=self._report_health, daemon=True,
                                        name=f"dtfnb-health-{self._address}")
        self._health.start()

    def _report_health(self):
        while not self._stopping.wait(_HEALTH_SECONDS):
            if self.events.watching:
                self.events.publish(self._health_event("serving"))

    def _health_event(self, state):
        event = monitor_pb2.Event()
        health = event.health
        health.task = self.events.task
        health.state = state
        health.active_steps = self.master.active_steps()
        health.steps_run = self.master.steps_run
        health.resident_bytes = _resident_bytes()
        health.graphs_run = self._worker.graphs_run
        health.bytes_sent = self.traffic.bytes_sent
        health.bytes_received = self.traffic.bytes_received
        health.emulated = self.emulated.description
        now = time.monotonic()
        since, graphs, sent = self._last_health
        self._last_health = now, health.graphs_run, health.bytes_sent
        if graphs is not None and now > since:
            health.steps_per_second = (health.graphs_run - graphs) / (now - since)
            if health.graphs_run > graphs:
                health.bytes_sent_per_step = (health.bytes_sent - sent) / (health.graphs_run
                                                                           - graphs)
        return event

    def join(self):
        """Blocks until the server stops."""
        self.stopped.wait()

    def stop(self, grace=None):
        """Stops serving, cancels running steps, frees the port and the task's resources.

        `grace`: seconds that calls in progress may take to finish (default: none)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        with _running_lock:
            if _running.get(self.target) is self:
                del _running[self.target]
        try:
            if self._health is not None:
                self._health.join()
            self.events.publish(self._health_event("stopping"))
            self.events.close()
            self._monitor.wait(timeout=1.0)  # watchers get the last events before the port closes
            if self._grpc is not None:
                self._grpc.stop(grace)
            self.master.close()
            self._peers.close()
        finally:
            self.stopped.set()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task cluster on a port the OS picks: target `grpc://localhost:<port>`."""
        return Server({"localhost": ["localhost:0"]}, "localhost", 0, config=config,
                      start=start)

    def __repr__(self):
        return f"<tf.train.Server {task_name(self._job, self._task)} at {self.target}>"


def _server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    if isinstance(server_or_cluster_def, cluster_pb2.ServerDef):
        server_def = cluster_pb2.ServerDef()
        server_def.CopyFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
    else:
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        server_def = cluster_pb2.ServerDef(cluster=cluster.as_cluster_def(), job_name=job_name,
                                           task_index=task_index)
    server_def.protocol = protocol or server_def.protocol or "grpc"
    if server_def.protocol != "grpc":
        raise ValueError(f"Unsupported protocol {server_def.protocol!r}: dtfnb speaks 'grpc'")
    if config is not None:
        if not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        server_def.default_session_config.CopyFrom(config)
    ClusterSpec(server_def.cluster).task_address(server_def.job_name, server_def.task_index)
    return server_def


def _session_gc_seconds():
    """$DTFNB_SESSION_GC_SECONDS (0: never), else a day."""
    value = os.environ.get(SESSION_GC_VARIABLE)
    if not value:
        return _SESSION_GC_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"{SESSION_GC_VARIABLE} must be a number of seconds (0: never "
                         f"collect idle sessions), not {value!r}")
    return seconds


def _resident_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the peak, which is what getrusage knows
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _cores_per_task(cluster, address):
    """BLAS threads for a task: the host's cores shared by the tasks the spec puts on it
    that compute. A ps task's work is variable reads and element-wise updates, which
    BLAS does not run, so ps tasks do not count (unless the host has nothing else)."""
    host = address.rpartition(":")[0]
    here = [job for job in cluster.jobs for index in cluster.task_indices(job)
            if cluster.task_address(job, index).rpartition(":")[0] == host]
    computing = sum(1 for job in here if job != "ps") or len(here)
    return max(1, usable_cores() // max(1, computing))
