"""The bytes each task exchanges with each other task per step (TrafficEvents), measured
on both sides of every link by task processes: a worker pulling a ps's variable, and a
RunGraph's feeds and fetches."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch

PS, WORKER = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"
STEPS = 3


def _traffic(tasks, run):
    """Runs `run(sess)` in a session on the worker task, with the ps task and the worker
    task watched; stops both. Returns {task: {step id: {peer: (sent, received)}}}."""
    watches = {task: watch(tasks.target(*task), ["traffic"], replay=False)
               for task in (("ps", 0), ("worker", 0))}
    with tf.Session(tasks.target("worker", 0)) as sess:
        run(sess)
    tasks.stop()   # each stream ends with its task, after its last event
    return {f"/job:{job}/replica:0/task:{index}":
            {e.traffic.step_id: {link.peer: (link.sent, link.received) for link in e.traffic.link}
             for e in stream}
            for (job, index), stream in watches.items()}


def _graph():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(tf.ones([1000]), name="v")   # 4000 bytes
        fed = tf.placeholder(tf.float32, [250], name="fed")
        doubled = fed * 2.0                           # fed to and fetched from the ps
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(v)
    return v, fed, doubled, total


def _steps(sess, v, total):
    sess.run(v.initializer)
    for _ in range(STEPS):
        sess.run(total)


@pytest.mark.parametrize("link", [None, "1Gbit,1ms"])
def test_a_pulled_variable_counts_its_bytes_once_on_each_side_of_the_link(cluster, link):
    # through an emulated link a push leaves later than its step sends it: still its step's
    tasks = cluster({"ps": 1, "worker": 1}, processes=True,
                    emulate={("ps", 0): {"link": link}} if link else None)
    v, _, _, total = _graph()
    traffic = _traffic(tasks, lambda sess: _steps(sess, v, total))
    pulls = [step for step, links in traffic[PS].items() if links[WORKER][0] == 4000]
    assert len(pulls) == STEPS
    for step in pulls:   # sent by the ps is what the worker received, in the same step
        assert traffic[PS][step] == {WORKER: (4000, 0)}
        assert traffic[WORKER][step] == {PS: (0, 4000)}
    # the initializer's step moved nothing between the tasks: neither publishes it
    assert traffic[PS].keys() == traffic[WORKER].keys() == set(pulls)


def test_runGraph_feeds_and_fetches_count_as_the_masters_traffic(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    _, fed, doubled, _ = _graph()
    values = np.arange(250, dtype=np.float32)

    def run(sess):
        for _ in range(STEPS):
            assert np.array_equal(sess.run(doubled, {fed: values}), values * 2)

    traffic = _traffic(tasks, run)
    assert list(traffic[PS].values()) == [{WORKER: (1000, 1000)}] * STEPS
    assert list(traffic[WORKER].values()) == [{PS: (1000, 1000)}] * STEPS
    assert traffic[PS].keys() == traffic[WORKER].keys()


def test_bytes_are_counted_after_transfer_float_type(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    v, _, _, total = _graph()
    half = tf.ConfigProto(transfer_float_type=tf.bfloat16.as_datatype_enum)
    watches = [watch(tasks.target("worker", 0), ["traffic"], replay=False)]
    with tf.Session(tasks.target("worker", 0), config=half) as sess:
        _steps(sess, v, total)
    tasks.stop()
    received = [link.received for e in watches[0] for link in e.traffic.link]
    assert received.count(2000) == STEPS   # 1000 float32 values as bfloat16


def test_a_string_tensor_counts_its_tensorproto_on_both_sides(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    with tf.device("/job:ps/task:0"):
        words = tf.constant(["parameter", "servers"])
    with tf.device("/job:worker/task:0"):
        copied = tf.identity(words)
    traffic = _traffic(tasks, lambda sess: sess.run(copied))
    ((step, links),) = traffic[PS].items()
    sent = links[WORKER][0]
    assert len("parameterservers") < sent < 64   # the strings and their TensorProto's few bytes
    assert traffic[WORKER][step] == {PS: (0, sent)}
