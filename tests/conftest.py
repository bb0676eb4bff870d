"""Test-wide guards (every test starts from a fresh default graph and leaks no threads) and
the `cluster`, `sshd`, `ssh_hosts` and `slurm` fixtures. What tests import lives in helpers.py."""

import threading

import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import unix
from tests.helpers import Cluster, leaked_threads
from tests.launch import slurm as slurm_daemons
from tests.launch import sshd as sshd_server
from tests.namespace_hosts import BedUnavailable, NamespaceHosts


def pytest_collection_modifyitems(items):
    """The long files go first, so that under `pytest -n` (see the Makefile) one worker runs
    each while the others take the rest, rather than one worker running it alone at the
    end: the packaging tests (a fresh clone's `make lab`: a minute), then the notebook
    re-runs (minutes)."""
    items.sort(key=lambda item: (item.path.parent.name != "packaging",  # stable
                                 item.path.name != "test_notebook_reruns.py"))


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(autouse=True)
def no_thread_leaks(request):
    """Fails a test that leaves threads behind (sessions must shut their pools down),
    unless it set `request.node.keeps_threads`: it ran on servers meant to live until
    the process exits."""
    before = set(threading.enumerate())
    yield
    # The summary hooks' cached FileWriters (and their threads) live as long as the
    # process, as TensorFlow's: each test closes those it made.
    tf.summary.FileWriterCache.clear()
    if getattr(request.node, "keeps_threads", False):
        return
    left = leaked_threads(before)
    assert not left, f"threads left running: {[t.name for t in left]}"


@pytest.fixture
def cluster(monkeypatch):
    """cluster({"ps": 1, "worker": 2}, processes=False, channel=None, config=None, skip=()):
    starts a helpers.Cluster for this test and stops it after (the last started first).

    `channel` picks how tasks on this host call each other: "unix" (their Unix sockets,
    the default on Linux) or "grpc"; it holds for the whole test, this process included."""
    started = []

    def start(jobs, *, channel=None, **kwargs):
        if channel is not None:
            monkeypatch.setenv(unix.SWITCH_VARIABLE, {"unix": "1", "grpc": "0"}[channel])
        started.append(Cluster(jobs, **kwargs))
        return started[-1]

    yield start
    for tasks in reversed(started):
        tasks.stop()


@pytest.fixture(scope="session")
def sshd():
    """A real sshd on 127.0.0.1 for the whole run (tests/launch/sshd.py); skips where none
    can start."""
    reason = sshd_server.unavailable()
    if reason:
        pytest.skip(reason)
    server = sshd_server.Sshd().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def ssh_hosts():
    """Three hosts of the cross-host bed (tests/namespace_hosts.py), a real sshd in each at
    its IP, port 22, for the whole run: the Sshd (its `hosts` the bed). Skips where sshd
    or the namespaces cannot start; stops the sshds and removes the bed even after a
    failure."""
    reason = sshd_server.unavailable()
    if reason:
        pytest.skip(reason)
    try:
        hosts = NamespaceHosts(3)
    except BedUnavailable as err:
        pytest.skip(f"no cross-host test bed: {err}")
    with hosts:
        server = sshd_server.Sshd(hosts=hosts).start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="session")
def slurm():
    """A real single-node Slurm for the whole run (tests/launch/slurm.py: SLURM_CONF is set
    while it runs); skips, saying why, where its daemons cannot start."""
    reason = slurm_daemons.unavailable()
    if reason:
        pytest.skip(reason)
    try:
        daemons = slurm_daemons.Slurm().start()
    except RuntimeError as e:
        pytest.skip(str(e))
    yield daemons
    daemons.stop()
