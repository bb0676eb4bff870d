"""The server's side of a launcher's channel, without ssh: `--secrets-from-stdin` takes
the token from stdin's first line (and refuses what is no secret), `--exit-on-eof` stops
the task when stdin closes."""

import json
import subprocess
import sys

import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.cluster import local_addresses
from tests.helpers import wait_for_port


def _task(address):
    return subprocess.Popen(
        [sys.executable, "-m", "dtfnb.server", "--cluster", json.dumps({"worker": [address]}),
         "--job", "worker", "--task", "0", "--exit-on-eof", "--secrets-from-stdin"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_token_from_stdin_and_exit_on_its_end(monkeypatch):
    [address] = local_addresses(1)
    task = _task(address)
    try:
        task.stdin.write(json.dumps({"DTFNB_CLUSTER_TOKEN": "from-stdin"}) + "\n")
        task.stdin.flush()
        wait_for_port(address, proc=task)
        x = tf.constant(3.0) * 2
        monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "from-stdin")
        with tf.Session(f"grpc://{address}") as sess:
            assert sess.run(x) == 6.0
        monkeypatch.delenv("DTFNB_CLUSTER_TOKEN")
        with pytest.raises(tf.errors.UnauthenticatedError), \
                tf.Session(f"grpc://{address}") as sess:
            sess.run(x)
        task.stdin.close()   # the channel closes
        assert task.wait(15) == 0
        assert "stdin closed: stopping" in task.stderr.read()
    finally:
        task.kill()
        task.wait()
        task.stderr.close()


def test_only_secrets_are_taken():
    [address] = local_addresses(1)
    task = _task(address)
    _, output = task.communicate(json.dumps({"PATH": "/tmp"}) + "\n", timeout=30)
    assert task.returncode != 0 and "'PATH' is not a secret dtfnb reads" in output
