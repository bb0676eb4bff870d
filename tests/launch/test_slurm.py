"""What the Slurm launchers add to the lifecycle suite (test_lifecycle.py runs them too):
the batch script previewed is the one submitted, roles from SLURM_PROCID in rank order,
the cluster token and TLS material over srun's stdin or in a file of the owner's only
(never in a task's argv or environment), and a batch job that ends with its cluster.
Against a real single-node Slurm (the `slurm` fixture, tests/launch/slurm.py)."""

import os
import stat
import subprocess
import sys
import time

import pytest

import dtfnb as tf
from dtfnb.launch import Cluster
from dtfnb.launch.slurm import SbatchLauncher, SrunLauncher
from tests.distributed.test_transport_security import certificates, use_tls  # noqa: F401
from tests.helpers import poll_for
from tests.launch.test_ssh import _holders

JOBS = {"ps": 1, "worker": 2}
TOKEN = "slurm-secret-7c2e"


def test_job_script_runs_one_task_per_slurm_task_in_rank_order(tmp_path):
    launcher = SbatchLauncher(directory=tmp_path, port_base=40000,
                              options=["--time=00:10:00"], python="/opt/venv/bin/python")
    script = launcher.job_script(JOBS)
    assert "#SBATCH --ntasks=3\n" in script
    assert "#SBATCH --time=00:10:00\n" in script
    [tasks] = [line for line in script.splitlines() if line.startswith("0-2 ")]
    assert ("'/opt/venv/bin/python' '-m' 'dtfnb.server' '--jobs' 'ps=1,worker=2' "
            "'--port-base' '40000'") in tasks
    assert f"--multi-prog {tmp_path / 'tasks.conf'}" in script
    assert launcher.job_script(JOBS) == script   # the ports it shows are the ones it uses


def test_srun_gives_roles_by_rank_on_consecutive_ports(slurm):
    launcher = SrunLauncher()
    with Cluster(JOBS, launcher) as cluster:
        base = launcher.port_base
        assert cluster.spec.as_dict() == {
            "ps": [f"localhost:{base}"],
            "worker": [f"localhost:{base + 1}", f"localhost:{base + 2}"]}
        with tf.Session(cluster.target("worker", 1)) as sess:
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0)
            sess.run(v.initializer)
            assert sess.run(v * 3.0) == 6.0


_IN_ALLOCATION = """
import os
import dtfnb as tf
from dtfnb.launch import Cluster, SrunLauncher
with Cluster({"ps": 1, "worker": 2}, SrunLauncher()) as cluster:
    cluster.kill("worker", 0)
    cluster.restart("worker", 0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        print(sess.run(tf.constant(2.0) * 3.0))
    print(os.environ["SLURM_JOB_ID"], *[task.process.job_id for task in cluster.tasks])
"""


def test_srun_runs_its_step_in_the_allocation_it_runs_in(slurm):
    # salloc runs the client with the allocation's SLURM_JOB_ID, as a notebook started in it.
    result = subprocess.run(["salloc", "--ntasks=3", sys.executable, "-c", _IN_ALLOCATION],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    product, jobs = result.stdout.splitlines()
    assert product == "6.0"
    assert len(set(jobs.split())) == 1   # the step, and the task restarted alone, are in it


def test_srun_hands_the_secrets_to_every_task_on_its_stdin(slurm, certificates,  # noqa: F811
                                                          monkeypatch):
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", TOKEN)
    use_tls(monkeypatch, certificates)
    key = (certificates / "task.key").read_bytes().splitlines()[1]
    with Cluster(JOBS, SrunLauncher()) as cluster:
        with tf.Session(cluster.target("worker", 1)) as sess:   # over TLS, with the token
            assert sess.run(tf.constant(2.0) * 2.0) == 4.0
        for task in cluster.tasks:
            assert not _holders(cluster.pid(task.job, task.index), [TOKEN.encode(), key])
        cluster.restart("worker", 0)   # a step of its own, with the secrets on its stdin
        assert not _holders(cluster.pid("worker", 0), [TOKEN.encode(), key])
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0


def test_sbatch_submits_its_preview_and_hands_the_token_over_in_a_file(slurm, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", TOKEN)
    launcher = SbatchLauncher(directory=tmp_path)
    cluster = Cluster(JOBS, launcher, cpus=2, start=False)
    preview = launcher.job_script(cluster)
    assert "'--cpus' '2'" in preview
    with cluster:
        cluster.start()
        assert (tmp_path / "job.sh").read_text() == preview
        assert TOKEN not in preview
        assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o600
        assert launcher.job_id in slurm.jobs()
        # The tasks hold the token: this process's session (with it) runs; one without is
        # refused.
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(tf.constant(1.0) + 1.0) == 2.0
        monkeypatch.delenv("DTFNB_CLUSTER_TOKEN")
        with pytest.raises(tf.errors.UnauthenticatedError):
            with tf.Session(cluster.target("worker", 0)) as sess:
                sess.run(tf.constant(1.0))
        pids = [cluster.pid(task.job, task.index) for task in cluster.tasks]
        assert not [part for pid in pids for part in _holders(pid, [TOKEN.encode()])]
    assert poll_for(lambda: launcher.job_id not in slurm.jobs(), timeout=10)
    assert not (tmp_path / "secrets").exists()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)


def test_a_task_that_fails_to_start_shows_why(slurm):
    launcher = SrunLauncher(python="/nonexistent/python")
    with pytest.raises(tf.errors.UnavailableError, match="exited with code 127"):
        Cluster(JOBS, launcher)
    assert poll_for(lambda: slurm.jobs() == [], timeout=10), slurm.jobs()


def test_a_job_still_queued_at_the_deadline_is_cancelled(slurm, tmp_path):
    launcher = SbatchLauncher(directory=tmp_path, options=["--begin=now+1hour"])
    started = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="did not answer"):
        Cluster(JOBS, launcher, timeout=2.0)
    assert time.monotonic() - started < 10.0
    assert poll_for(lambda: launcher.job_id not in slurm.jobs(), timeout=10)


def test_a_task_restarts_alone_after_its_batch_job_ended(slurm, tmp_path):
    launcher = SbatchLauncher(directory=tmp_path)
    with Cluster(JOBS, launcher) as cluster:
        first_job = launcher.job_id
        for task in cluster.tasks:   # the job's every task gone: the job ends
            cluster.kill(task.job, task.index)
        assert poll_for(lambda: first_job not in slurm.jobs(), timeout=10)
        cluster.restart("ps", 0)   # in a job of its own, on the same node
        assert cluster.state("ps", 0) == "serving"
        with tf.device("/job:ps/task:0"):
            total = tf.constant(1.0) + 1.0
        alone = tf.ConfigProto(device_filters=["/job:ps"])   # the workers stay dead
        with tf.Session(cluster.target("ps", 0), config=alone) as sess:
            assert sess.run(total) == 2.0
        pid = cluster.pid("ps", 0)
    assert not os.path.exists(f"/proc/{pid}")
    assert poll_for(lambda: not slurm.jobs(), timeout=10)
