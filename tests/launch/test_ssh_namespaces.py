"""The ssh launcher across hosts: an sshd in each host of the namespace bed (the
`ssh_hosts` fixture), tasks started through it on the host their address names, each with
its own network and hostname, so that they reach each other over gRPC alone. Async and
sync training converge there as on one host, with the cluster token and TLS material
sent over each task's channel. `pytest -m namespaces` selects these."""

import subprocess
import sys

import pytest

import dtfnb as tf
from dtfnb.launch import Cluster
from dtfnb.launch.ssh import SSHLauncher
from tests.helpers import tls_certificates, train_async_and_sync

pytestmark = pytest.mark.namespaces


def _hostname(pid):
    """The hostname process `pid` sees (in its UTS namespace)."""
    return subprocess.run(["nsenter", "-t", str(pid), "-u", "hostname"], check=True,
                          capture_output=True, text=True, timeout=10).stdout.strip()


def test_training_converges_across_hosts_with_the_token_and_tls(ssh_hosts, tmp_path,
                                                                  monkeypatch):
    hosts = ssh_hosts.hosts
    names = ",".join(f"IP:{host.ip}" for host in hosts) + f",IP:{hosts.client_ip}"
    certificates = tls_certificates(tmp_path, names)
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "ssh-bed-s3cret")
    for name, file in (("CERT", "task.pem"), ("KEY", "task.key"), ("CA", "ca.pem")):
        monkeypatch.setenv(f"DTFNB_TLS_{name}", str(certificates / file))
    spec = {"ps": [f"{hosts[0].ip}:2222"],
            "worker": [f"{hosts[1].ip}:2222", f"{hosts[2].ip}:2222"]}
    launcher = SSHLauncher(python=sys.executable, **ssh_hosts.options)
    with Cluster(spec, launcher, progress=False) as cluster:
        train_async_and_sync(spec, cluster.target)
        # Each task has its host's hostname, and only its own Unix socket is in its host.
        for host, task in zip(hosts, cluster.tasks):
            assert _hostname(cluster.pid(task.job, task.index)) == host.hostname
            dtfnb_sockets = [path for path in host.unix_sockets()
                             if path.startswith("@dtfnb-task-")]
            assert dtfnb_sockets == [f"@dtfnb-task-{task.address}"], (host, dtfnb_sockets)
        monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "wrong")
        with pytest.raises(tf.errors.UnauthenticatedError, match="cluster token"), \
                tf.Session(cluster.target("worker")) as sess:
            sess.run(tf.constant(1.0))
    assert not any("over gRPC" in cluster.logs(t.job, t.index) for t in cluster.tasks)
