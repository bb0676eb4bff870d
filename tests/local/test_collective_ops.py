"""Collective ops among the devices of one session (in-graph replication): what
TensorFlow leaves to its group resolution, checked here (members that disagree, shapes
that cannot be gathered), on emulated GPUs, and under a run's deadline."""

import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.ops import collective_ops

CPUS = tf.ConfigProto(device_count={"CPU": 3})


def _on(devices, build):
    outputs = []
    for i, device in enumerate(devices):
        with tf.device(device):
            outputs.append(build(i))
    return outputs


def test_members_that_disagree_on_the_group_size_fail_the_step():
    sizes = [2, 3]
    reduced = _on(["/cpu:0", "/cpu:1"], lambda i: collective_ops.all_reduce(
        tf.constant([1.0]), sizes[i], 7, 1, timeout=2))
    with tf.Session(config=CPUS) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="group_size"):
            sess.run(reduced)


def test_all_gather_of_shapes_that_differ_beyond_the_first_dimension_fails():
    gathered = _on(["/cpu:0", "/cpu:1"], lambda i: collective_ops.all_gather(
        tf.constant(np.ones([1, i + 1], np.float32)), 2, 8, 1))
    with tf.Session(config=CPUS) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="first dimension"):
            sess.run(gathered)


def test_all_reduce_on_emulated_gpus_keeps_their_results_there():
    reduced = _on(["/gpu:0", "/gpu:1"], lambda i: collective_ops.all_reduce(
        tf.constant([1.0, 2.0]) * (i + 1), 2, 9, 1, "Add", "Div"))
    with tf.Session(config=tf.ConfigProto(emulated_gpus=2, log_device_placement=False)) as sess:
        for value in sess.run(reduced):
            np.testing.assert_array_equal(value, [1.5, 3.0])
    assert [r.device for r in reduced] == ["/device:GPU:0", "/device:GPU:1"]


def test_a_member_waiting_for_the_others_ends_at_the_runs_deadline():
    with tf.device("/cpu:0"):
        alone = collective_ops.all_reduce(tf.constant([1.0]), 2, 10, 1)
    with tf.Session(config=CPUS) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(alone, options=tf.RunOptions(timeout_in_ms=300))
        assert time.monotonic() - start < 5


def test_repeated_runs_meet_run_by_run():
    reduced = _on(["/cpu:0", "/cpu:1", "/cpu:2"], lambda i: collective_ops.all_reduce(
        tf.constant(np.arange(5.0)) + i, 3, 11, 1))
    with tf.Session(config=CPUS) as sess:
        for _ in range(20):
            for value in sess.run(reduced):
                np.testing.assert_array_equal(value, np.arange(5.0) * 3 + 3)
