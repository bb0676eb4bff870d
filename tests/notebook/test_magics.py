"""%%cluster and %cluster in an IPython shell of this process (the fast tests); the
real kernel is in test_kernel.py."""

import sys
import time

import pytest
from IPython.core.error import UsageError

import dtfnb as tf
from dtfnb.distributed_runtime.cluster import local_addresses
from dtfnb.launch import live_clusters
from dtfnb.notebook.launcher import LocalCluster
from dtfnb.notebook.magics import parse_cluster


@pytest.mark.parametrize("body, cluster", [
    ("ps: 2\nworker: 3\n", {"ps": 2, "worker": 3}),
    ("# the chapter's jobs\n\n  ps : 1\nworker:2", {"ps": 1, "worker": 2}),
    ("ps: 127.0.0.1:2221, 127.0.0.1:2222", {"ps": ["127.0.0.1:2221", "127.0.0.1:2222"]}),
    ('{"ps": ["127.0.0.1:2221"],\n "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]}',
     {"ps": ["127.0.0.1:2221"], "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]}),
    ("{'ps': 1, 'worker': 2}", {"ps": 1, "worker": 2}),
])
def test_cluster_bodies(body, cluster):
    assert parse_cluster(body) == cluster


@pytest.mark.parametrize("body, match", [
    ("", "needs a cluster"),
    ("# nothing\n", "needs a cluster"),
    ("{'ps': __import__('os').getpid()}", "not a dict literal"),
    ("{'ps': 1} | {}", "not a dict literal"),
    ("{'ps': [1]}, 2", "must be one dict"),
    ("ps 2", "Cannot read 'ps 2'"),
    ("ps: 1\nps: 2", "Job 'ps' is given twice"),
])
def test_bad_cluster_bodies(body, match):
    with pytest.raises(UsageError, match=match):
        parse_cluster(body)


def test_cluster_magic_binds_a_cluster_and_lists_it(shell, capsys):
    shell.run_cell_magic("cluster", "--name small --cpus 2", "worker: 2\n")
    cluster = shell.user_ns["small"]
    assert isinstance(cluster, LocalCluster) and cluster in live_clusters()
    assert cluster.cpus == 2 and [t.state for t in cluster.tasks] == ["serving", "serving"]
    x = tf.constant(2.0, name="x") * 3
    with tf.Session(cluster.target("worker", 1)) as sess:
        assert sess.run(x) == 6.0
    capsys.readouterr()
    shell.run_line_magic("cluster", "list")
    assert "<LocalCluster 'small' (worker: 2): 2 serving>" in capsys.readouterr().out
    shell.run_line_magic("cluster", "status small")
    status = capsys.readouterr().out
    assert "/job:worker/replica:0/task:1  serving" in status
    assert cluster.target("worker", 1) in status
    shell.run_line_magic("cluster", "logs worker 1 --name small")
    assert "/job:worker/replica:0/task:1 serving at" in capsys.readouterr().out
    first = cluster.pid("worker", 0)
    shell.run_cell_magic("cluster", "--name small", "worker: 1\n")   # replaces it
    assert cluster.state("worker", 0) == "stopped" and cluster not in live_clusters()
    assert shell.user_ns["small"].pid("worker", 0) != first
    shell.run_line_magic("cluster", "stop small")
    assert shell.user_ns["small"].state("worker") == "stopped"
    with pytest.raises(UsageError, match="No cluster 'small' is running"):
        shell.run_line_magic("cluster", "status small")


def test_cluster_magic_on_given_ports_and_the_chapters_dict(shell):
    ports = [a.rsplit(":", 1)[1] for a in local_addresses(4)]
    shell.run_cell_magic("cluster", f"--name fixed --ports {ports[0]},{ports[1]} --gpus 1",
                         "ps: 1\nworker: 1")
    fixed = shell.user_ns["fixed"]
    assert fixed.target("worker") == f"grpc://127.0.0.1:{ports[1]}"
    with tf.device("/job:worker/task:0/gpu:0"):
        y = tf.constant(1.0) + 1
    with tf.Session(fixed.target("ps")) as sess:
        assert sess.run(y) == 2.0
    body = f"{{'ps': ['127.0.0.1:{ports[2]}'], 'worker': ['127.0.0.1:{ports[3]}']}}"
    shell.run_cell_magic("cluster", "--name chapter", body)
    assert shell.user_ns["chapter"].spec.as_dict() == parse_cluster(body)
    shell.run_line_magic("cluster", "stop --all")
    assert not live_clusters()


@pytest.mark.parametrize("line, body, match", [
    ("--name 2x", "ps: 1", "not a Python variable name"),
    ("--ports a,b", "ps: 2", "give numbers"),
    ("--ports 1", "ps: 2", "1 ports given for 2 tasks"),
    ("--cpus", "ps: 1", "expected one argument"),
    ("--nope", "ps: 1", "unrecognized arguments"),
    ("", "ps: 10.1.1.1:2222", "on this machine only"),
])
def test_bad_options_are_usage_errors(shell, line, body, match):
    with pytest.raises(UsageError, match=match):
        shell.run_cell_magic("cluster", line, body)


def test_line_commands(shell, capsys):
    shell.run_line_magic("cluster", "stop --all")
    shell.run_line_magic("cluster", "list")
    assert capsys.readouterr().out == "No cluster is running.\n"
    with pytest.raises(UsageError, match="start one with %%cluster"):
        shell.run_line_magic("cluster", "stop")
    with pytest.raises(UsageError, match="invalid choice"):
        shell.run_line_magic("cluster", "restart")


def test_cluster_magic_emulates_links_and_slow_tasks(shell, capsys):
    shell.run_cell_magic("cluster", "--name emulated --link 100Mbit,2ms --link ps:0=1Gbit "
                         "--slow worker=+20ms --slow worker:1=x3", "ps: 1\nworker: 2\n")
    cluster = shell.user_ns["emulated"]
    assert [(t.link, t.slow) for t in cluster.tasks] == [
        ("1Gbit", None), ("100Mbit,2ms", "+20ms"), ("100Mbit,2ms", "x3")]
    assert repr(cluster) == ("<LocalCluster 'emulated' (ps: 1, worker: 2): 3 serving; "
                             "emulated: ps:0 1 Gbit/s; worker:0 100 Mbit/s, 2 ms · +20 ms/step; "
                             "worker:1 100 Mbit/s, 2 ms · x3 compute>")
    capsys.readouterr()
    shell.run_line_magic("cluster", "status emulated")
    status = capsys.readouterr().out
    assert ("/job:worker/replica:0/task:0  serving   "
            f"{cluster.target('worker', 0)}  emulated: 100 Mbit/s, 2 ms · +20 ms/step") in status
    with tf.device("/job:worker/task:0"):
        y = tf.constant(1.0) + 1
    with tf.Session(cluster.target("worker", 0)) as sess:
        for _ in range(3):
            start = time.perf_counter()
            assert sess.run(y) == 2.0
            assert time.perf_counter() - start >= 0.020
    for line, match in [("--link fast", "'fast' is not a bandwidth"),
                        ("--slow x3", "name the task or job"),
                        ("--slow chief=x3", "'chief', which is no job or task")]:
        with pytest.raises(UsageError, match=match):
            shell.run_cell_magic("cluster", f"--name refused {line}", "ps: 1\nworker: 2\n")
    shell.run_line_magic("cluster", "stop emulated")


def test_cluster_magic_starts_tasks_over_ssh(shell, sshd, capsys):
    options = sshd.options
    shell.run_cell_magic(
        "cluster", f"--name remote --launcher ssh --python {sys.executable} --ssh-user "
        f"{options['user']} --ssh-port {options['port']} --ssh-identity "
        f"{options['identity']} --ssh-option {options['options'][0]}", "worker: 1\n")
    cluster = shell.user_ns["remote"]
    x = tf.constant(2.0, name="x") * 5
    with tf.Session(cluster.target("worker")) as sess:
        assert sess.run(x) == 10.0
    capsys.readouterr()
    shell.run_line_magic("cluster", "list")
    assert "<Cluster 'remote' (worker: 1) via ssh: 1 serving>" in capsys.readouterr().out
    shell.run_line_magic("cluster", "stop remote")
    assert cluster.state("worker") == "stopped"


def test_ssh_options_need_the_ssh_launcher(shell):
    with pytest.raises(UsageError, match="--python, --ssh-port: not with --launcher local"):
        shell.run_cell_magic("cluster", "--python python3 --ssh-port 22", "worker: 1\n")
    with pytest.raises(UsageError, match="--ssh-user: not with --launcher srun"):
        shell.run_cell_magic("cluster", "--launcher srun --ssh-user me", "worker: 1\n")


def test_cluster_magic_runs_tasks_as_a_slurm_step(shell, slurm, capsys):
    shell.run_cell_magic("cluster", "--name step --launcher srun", "ps: 1\nworker: 2\n")
    cluster = shell.user_ns["step"]
    with tf.device("/job:ps/task:0"):
        x = tf.constant(2.0) * 5
    with tf.Session(cluster.target("worker", 1)) as sess:
        assert sess.run(x) == 10.0
    capsys.readouterr()
    shell.run_line_magic("cluster", "list")
    assert "<Cluster 'step' (ps: 1, worker: 2) via srun: 3 serving>" in capsys.readouterr().out
    shell.run_line_magic("cluster", "stop step")
    assert cluster.state("worker") == "stopped"


def test_cluster_magic_previews_a_batch_job(shell, capsys):
    shell.run_cell_magic("cluster", "--launcher sbatch --job-script --port-base 30000 "
                         "--slurm-option=--time=00:05:00", "ps: 1\nworker: 2\n")
    script = capsys.readouterr().out
    assert "#SBATCH --ntasks=3\n#SBATCH --output=" in script
    assert "#SBATCH --time=00:05:00\n" in script
    assert "'--jobs' 'ps=1,worker=2' '--port-base' '30000'" in script
    assert "cluster" not in shell.user_ns
    for line, body, match in [("--launcher srun", "worker: localhost:2222", "task counts"),
                              ("--launcher sbatch --ports 1", "worker: 1", "no --host"),
                              ("--launcher srun --job-script", "worker: 1", "--job-script: "
                               "not with --launcher srun")]:
        with pytest.raises(UsageError, match=match):
            shell.run_cell_magic("cluster", line, body)
