"""Across hosts: tasks each in a network and UTS namespace of their own (tests/namespace_hosts.py),
so that they reach each other only over gRPC, as on separate machines. Training, queues, a
lost task, the token and TLS on that path; a TFJob's replicas, each started as the training
operator would start its pod. `pytest -m namespaces` selects these; they skip
where the namespaces cannot be made (not root)."""

import subprocess
import sys
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.launch.tfjob import CONTAINER, tf_configs, to_tfjob
from tests.helpers import in_thread, tls_certificates, train_async_and_sync
from tests.namespace_hosts import BedUnavailable, NamespaceHosts, Processes, Tasks, ip

pytestmark = pytest.mark.namespaces

_TOKEN_SECRETS = {("dtfnb-cluster-token", "token"): "k8s-s3cret"}   # the Secret to_tfjob names
_SHARED_BYTES = 1 << 17   # over shm.nbytes_threshold: on one host it goes through shared memory


def bed(n, **kwargs):
    """NamespaceHosts(n), or the test skips saying why it cannot be made."""
    try:
        return NamespaceHosts(n, **kwargs)
    except BedUnavailable as err:
        pytest.skip(f"no cross-host test bed: {err}")


@pytest.fixture(scope="module")
def hosts():
    with bed(3) as hosts:
        yield hosts


def _local_connections(host):
    """The Unix sockets of dtfnb tasks in `host`: listeners and the connections they accepted."""
    return [path for path in host.unix_sockets() if path.startswith("@dtfnb-task-")]


def _shared_blocks_mapped(pid):
    """The dtfnb shared-memory blocks process `pid` maps (its own and other tasks')."""
    with open(f"/proc/{pid}/maps") as maps:
        return {line.split()[-2] for line in maps if "/memfd:dtfnb-block" in line}


def _sums_of_a_large_variable():
    """A 128 KiB variable on the ps and its sum on each of 2 workers: (variable, sums)."""
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(tf.ones([_SHARED_BYTES // 4]), name="v")
    sums = []
    for task in range(2):
        with tf.device(f"/job:worker/task:{task}"):
            sums.append(tf.reduce_sum(v * 2.0))
    return v, sums


def test_tasks_on_other_hosts_call_each_other_over_grpc_only(hosts):
    # ps and worker 0 share host 0: between them the shortcuts are taken, which shows
    # that what this test looks at would show them between hosts too.
    with Tasks(hosts, {"ps": [0], "worker": [0, 1]}) as tasks:
        v, sums = _sums_of_a_large_variable()
        with tf.Session(tasks.target("worker", 0)) as sess:
            sess.run(v.initializer)
            for _ in range(2):   # a task's first push to a peer goes inline, later ones shared
                assert sess.run(sums) == [2.0 * _SHARED_BYTES / 4] * 2
        assert hosts[0].run(["hostname"]).stdout.strip() == "bedhost0"
        # Host 0: two listeners and a connection between its tasks; host 1: its listener.
        assert len(_local_connections(hosts[0])) > 2
        assert _local_connections(hosts[1]) == [f"@dtfnb-task-{tasks.spec['worker'][1]}"]
        assert _shared_blocks_mapped(tasks["worker", 0].pid)
        assert not _shared_blocks_mapped(tasks["worker", 1].pid)
    # This process (the root namespace) sees none of the tasks' sockets.
    with open("/proc/net/unix") as table:
        assert not any(f"@dtfnb-task-{hosts[0].ip}" in line for line in table)


def test_one_hostname_in_two_network_namespaces_is_not_one_host():
    """The boot id is the same in every namespace, and so may the hostname be (containers):
    a task must not take a task in another network namespace for one on its host."""
    with bed(2, hostnames=["twin", "twin"]) as twins, \
            Tasks(twins, {"ps": [0], "worker": [1]}) as tasks:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.ones([_SHARED_BYTES // 4]), name="v")
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(v)
        with tf.Session(tasks.target("worker")) as sess:
            sess.run(v.initializer)
            assert sess.run(total) == _SHARED_BYTES / 4
        for host, (job, address) in zip(twins, [("ps", tasks.spec["ps"][0]),
                                                 ("worker", tasks.spec["worker"][0])]):
            assert _local_connections(host) == [f"@dtfnb-task-{address}"], job
        tasks.stop()
    # Neither even tried the other's socket (it would have failed, and said so).
    assert not any("over gRPC" in log for log in tasks.logs.values()), tasks.logs


def test_async_and_sync_training_converge_across_hosts(hosts):
    with Tasks(hosts, {"ps": [0], "worker": [1, 2]}) as tasks:
        train_async_and_sync(tasks.spec, tasks.target)


def test_a_queue_on_one_host_fed_from_another_and_drained_from_a_third(hosts):
    with Tasks(hosts, {"ps": [0], "worker": [1, 2]}) as tasks:
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(10, tf.float32, shapes=[[2]], shared_name="across_hosts")
        with tf.device("/job:worker/task:0"):
            enqueue = q.enqueue(tf.constant([1.0, 2.0]) * 10.0)
        with tf.device("/job:worker/task:1"):
            dequeued = q.dequeue() + 1.0
        with tf.Session(tasks.target("worker", 0)) as feeder, \
                tf.Session(tasks.target("worker", 1)) as drainer:
            waiting, box = in_thread(lambda: drainer.run(dequeued))   # blocks until fed
            feeder.run(enqueue)
            waiting.join(30)
            np.testing.assert_array_equal(box["value"], [11.0, 21.0])
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                drainer.run(dequeued, options=tf.RunOptions(timeout_in_ms=300))
            assert time.monotonic() - start < 5
            feeder.run(enqueue)
            np.testing.assert_array_equal(drainer.run(dequeued), [11.0, 21.0])


def test_a_lost_host_fails_the_step_within_its_deadline(hosts):
    with Tasks(hosts, {"ps": [0], "worker": [1]}) as tasks:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.arange(4.0), name="v")
            doubled = v * 2
        with tf.Session(tasks.target("worker")) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(doubled), [0, 2, 4, 6])
            # A host cut off the network answers nothing: the step's deadline ends it.
            ip("link", "set", "eth0", "down", namespace=hosts[0].namespace)
            try:
                start = time.monotonic()
                with pytest.raises(tf.errors.DeadlineExceededError):
                    sess.run(doubled, options=tf.RunOptions(timeout_in_ms=1000))
                assert time.monotonic() - start < 6
            finally:
                ip("link", "set", "eth0", "up", namespace=hosts[0].namespace)
            # A killed task: its host's kernel resets the connections at once.
            tasks["ps", 0].kill()
            tasks["ps", 0].wait()
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match=tasks.spec["ps"][0]):
                sess.run(doubled, options=tf.RunOptions(timeout_in_ms=30000))
            assert time.monotonic() - start < 10


def test_the_cluster_token_and_tls_across_hosts(hosts, tmp_path, monkeypatch):
    names = ",".join(f"IP:{host.ip}" for host in hosts) + f",IP:{hosts.client_ip}"
    certificates = tls_certificates(tmp_path, names)
    secrets = {"DTFNB_CLUSTER_TOKEN": "bed-s3cret",
               **{f"DTFNB_TLS_{name}": str(certificates / file) for name, file in
                  (("CERT", "task.pem"), ("KEY", "task.key"), ("CA", "ca.pem"))}}
    with Tasks(hosts, {"ps": [0], "worker": [1]}, env=secrets) as tasks:
        for name, value in secrets.items():
            monkeypatch.setenv(name, value)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        with tf.Session(tasks.target("worker")) as sess:   # client -> worker -> ps, over TLS
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
        monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "wrong")
        with pytest.raises(tf.errors.UnauthenticatedError, match="Missing or wrong cluster"), \
                tf.Session(tasks.target("worker")) as sess:
            sess.run(doubled)


# -- TFJob round trip -----------------------------------------------------------------------

def start_replicas(manifest, secrets):
    """Starts each replica of the TFJob `manifest` as the operator would start its pod: in a
    host of its own, whose /etc/hosts resolves every replica's service name; the command
    and environment of its container named "tensorflow" (each secretKeyRef read from
    `secrets`, {(secret, key): value}) and its TF_CONFIG. Returns (hosts, Processes keyed
    (job, index), {(job, index): "ip:port"})."""
    configs = tf_configs(manifest)
    name, namespace = manifest["metadata"]["name"], manifest["metadata"]["namespace"]
    services = {f"{name}-{job}-{index}.{namespace}.svc": host
                for host, (job, index) in enumerate(configs)}
    hosts = bed(len(configs), hosts_file=services)
    replicas, addresses = Processes(), {}
    try:
        specs = {rtype.lower(): spec for rtype, spec in manifest["spec"]["tfReplicaSpecs"].items()}
        for host, ((job, index), config) in zip(hosts, configs.items()):
            container, = [c for c in specs[job]["template"]["spec"]["containers"]
                          if c["name"] == CONTAINER]
            env = {item["name"]: secrets[item["valueFrom"]["secretKeyRef"]["name"],
                                         item["valueFrom"]["secretKeyRef"]["key"]]
                   for item in container["env"]}
            command = [sys.executable if arg == "python" else arg for arg in container["command"]]
            replicas[job, index] = host.popen(command, env={**env, "TF_CONFIG": config},
                                              stderr=subprocess.PIPE, text=True)
            addresses[job, index] = f"{host.ip}:{container['ports'][0]['containerPort']}"
        replicas.wait_until_serving(addresses)
    except BaseException:
        replicas.stop()
        hosts.close()
        raise
    return hosts, replicas, addresses


def test_a_tfjobs_replicas_form_the_cluster_from_their_tf_config(monkeypatch):
    manifest = to_tfjob({"chief": 1, "ps": 1, "worker": 1, "evaluator": 1}, name="round-trip",
                        image="unused", server_args=["--cpus", "1"])
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "k8s-s3cret")
    hosts, replicas, addresses = start_replicas(manifest, _TOKEN_SECRETS)
    with hosts, replicas:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        with tf.device("/job:evaluator/task:0"):
            total = tf.reduce_sum(doubled)
        # The client reaches the chief by its IP; the chief reaches the others by name.
        with tf.Session(f"grpc://{addresses['chief', 0]}") as sess:
            sess.run(v.initializer)
            assert sess.run(total) == 6.0
            assert {d.name.split("/device")[0] for d in sess.list_devices()} == {
                f"/job:{job}/replica:0/task:0" for job in ("chief", "ps", "worker", "evaluator")}
    assert all("serving at grpc://round-trip-" in log for log in replicas.logs.values())


def test_the_workers_of_a_sparse_tfjob_share_the_ps_without_knowing_each_other(monkeypatch):
    manifest = to_tfjob({"ps": 1, "worker": 2}, name="sparse", image="unused", sparse=True)
    monkeypatch.setenv("DTFNB_CLUSTER_TOKEN", "k8s-s3cret")
    hosts, replicas, addresses = start_replicas(manifest, _TOKEN_SECRETS)
    with hosts, replicas:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
            add = v.assign_add(1.0)
        for index in range(2):
            with tf.Session(f"grpc://{addresses['worker', index]}") as sess:
                if index == 0:
                    sess.run(v.initializer)
                assert sess.run(add) == index + 1.0
                assert {d.name.split("/device")[0] for d in sess.list_devices()} == {
                    "/job:ps/replica:0/task:0", f"/job:worker/replica:0/task:{index}"}
