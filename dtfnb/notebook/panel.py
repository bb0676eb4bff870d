"""The kernel side of the JupyterLab panel's comm (docs/panel-protocol.md).

The panel shows what this kernel knows: its LocalClusters and in-process servers with
their tasks and what each did, the sessions with their recent runs and the plans those
ran (where each op ran, the tensors that crossed devices), and queue fill levels; what
stopped, greyed with the time it stopped. `Panel.start()`
registers the comm target "dtfnb.panel" and opens a comm to the frontend; from then on
every open comm gets the whole state as a snapshot on "hello" or "refresh", and a comm
that has spoken (a panel listens on it) whenever the state changes, at most 5 times a
second: a kernel that no panel listens to (nbval, a plain Jupyter) sends one snapshot.
"""

import json
import threading
import time

import comm

from dtfnb.client.session import BaseSession
from dtfnb.distributed_runtime.server_lib import Server
from dtfnb.launch import live_clusters
from dtfnb.notebook import palette
from dtfnb.notebook.state import CELLS, Queues, Runs, Stops, Work, device_dict, hh_mm
from dtfnb.notebook.stream import Feed, event_streams
from dtfnb.notebook.widgets.cluster import task_devices

TARGET = "dtfnb.panel"
VERSION = 2
_KINDS = ("plan", "step", "queue", "health")
_CHECK_SECONDS = 0.2   # at most 5 snapshots a second
_SERVERS = "servers in this kernel"


class Panel:
    """The state behind the panel, folded from the event streams of every LocalCluster of
    this kernel and of the tf.train.Servers and tf.Sessions its user variables hold, and
    the comms it is sent on. What stopped stays shown, greyed with its time, until a
    cluster of its name starts again; stopped servers fold into a count."""

    def __init__(self, shell):
        self._shell = shell
        self._comms = []
        self._listening = []       # the comms a panel has spoken on
        self._feeds = {}           # key of a source -> Feed
        self._lock = threading.Lock()
        self.stops, self.work = Stops(), Work()
        self.runs, self.queues = Runs(self.stops), Queues(self.stops)
        self._clusters = {}        # name -> [LocalCluster, time it stopped or None]
        self._server_stops = {}    # id of a stopped Server -> when it was first seen so
        self._sent = None
        self._stopped = threading.Event()
        self._thread = None
        self._unwatch_cells = None

    def start(self):
        """Opens the panel's comm, sends the first snapshot, and starts the thread that sends
        changes."""
        comm.get_comm_manager().register_target(TARGET, self._opened_by_frontend)
        self._unwatch_cells = CELLS.watch(self._shell)
        snapshot = self.snapshot()
        self._add(comm.create_comm(target_name=TARGET, data=snapshot))
        self._thread = threading.Thread(target=self._send_changes, daemon=True,
                                        name="dtfnb-panel")
        self._thread.start()

    def stop(self):
        """Stops sending changes and closes the panel's comms."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(5.0)
        comm.get_comm_manager().unregister_target(TARGET, self._opened_by_frontend)
        if self._unwatch_cells is not None:
            self._unwatch_cells()
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
        channel.on_close(lambda _: self._drop(channel))

    def _drop(self, channel):
        for comms in (self._comms, self._listening):
            if channel in comms:
                comms.remove(channel)

    def _received(self, channel, message):
        data = message["content"]["data"] or {}
        if data.get("type") in ("hello", "refresh"):
            if channel not in self._listening:
                self._listening.append(channel)
            self._send(self.snapshot())
        elif data.get("type") == "close":
            # The panel's way to close a comm (the kernel opened one while the panel's hello
            # was on its way): its own comm_close would go to a subshell that JupyterLab
            # deletes at once, and ipykernel would print "Task was destroyed but it is
            # pending!" into the running cell.
            channel.close()
            self._drop(channel)

    def _send(self, snapshot):
        self._sent = json.dumps(snapshot, sort_keys=True)
        for channel in list(self._listening):
            channel.send(snapshot)

    def _send_changes(self):
        while not self._stopped.wait(_CHECK_SECONDS):
            self._watch_sources()
            if not self._listening:
                continue   # the feeds keep folding; a hello gets it all
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
                for state in (self.stops, self.work, self.runs, self.queues):
                    state.apply(event)

    def snapshot(self):
        """The protocol's snapshot (version 2) of everything this kernel knows now."""
        with self._lock:
            clusters = [self._cluster(*entry) for entry in self._note_clusters()]
            servers = self._servers()
            if servers is not None:
                clusters.append(servers)
            for session in self._user_objects(BaseSession):
                self.runs.targets[session._handle] = session.sess_str or "in-process"
            devices = self.runs.devices()   # name -> emulated
            for cluster, _ in self._clusters.values():
                for task in cluster.tasks:
                    devices.update(_devices(cluster, task))
            for task in servers["tasks"] if servers else ():
                devices.update(dict.fromkeys(task["devices"], False))
            queues = self.queues.as_list()
            devices.update({q["device"]: devices.get(q["device"], False) for q in queues})
            return {"type": "snapshot", "version": VERSION, "clusters": clusters,
                    "devices": [device_dict(name, self.stops, emulated) for name, emulated
                                in sorted(devices.items(), key=lambda d: palette.sort_key(d[0]))],
                    "sessions": self.runs.session_dicts(), "plans": self.runs.plan_dicts(),
                    "queues": queues}

    def _note_clusters(self):
        """The LocalClusters seen, a stopped one until another of its name starts: noted
        with when it stopped, and their tasks' states in `stops`."""
        live = live_clusters()
        for cluster in live:
            entry = self._clusters.get(cluster.name)
            if entry is None or entry[0] is not cluster:
                self._clusters[cluster.name] = [cluster, None]
        for entry in self._clusters.values():
            if entry[1] is None and entry[0] not in live:
                entry[1] = time.time()
        for cluster, _ in self._clusters.values():
            for task in cluster.tasks:
                self.stops.saw(task.name, task.state)
                self.runs.addresses[task.name] = cluster.target(task.job, task.index)
        return list(self._clusters.values())

    def _cluster(self, cluster, stopped):
        tasks = [self._task(task.job, task.index, task.address, task.state,
                            list(_devices(cluster, task)), task.emulated)
                 for task in cluster.tasks]
        return {"name": cluster.name, "state": "serving" if stopped is None else "stopped",
                "stopped_at": None if stopped is None else hh_mm(stopped), "tasks": tasks,
                "folded": 0}

    def _task(self, job, index, address, state, devices, emulated):
        name = f"/job:{job}/replica:0/task:{index}"
        return {"job": job, "task": index, "address": address, "state": state,
                "devices": devices, "work": self.work.work(name),
                "stopped_at": self.stops.stopped_at(name), "emulated": emulated}

    def _servers(self):
        """The tf.train.Servers of the user's variables as one cluster, the stopped ones
        folded into a count; None when there is none."""
        servers = sorted(self._user_objects(Server), key=lambda s: (
            s.server_def.job_name, s.server_def.task_index))
        if not servers:
            return None
        live = [s for s in servers if not s.stopped.is_set()]
        for server in servers:
            if server not in live:
                self._server_stops.setdefault(id(server), time.time())
                self.stops.saw(server.events.task, "stopped", self._server_stops[id(server)])
        tasks = []
        for server in live:   # after the stopped ones: a live task of the same name wins
            self.stops.saw(server.events.task, "serving")
            self.runs.addresses[server.events.task] = server.target
            server_def = server.server_def
            tasks.append(self._task(server_def.job_name, server_def.task_index,
                                    server.target.removeprefix("grpc://"), "serving",
                                    sorted(server.master.local_device_names()),
                                    server.emulated.description))
        stopped = None if live else max(self._server_stops[id(s)] for s in servers)
        return {"name": _SERVERS, "state": "stopped" if stopped else "serving",
                "stopped_at": hh_mm(stopped) if stopped else None, "tasks": tasks,
                "folded": len(servers) - len(live)}


def _devices(cluster, task):
    """{device name: emulated or not} of a LocalCluster's task."""
    return {d.removesuffix(" (emulated)"): d.endswith(" (emulated)")
            for d in task_devices(cluster, task)}
