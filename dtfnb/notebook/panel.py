"""The kernel side of the JupyterLab panel's comm (docs/panel-protocol.md).

The panel shows what this kernel knows: its LocalClusters and in-process servers with
their tasks, the placement of the last run, and queue fill levels. `Panel.start()`
registers the comm target "dtfnb.panel" and opens a comm to the frontend; from then on
every open comm gets the whole state as a snapshot on "hello" or "refresh", and
whenever the state changes, at most 5 times a second.
"""

import json
import threading

import comm

from dtfnb.client.session import BaseSession
from dtfnb.distributed_runtime.server_lib import Server
from dtfnb.notebook.launcher import live_clusters
from dtfnb.notebook.state import Placement, Queues, Tasks
from dtfnb.notebook.stream import Feed, event_streams
from dtfnb.notebook.widgets.cluster import task_devices

TARGET = "dtfnb.panel"
VERSION = 1
_KINDS = ("placement", "queue", "health")
_CHECK_SECONDS = 0.2   # at most 5 snapshots a second


class Panel:
    """The state behind the panel, folded from the event streams of every LocalCluster of
    this kernel and of the tf.train.Servers and tf.Sessions its user variables hold, and
    the comms it is sent on."""

    def __init__(self, shell):
        self._shell = shell
        self._comms = []
        self._feeds = {}           # key of a source -> Feed
        self._lock = threading.Lock()
        self.placement, self.queues, self.tasks = Placement(), Queues(), Tasks()
        self._sent = None
        self._stopped = threading.Event()
        self._thread = None

    def start(self):
        """Opens the panel's comm, sends the first snapshot, and starts the thread that sends
        changes."""
        comm.get_comm_manager().register_target(TARGET, self._opened_by_frontend)
        snapshot = self.snapshot()
        self._add(comm.create_comm(target_name=TARGET, data=snapshot))
        self._send(snapshot)   # also as a message, for a panel that reads only messages
        self._thread = threading.Thread(target=self._send_changes, daemon=True,
                                        name="dtfnb-panel")
        self._thread.start()

    def stop(self):
        """Stops sending changes and closes the panel's comms."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(5.0)
        comm.get_comm_manager().unregister_target(TARGET, self._opened_by_frontend)
        for one in list(self._comms):
            one.close()
        for feed in self._feeds.values():
            feed.close()
        self._feeds.clear()

    def _opened_by_frontend(self, channel, message):
        self._add(channel)
        self._received(channel, message)

    def _add(self, channel):
        self._comms.append(channel)
        channel.on_msg(lambda message: self._received(channel, message))
        channel.on_close(lambda _: self._comms.remove(channel) if channel in self._comms
                         else None)

    def _received(self, channel, message):
        data = message["content"]["data"] or {}
        if data.get("type") in ("hello", "refresh"):
            self._send(self.snapshot())
        elif data.get("type") == "close":
            # The panel's way to close a comm (the kernel opened one while the panel's hello
            # was on its way): its own comm_close would go to a subshell that JupyterLab
            # deletes at once, and ipykernel would print "Task was destroyed but it is
            # pending!" into the running cell.
            channel.close()

    def _send(self, snapshot):
        self._sent = json.dumps(snapshot, sort_keys=True)
        for channel in list(self._comms):
            channel.send(snapshot)

    def _send_changes(self):
        while not self._stopped.wait(_CHECK_SECONDS):
            self._watch_sources()
            snapshot = self.snapshot()
            if json.dumps(snapshot, sort_keys=True) != self._sent:
                self._send(snapshot)

    def _sources(self):
        """{key: source} of everything to watch: tasks of live clusters, servers of this
        process, and the masters of the user's sessions that run here."""
        sources = {}
        for cluster in live_clusters():
            for task in cluster.tasks:
                if task.state == "serving":
                    sources[("task", task.address, task.process.pid)] = \
                        cluster.target(task.job, task.index)
        for server in self._user_objects(Server):
            if not server.stopped.is_set():
                sources[("log", id(server.events))] = server.events
        for session in self._user_objects(BaseSession):
            if session.events is not None:
                sources.setdefault(("log", id(session.events)), session.events)
        return sources

    def _user_objects(self, cls):
        """The objects of `cls` that the user's variables hold, in no order."""
        found = {id(v): v for v in list(self._shell.user_ns.values()) if isinstance(v, cls)}
        return list(found.values())

    def _watch_sources(self):
        sources = self._sources()
        for key in set(self._feeds) - set(sources):
            self._feeds.pop(key).close()
        for key in set(sources) - set(self._feeds):
            try:
                feed = Feed(event_streams(sources[key], _KINDS), self._apply)
            except Exception:  # the task stopped in between: next round
                continue
            feed.start()
            self._feeds[key] = feed

    def _apply(self, events):
        with self._lock:
            for event in events:
                for state in (self.placement, self.queues, self.tasks):
                    state.apply(event)

    def snapshot(self):
        """The protocol's snapshot of everything this kernel knows now."""
        with self._lock:
            clusters = [self._cluster(c) for c in live_clusters()]
            servers = sorted(self._user_objects(Server), key=lambda s: (
                s.server_def.job_name, s.server_def.task_index))
            if servers:
                clusters.append({"name": "servers in this kernel",
                                 "tasks": [_server_task(s) for s in servers]})
            return {"type": "snapshot", "version": VERSION, "clusters": clusters,
                    "placement": self.placement.as_dict(), "queues": self.queues.as_list()}

    def _cluster(self, cluster):
        tasks = []
        for task in cluster.tasks:
            health = self.tasks.health.get(task.name)
            tasks.append({"job": task.job, "task": task.index, "address": task.address,
                          "state": task.state,
                          "devices": [d.replace(" (emulated)", "")
                                      for d in task_devices(cluster, task)],
                          "steps_run": health.steps_run if health else 0})
        return {"name": cluster.name, "tasks": tasks}


def _server_task(server):
    server_def = server.server_def
    return {"job": server_def.job_name, "task": server_def.task_index,
            "address": server.target.removeprefix("grpc://"),
            "state": "stopped" if server.stopped.is_set() else "serving",
            "devices": sorted(server.master.local_device_names()),
            "steps_run": server.master.steps_run}
