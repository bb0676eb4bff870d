"""tf.train.Server in this process: targets, start/join/stop, sessions on any task, pinning."""

import mmap
import socket
import threading

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import shm
from tests.helpers import chapter_pinning_graph, cluster_dict, poll_for


def test_server_target_and_server_def(cluster):
    tasks = cluster({"ps": 1, "worker": 2})
    server = tasks["worker", 1]
    assert server.target == "grpc://" + tasks.spec["worker"][1]
    assert server.server_def.job_name == "worker"
    assert server.server_def.task_index == 1
    assert server.server_def.protocol == "grpc"
    assert tf.train.ClusterSpec(server.server_def.cluster) == tf.train.ClusterSpec(tasks.spec)


def test_create_local_server_runs_a_session():
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        assert int(server.target.rsplit(":", 1)[1]) > 0
        x = tf.constant(2.0) * 3.0
        with tf.Session(server.target) as sess:
            assert sess.run(x) == 6.0
            names = [d.name for d in sess.list_devices()]
        assert "/job:localhost/replica:0/task:0/device:CPU:0" in names
    finally:
        server.stop()


def test_start_later_join_and_stop_frees_the_port():
    (address,) = cluster_dict(local=1)["local"]
    server = tf.train.Server({"local": [address]}, "local", 0, start=False)
    host, port = address.rsplit(":", 1)
    with socket.socket() as probe:  # not listening yet: the port can still be bound
        probe.bind((host, int(port)))
    server.start()
    server.start()  # a second start is a no-op, as in TensorFlow
    joined = threading.Event()
    joiner = threading.Thread(target=lambda: (server.join(), joined.set()))
    joiner.start()
    assert not joined.wait(0.2)
    server.stop()
    joiner.join(5)
    assert joined.is_set()
    with socket.socket() as probe:
        probe.bind((host, int(port)))


def test_a_taken_port_is_an_unavailable_error():
    (address,) = cluster_dict(local=1)["local"]
    host, port = address.rsplit(":", 1)
    with socket.socket() as taken:
        taken.bind((host, int(port)))
        taken.listen()
        with pytest.raises(tf.errors.UnavailableError, match="cannot bind"):
            tf.train.Server({"local": [address]}, "local", 0)


def test_bad_server_arguments():
    cluster = cluster_dict(ps=1, worker=2)
    with pytest.raises(ValueError, match="task_index"):
        tf.train.Server(cluster, "worker", start=False)
    with pytest.raises(ValueError, match="No such job"):
        tf.train.Server(cluster, "chief", 0, start=False)
    with pytest.raises(ValueError, match="protocol"):
        tf.train.Server(cluster, "ps", 0, protocol="grpc+verbs", start=False)


def test_chapter_pinning_across_tasks_gives_4(cluster):
    tasks = cluster({"ps": 2, "worker": 3})
    a, c = chapter_pinning_graph()
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                            output_partition_graphs=True)
    with tf.Session(tasks["worker", 0].target) as sess:  # the master is worker 0
        sess.run(a.initializer)
        assert sess.run(c, options=options, run_metadata=metadata) == 4.0
    devices = {d.device for d in metadata.step_stats.dev_stats}
    assert "/job:ps/replica:0/task:0/device:CPU:0" in devices
    assert "/job:worker/replica:0/task:1/device:CPU:0" in devices
    # every task's share of the step is in the partition graphs
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed["a"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert placed["add"] == "/job:worker/replica:0/task:0/device:CPU:0"
    assert placed["add_1"] == "/job:worker/replica:0/task:1/device:CPU:0"


def test_partial_device_strings_resolve_as_the_chapter_says(cluster, capfd):
    tasks = cluster({"ps": 2, "worker": 2})
    with tf.device("/job:ps"):
        on_ps = tf.constant(1.0, name="on_ps") + 1.0
    with tf.device("/job:worker"):
        on_worker = tf.constant(1.0, name="on_worker") + 1.0
    anywhere = tf.constant(1.0, name="anywhere") + 1.0
    config = tf.ConfigProto(log_device_placement=True)
    with tf.Session(tasks["worker", 1].target, config=config) as sess:
        sess.run([on_ps, on_worker, anywhere])
    lines = dict(line.split(": ", 1) for line in capfd.readouterr().out.splitlines()
                 if line.startswith(("add", "on_", "anywhere")))
    assert lines["add"] == "(AddV2): /job:ps/replica:0/task:0/device:CPU:0"        # ps -> 0
    assert lines["add_1"] == "(AddV2): /job:worker/replica:0/task:1/device:CPU:0"  # own task
    assert lines["add_2"] == "(AddV2): /job:worker/replica:0/task:1/device:CPU:0"  # no job


def test_unknown_job_and_soft_placement_in_a_cluster(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:chief"):
        bad = tf.constant(1.0) + 1.0
    with tf.Session(worker.target) as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                          match="Cannot assign a device"):
        sess.run(bad)
    tf.reset_default_graph()
    with tf.device("/job:worker/task:0/gpu:1"):
        on_gpu = tf.constant(1.0) + 1.0
    with tf.Session(worker.target) as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(on_gpu)
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(worker.target, config=config) as sess:
        assert sess.run(on_gpu) == 2.0


def test_ops_on_a_queue_or_a_variable_run_on_its_task_whatever_their_device_block(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(2, tf.float32, name="q")
        var = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:0"):  # the producer/trainer pattern
        enqueue = queue.enqueue(var * 2.0)
        size = queue.size()
    metadata = tf.RunMetadata()
    with tf.Session(worker.target) as sess:
        sess.run(var.initializer)
        sess.run([enqueue, size], options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
        assert sess.run(queue.dequeue()) == 2.0
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    assert (placed["q_enqueue"], placed["q_Size"]) == (ps, ps)
    assert placed["mul"] == "/job:worker/replica:0/task:0/device:CPU:0"


def test_device_filters_leave_out_other_workers_even_when_they_are_down(cluster):
    tasks = cluster({"ps": 1, "worker": 3}, skip={("worker", 0), ("worker", 2)})  # never start
    worker = tasks["worker", 1]
    with tf.device("/job:ps"):
        v = tf.Variable(1.0)
    doubled = v * 2.0
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"])
    with tf.Session(worker.target, config=config) as sess:
        assert [d.name for d in sess.list_devices()] == [
            "/job:worker/replica:0/task:1/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"]
        sess.run(v.initializer)
        assert sess.run(doubled) == 2.0
        with tf.device("/job:worker/task:0"):
            elsewhere = tf.constant(1.0) + 1.0
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="explicitly assigned to /job:worker/task:0"):
            sess.run(elsewhere)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32,
                                   np.int64, np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("shape", [(), (0, 3), (5,), (300, 400)])
def test_every_dtype_and_size_crosses_tasks(cluster, dtype, shape):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    value = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    tf_dtype = tf.as_dtype(np.dtype(dtype))
    with tf.device("/job:ps/task:0"):
        fed = tf.placeholder(tf_dtype, shape)
        on_ps = tf.identity(fed)
    with tf.device("/job:worker/task:0"):
        back = tf.identity(on_ps)
    with tf.Session(worker.target) as sess:
        got_ps, got_back = sess.run([on_ps, back], {fed: value})
    for got in (got_ps, got_back):
        assert got.dtype == value.dtype and got.shape == value.shape
        np.testing.assert_array_equal(got, value)


def test_strings_and_bfloat16_cross_tasks(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    with tf.device("/job:ps/task:0"):
        text = tf.constant([b"Hello distributed", b"TensorFlow!"])
        half = tf.cast(tf.constant([1.5, -2.25]), tf.bfloat16)
    with tf.device("/job:worker/task:0"):
        text_back, half_back = tf.identity(text), tf.identity(half)
    with tf.Session(worker.target) as sess:
        got_text, got_half = sess.run([text_back, half_back])
    assert list(got_text) == [b"Hello distributed", b"TensorFlow!"]
    assert got_half.dtype == tf.bfloat16.as_numpy_dtype
    assert list(got_half.astype(np.float32)) == [1.5, -2.25]


@pytest.mark.parametrize("shared_memory", [True, False])
def test_large_tensors_cross_with_and_without_shared_memory(cluster, shared_memory):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    value = np.random.RandomState(0).rand(3 * 1024 * 1024).astype(np.float32)  # 12 MB
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(value)
        doubled = v * 2.0
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(doubled)
    config = tf.ConfigProto(disable_shared_memory=not shared_memory)
    with tf.Session(worker.target, config=config) as sess:
        sess.run(v.initializer)
        for _ in range(3):  # blocks are lent, given back and reused
            got, got_total = sess.run([v, total])
            np.testing.assert_array_equal(got, value)
            np.testing.assert_allclose(got_total, value.sum() * 2, rtol=1e-4)
        got[:] = 0  # fetched arrays are the caller's to change
        np.testing.assert_array_equal(sess.run(v), value)


@pytest.mark.skipif(not shm.available, reason="needs Linux memfd and /proc")
def test_a_ps_lends_updated_variables_without_a_copy_and_they_stay_its_own(cluster):
    tasks = cluster({"ps": 1, "worker": 1})
    worker, ps = tasks["worker", 0], tasks["ps", 0]
    start = np.random.RandomState(1).rand(256, 128).astype(np.float32)  # 128 KiB
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(start, name="w")
    with tf.device("/job:worker/task:0"):
        train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(w * w) / 2)
        doubled = w * 2.0  # on the worker, from the value the ps lends
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        for step in range(1, 4):  # the gradient is w: each step halves it
            sess.run(train)
            np.testing.assert_allclose(sess.run(doubled), start * 2 / 2**step, rtol=1e-6)
        got = sess.run(w)
        got[:] = 0  # fetched arrays are the caller's to change, never the ps's value
        np.testing.assert_allclose(sess.run(w), start / 8, rtol=1e-6)
    ps_device = ps._worker.devices["/job:ps/replica:0/task:0/device:CPU:0"]
    value = ps_device.resource_mgr.lookup("", "w").read()
    assert isinstance(value.base, mmap.mmap)  # made in a block: lent as it is


def test_transfer_compression_halves_float32_precision_across_tasks(cluster):
    worker = cluster({"ps": 1, "worker": 1})["worker", 0]
    value = np.float32(1.0 + 2 ** -12)  # not representable in bfloat16
    with tf.device("/job:ps/task:0"):
        x = tf.constant(value)
    with tf.device("/job:worker/task:0"):
        y = tf.identity(x)
    exact = tf.ConfigProto()
    compressed = tf.ConfigProto(transfer_float_type=tf.bfloat16.as_datatype_enum)
    with tf.Session(worker.target, config=exact) as sess:
        assert sess.run(y) == value
    with tf.Session(worker.target, config=compressed) as sess:
        got = sess.run(y)
    assert got.dtype == np.float32 and got == 1.0


@pytest.mark.parametrize("channel", ["unix", "grpc"])
def test_a_failing_partition_aborts_the_step_on_every_task(cluster, channel):
    tasks = cluster({"ps": 1, "worker": 2}, channel=channel)
    worker0, worker1 = tasks["worker", 0], tasks["worker", 1]
    with tf.device("/job:ps/task:0"):
        never_initialized = tf.Variable(1.0, name="never_initialized")
    with tf.device("/job:worker/task:1"):
        waits_for_ps = never_initialized * 2.0  # worker 1 blocks on this tensor
    with tf.device("/job:worker/task:0"):
        total = waits_for_ps + 1.0
    with tf.Session(worker0.target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="uninitialized value never_initialized"):
            sess.run(total)
    # worker 1's part was aborted by the master's CleanupGraph, not left waiting
    assert poll_for(lambda: not worker1._worker._running, timeout=5)


def test_blas_threads_share_the_host_among_the_tasks_that_compute(monkeypatch):
    from dtfnb.distributed_runtime.server_lib import _cores_per_task
    monkeypatch.setattr("dtfnb.distributed_runtime.server_lib.usable_cores", lambda: 8)
    one_host = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})
    assert _cores_per_task(one_host, "127.0.0.1:2") == 8   # the ps runs no BLAS
    two_workers = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"],
                                        "worker": ["127.0.0.1:2", "127.0.0.1:3"]})
    assert _cores_per_task(two_workers, "127.0.0.1:3") == 4
    spread = tf.train.ClusterSpec({"ps": ["127.0.0.1:1", "127.0.0.1:2"],
                                   "worker": ["127.0.0.1:3", "10.0.0.2:3"]})
    assert _cores_per_task(spread, "127.0.0.1:3") == 8
    only_ps = tf.train.ClusterSpec({"ps": ["127.0.0.1:1", "127.0.0.1:2"]})
    assert _cores_per_task(only_ps, "127.0.0.1:1") == 4
