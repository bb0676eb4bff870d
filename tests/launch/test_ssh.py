"""The ssh launcher against a real sshd: the cluster token and TLS material travel over
each task's channel, in no argv and no environment; a failed connection is reported
with ssh's own words."""

import socket
import sys

import pytest

import dtfnb as tf
from dtfnb.launch import Cluster
from dtfnb.launch.cluster import addresses
from dtfnb.launch.ssh import SSHLauncher
from tests.distributed.test_transport_security import certificates, use_tls  # noqa: F401

TOKEN = "launch-secret-4d1f"


def _launcher(sshd):
    return SSHLauncher(python=sys.executable, **sshd.options)


def _holders(pid, secrets):
    """Which of /proc/PID's argv and initial environment hold any of `secrets`."""
    found = []
    for part in ("cmdline", "environ"):
        with open(f"/proc/{pid}/{part}", "rb") as f:
            text = f.read()
        found += [part for secret in secrets if secret in text]
    return found


def test_secrets_travel_over_the_channel(sshd, certificates, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", TOKEN)
    use_tls(monkeypatch, certificates)
    key = (certificates / "task.key").read_bytes().splitlines()[1]
    with Cluster(addresses({"ps": 1, "worker": 1}), _launcher(sshd), progress=False) as cluster:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(2.0)
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        with tf.Session(cluster.target("worker")) as sess:   # over TLS, with the token
            sess.run(v.initializer)
            assert sess.run(doubled) == 4.0
        for task in cluster.tasks:
            assert not _holders(cluster.pid(task.job, task.index), [TOKEN.encode(), key])
        monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "wrong")
        with pytest.raises(tf.errors.UnauthenticatedError, match="cluster token"):
            with tf.Session(cluster.target("worker")) as sess:
                sess.run(doubled)


def test_a_host_that_refuses_is_reported(sshd):
    with socket.socket() as closed:   # bound, not listening: ssh's connection is refused
        closed.bind(("127.0.0.1", 0))
        options = {**sshd.options, "port": closed.getsockname()[1]}
        with pytest.raises(tf.errors.UnavailableError,
                           match=r"(?s)task:0 exited with code 255 while starting.*refused"):
            Cluster(addresses({"worker": 1}), SSHLauncher(python=sys.executable, **options),
                    progress=False)
