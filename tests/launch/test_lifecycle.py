"""One lifecycle under every launcher (conftest.LAUNCHERS): start, a session across
tasks, state, logs, kill (dead, its last lines kept), restart, stop; and no task outlives
a client killed with SIGKILL. "No process behind" is read from the process table: no
process (task, ssh channel) names the cluster's addresses any more, and none but sshd
runs in the hosts' namespaces (ssh-namespaces)."""

import importlib
import itertools
import json
import os
import select
import signal
import subprocess
import sys

import dtfnb as tf
from dtfnb.launch import Cluster
from dtfnb.launch.cluster import addresses
from tests.helpers import poll_for

JOBS = {"ps": 1, "worker": 2}
_CLIENT = """
import importlib, json, sys, time
from dtfnb.launch import Cluster
module, name = sys.argv[1].split(":")
launcher = getattr(importlib.import_module(module), name)(**json.loads(sys.argv[2]))
cluster = Cluster(json.loads(sys.argv[3]), launcher)
print(json.dumps([cluster.pid(t.job, t.index) for t in cluster.tasks]), flush=True)
time.sleep(60)
"""


def _launcher(recipe):
    module, name = recipe.launcher.split(":")
    return getattr(importlib.import_module(module), name)(**recipe.options)


def _spec(recipe, launcher):
    """Task counts where the launcher picks addresses, port 2222 of the recipe's hosts in
    turn where it has hosts, else free ports on 127.0.0.1."""
    if launcher.picks_addresses:
        return JOBS
    if recipe.hosts:
        hosts = itertools.cycle(recipe.hosts)
        return {job: [f"{next(hosts)}:2222" for _ in range(n)] for job, n in JOBS.items()}
    return addresses(JOBS)


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _naming(addresses):
    """The live processes whose command line names any of `addresses`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().decode(errors="replace")
        except OSError:
            continue
        if any(address in command for address in addresses) and _running(pid):
            found.append((int(pid), command.replace("\0", " ")[:200]))
    return found


def _addresses(cluster):
    return [task.address for task in cluster.tasks]


def _computes(cluster):
    """A variable on the ps, read and changed from each worker: a session across tasks."""
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    outputs = []
    for index in range(2):
        with tf.device(f"/job:worker/task:{index}"):
            outputs.append(v.assign_add(v * 2.0))
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        return [float(sess.run(out)) for out in outputs]


def test_lifecycle(recipe):
    launcher = _launcher(recipe)
    cluster = Cluster(_spec(recipe, launcher), launcher, name="life", progress=False)
    try:
        assert [cluster.state(t.job, t.index) for t in cluster.tasks] == ["serving"] * 3
        if recipe.hosts:   # each task runs on the host its address names
            host_of = {pid: host for host, pids in recipe.strays().items() for pid in pids}
            assert [host_of.get(cluster.pid(t.job, t.index)) for t in cluster.tasks] == \
                [t.address.rpartition(":")[0] for t in cluster.tasks]
        assert _computes(cluster) == [3.0, 9.0]
        assert "/job:worker/replica:0/task:1 serving at grpc://" in cluster.logs("worker", 1)

        pid = cluster.pid("worker", 1)
        cluster.kill("worker", 1)
        assert cluster.state("worker", 1) == "dead" and not _running(pid)
        assert "/job:worker/replica:0/task:1 serving at" in cluster.logs("worker", 1)
        assert "1 dead, 2 serving" in repr(cluster)

        cluster.restart("worker", 1)
        assert cluster.state("worker", 1) == "serving" and cluster.pid("worker", 1) != pid
        assert _computes(cluster) == [3.0, 9.0]
        pids = [cluster.pid(t.job, t.index) for t in cluster.tasks]
    finally:
        cluster.stop()
    assert [cluster.state(t.job, t.index) for t in cluster.tasks] == ["stopped"] * 3
    assert not [pid for pid in pids if _running(pid)]
    assert not _naming(_addresses(cluster))
    assert poll_for(lambda: not recipe.strays(), timeout=5), recipe.strays()
    assert "/job:ps/replica:0/task:0 stopped" in cluster.logs("ps")


def test_no_task_outlives_a_killed_client(recipe):
    spec = _spec(recipe, _launcher(recipe))
    client = subprocess.Popen(
        [sys.executable, "-c", _CLIENT, recipe.launcher, json.dumps(recipe.options),
         json.dumps(spec)],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready, _, _ = select.select([client.stdout], [], [], 60)
        pids = json.loads(client.stdout.readline() or "[]") if ready else []
        assert len(pids) == 3 and all(_running(pid) for pid in pids)
        cluster_addresses = [a for tasks in spec.values() if isinstance(tasks, list)
                             for a in tasks]
    finally:
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
        client.stdout.close()
    assert poll_for(lambda: not any(_running(pid) for pid in pids), timeout=15), \
        [pid for pid in pids if _running(pid)]
    assert poll_for(lambda: not _naming(cluster_addresses), timeout=5), \
        _naming(cluster_addresses)
    assert poll_for(lambda: not recipe.strays(), timeout=5), recipe.strays()
