"""LocalCluster: task processes started, used, killed, restarted and stopped from Python."""

import os
import signal
import socket

import pytest

import dtfnb as tf
from dtfnb.launch import live_clusters
from dtfnb.launch.forkserver import fork_server
from dtfnb.notebook import LocalCluster
from tests.helpers import chapter_pinning_graph, poll_for
from tests.notebook.kernel_util import running


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster({"ps": 2, "worker": 3}, progress=False) as cluster:
        yield cluster


def test_runs_the_chapter_on_five_processes(cluster):
    assert cluster.spec.jobs == ["ps", "worker"]
    assert [t.name for t in cluster.tasks][-1] == "/job:worker/replica:0/task:2"
    assert cluster.target("worker", 1) == f"grpc://{cluster.spec.task_address('worker', 1)}"
    assert cluster.target("worker", 1).startswith("grpc://127.0.0.1:")
    pids = {cluster.pid(t.job, t.index) for t in cluster.tasks}
    assert len(pids) == 5 and os.getpid() not in pids
    assert repr(cluster) == "<LocalCluster 'cluster' (ps: 2, worker: 3): 5 serving>"
    a, c = chapter_pinning_graph()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(a.initializer)
        assert sess.run(c) == 4.0
    # Masters in sibling processes name their steps apart, as fresh processes would.
    with tf.Session(cluster.target("worker", 2)) as sess:
        assert sess.run(a.assign_add(10.0)) == 11.0
    assert cluster in live_clusters()


def test_kill_restart_and_logs():
    with LocalCluster({"ps": 1, "worker": 1}, progress=False) as cluster:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(5.0, name="v")
        pid = cluster.pid("ps")
        cluster.kill("ps")
        assert cluster.state("ps") == "dead" and not running(pid)
        assert repr(cluster) == "<LocalCluster 'cluster' (ps: 1, worker: 1): 1 dead, 1 serving>"
        cluster.restart("ps")
        assert cluster.state("ps") == "serving" and cluster.pid("ps") != pid
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert sess.run(v) == 5.0
        log = cluster.logs("ps")
        assert "/job:ps/replica:0/task:0 serving at grpc://127.0.0.1:" in log
        with pytest.raises(ValueError, match="No task 7 of job 'ps'"):
            cluster.logs("ps", 7)


def test_tasks_read_files_as_this_process_would(tmp_path, monkeypatch):
    fork_server()   # started before the change of directory, which its tasks follow
    (tmp_path / "lines.txt").write_text("first\nsecond\n")
    monkeypatch.chdir(tmp_path)
    with LocalCluster({"worker": 1}, progress=False) as cluster:
        with tf.device("/job:worker/task:0"):
            files = tf.train.string_input_producer(["lines.txt"], num_epochs=1,
                                                   shuffle=False)
            _, line = tf.TextLineReader().read(files)
        with tf.Session(cluster.target("worker")) as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert [sess.run(line), sess.run(line)] == [b"first", b"second"]
            coord.request_stop()
            coord.join(threads)


def test_stop_ends_every_process_and_frees_the_ports():
    cluster = LocalCluster({"worker": 2}, name="small", cpus=2, gpus=1, progress=False)
    pids = [cluster.pid("worker", i) for i in range(2)]
    with tf.device("/job:worker/task:1/gpu:0"):
        x = tf.constant(1.0) * 3
    with tf.Session(cluster.target("worker", 0)) as sess:
        assert sess.run(x) == 3.0
        names = [d.name for d in sess.list_devices()]
    assert "/job:worker/replica:0/task:1/device:GPU:0" in names
    assert "/job:worker/replica:0/task:0/device:CPU:1" in names
    cluster.stop()
    assert [cluster.state("worker", i) for i in range(2)] == ["stopped", "stopped"]
    assert not any(running(pid) for pid in pids)
    assert cluster not in live_clusters()
    ours = {os.getpid(), fork_server().process.pid, *pids}
    for task in cluster.tasks:   # the ports are free again: none of ours holds one
        port = int(task.address.rsplit(":", 1)[1])
        assert not _listeners(port) & ours, f"port {port} is still held"
    assert "stopped" in cluster.logs("worker", 0)


def _listeners(port):
    """The pids of the processes with a TCP socket listening on `port` (from /proc: other
    tests, running beside this one, may take a freed port)."""
    inodes = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    holders = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in inodes
                   for fd in os.listdir(f"/proc/{pid}/fd")):
                holders.add(int(pid))
        except OSError:   # gone meanwhile, or not ours to read
            continue
    return holders


def test_addresses_from_a_spec_ports_or_a_port_base():
    spec = LocalCluster({"ps": ["127.0.0.1:2221"], "worker": ["localhost:2222"]},
                        start=False).spec
    assert spec.as_dict() == {"ps": ["127.0.0.1:2221"], "worker": ["localhost:2222"]}
    by_base = LocalCluster({"ps": 1, "worker": 2}, port_base=3300, start=False)
    assert by_base.spec.as_dict() == {"ps": ["127.0.0.1:3300"],
                                      "worker": ["127.0.0.1:3301", "127.0.0.1:3302"]}
    by_ports = LocalCluster({"ps": 1, "worker": 1}, ports=[4000, 4010], start=False)
    assert by_ports.target("worker") == "grpc://127.0.0.1:4010"
    assert by_ports.state("ps") == "stopped"
    same = LocalCluster(tf.train.ClusterSpec({"w": ["127.0.0.1:5000"]}), start=False)
    assert same.spec.as_dict() == {"w": ["127.0.0.1:5000"]}


@pytest.mark.parametrize("spec, kwargs, error, match", [
    ({"ps": ["10.0.0.1:2222"]}, {}, ValueError, "on this machine only"),
    ({"ps": 1}, {"host": "example.com"}, ValueError, "on this machine only"),
    ({"ps": 1, "worker": ["127.0.0.1:1"]}, {}, ValueError, "not a mix"),
    ({"ps": 0}, {}, ValueError, "at least one task"),
    ({"ps": 2}, {"ports": [1]}, ValueError, "1 ports given for 2 tasks"),
    ({"ps": 2}, {"ports": [1, 2], "port_base": 5}, ValueError, "not both"),
    ({"ps": ["127.0.0.1:1"]}, {"port_base": 5}, ValueError, "apply to task counts"),
    ({"ps": 1}, {"gpus": -1}, ValueError, "gpus >= 0"),
    ({"bad name": 1}, {}, ValueError, "Invalid job name"),
    ({"ps": 1}, {"link": "100MB"}, ValueError, "'100MB' is not a bandwidth"),
    ({"ps": 1}, {"slow": {"worker": "x3"}}, ValueError, "'worker', which is no job or task"),
    ({"ps": 1}, {"links": {"ps:1": "1Gbit"}}, ValueError, "'ps:1', which is no job or task"),
    (["ps"], {}, TypeError, "job name to task count"),
])
def test_bad_clusters_are_refused(spec, kwargs, error, match):
    with pytest.raises(error, match=match):
        LocalCluster(spec, start=False, **kwargs)


def test_a_task_that_cannot_start_is_reported_with_its_output():
    with socket.socket() as taken:   # bound, not listening: the task cannot bind it
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(tf.errors.UnavailableError,
                           match=r"/job:ps/replica:0/task:0 exited with code .* its last "):
            LocalCluster({"ps": 1}, ports=[port], progress=False)
    assert not [c for c in live_clusters() if c.name == "cluster" and c.spec.jobs == ["ps"]]


def test_a_port_another_process_answers_on_does_not_pass_for_the_task():
    """A port picked free can be taken before the task binds it. Whoever answers there
    is not the task, which fails to start and says why."""
    with socket.socket() as other:   # listening: a connection to it succeeds
        other.bind(("127.0.0.1", 0))
        other.listen()
        with pytest.raises(tf.errors.UnavailableError,
                           match=r"/job:ps/replica:0/task:0 exited with code .* its last "):
            LocalCluster({"ps": 1}, ports=[other.getsockname()[1]], progress=False)


def test_a_cluster_on_ports_it_picked_picks_again_when_one_is_taken(monkeypatch):
    """The same race on ports the cluster picked itself: it starts on others."""
    from dtfnb.launch import cluster as launching

    picks = []

    def pick(n):   # the first pick's first port is taken before its task binds it
        addresses = real_pick(n)
        if not picks:
            addresses[0] = f"127.0.0.1:{other.getsockname()[1]}"
        picks.append(addresses)
        return addresses

    real_pick = launching.local_addresses
    monkeypatch.setattr(launching, "local_addresses", pick)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        with LocalCluster({"ps": 1, "worker": 1}, progress=False) as cluster:
            assert len(picks) == 2
            assert cluster.spec.as_dict() == {"ps": picks[1][:1], "worker": picks[1][1:]}
            assert "cannot bind" in cluster.logs("ps")
            with tf.Graph().as_default():
                with tf.device("/job:ps/task:0"):
                    v = tf.Variable(1.0)
                with tf.device("/job:worker/task:0"):
                    doubled = v * 2
                with tf.Session(cluster.target("worker")) as sess:
                    sess.run(v.initializer)
                    assert sess.run(doubled) == 2.0


def test_tasks_end_with_their_fork_server_and_a_new_one_takes_over():
    cluster = LocalCluster({"worker": 2}, progress=False)
    pids = [cluster.pid("worker", i) for i in range(2)]
    os.kill(fork_server().process.pid, signal.SIGKILL)
    assert poll_for(lambda: cluster.state("worker", 1) == "dead")
    assert poll_for(lambda: not any(running(pid) for pid in pids), timeout=10)
    cluster.restart("worker", 1)   # on a new fork server
    assert cluster.state("worker", 1) == "serving" and cluster.state("worker", 0) == "dead"
    cluster.stop()
    assert cluster.state("worker", 1) == "stopped"
