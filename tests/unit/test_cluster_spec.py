"""tf.train.ClusterSpec: construction, lookups, round trips and errors (TF_SEMANTICS §3)."""

import pytest

import dtfnb as tf
from dtfnb.protos import cluster_pb2

SPEC = {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}


def test_dense_cluster_lookups():
    cluster = tf.train.ClusterSpec(SPEC)
    assert cluster.jobs == ["ps", "worker"]
    assert cluster.num_tasks("worker") == 3
    assert cluster.task_indices("ps") == [0, 1]
    assert cluster.task_address("worker", 2) == "w2:2222"
    assert cluster.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert cluster.as_dict() == SPEC
    assert bool(cluster)


def test_sparse_job_keeps_its_indices():
    cluster = tf.train.ClusterSpec({"worker": {3: "w3:2222", 1: "w1:2222"}, "ps": ["ps0:1"]})
    assert cluster.num_tasks("worker") == 2
    assert cluster.task_indices("worker") == [1, 3]
    assert cluster.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert cluster.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:1"]}


def test_dict_with_indices_from_zero_is_dense():
    cluster = tf.train.ClusterSpec({"worker": {1: "b:1", 0: "a:1"}})
    assert cluster.as_dict() == {"worker": ["a:1", "b:1"]}


def test_empty_cluster_and_empty_job():
    assert not tf.train.ClusterSpec({})
    cluster = tf.train.ClusterSpec({"ps": []})
    assert cluster.as_dict() == {"ps": {}}
    assert cluster.job_tasks("ps") == []
    assert cluster.num_tasks("ps") == 0


def test_round_trips_through_cluster_def_and_copy():
    cluster = tf.train.ClusterSpec({"worker": {2: "w2:1"}, "ps": ["p:1"]})
    cluster_def = cluster.as_cluster_def()
    assert isinstance(cluster_def, cluster_pb2.ClusterDef)
    assert [job.name for job in cluster_def.job] == ["ps", "worker"]
    assert dict(cluster_def.job[1].tasks) == {2: "w2:1"}
    assert tf.train.ClusterSpec(cluster_def) == cluster
    assert tf.train.ClusterSpec(cluster) == cluster
    assert tf.train.ClusterSpec(cluster.as_dict()) == cluster


def test_equality_by_value():
    assert tf.train.ClusterSpec(SPEC) == tf.train.ClusterSpec(dict(SPEC))
    assert tf.train.ClusterSpec(SPEC) != tf.train.ClusterSpec({"ps": ["ps0:2222"]})
    assert tf.train.ClusterSpec({"ps": ["a:1"]}) != tf.train.ClusterSpec({"ps": {1: "a:1"}})


def test_repr_like_tensorflow():
    cluster = tf.train.ClusterSpec({"worker": {1: "w1:1"}, "ps": ["p:1"]})
    assert repr(cluster) == "ClusterSpec({'ps': ['p:1'], 'worker': {1: 'w1:1'}})"


def test_sparse_indices_may_be_strings_as_json_gives_them():
    cluster = tf.train.ClusterSpec({"worker": {"1": "w1:1"}})
    assert cluster.task_address("worker", 1) == "w1:1"


def test_unknown_job_and_task():
    cluster = tf.train.ClusterSpec(SPEC)
    for lookup in (cluster.num_tasks, cluster.task_indices, cluster.job_tasks):
        with pytest.raises(ValueError, match=r"^No such job in cluster: 'chief'$"):
            lookup("chief")
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'chief'$"):
        cluster.task_address("chief", 0)
    with pytest.raises(ValueError, match=r"^No task with index 3 in job 'worker'$"):
        cluster.task_address("worker", 3)


@pytest.mark.parametrize("spec, error, message", [
    (["w0:1"], TypeError, "must be a dictionary mapping one or more job names"),
    ({"worker": "w0:1"}, TypeError, "tasks for job 'worker' must be a list or a dictionary"),
    ({"worker": ["w0:1", 2222]}, TypeError, "address 2222 of task 1 in job 'worker'"),
    ({"worker": {0: None}}, TypeError, "address None of task 0 in job 'worker'"),
    ({"my-job": ["a:1"]}, ValueError, "Invalid job name 'my-job'"),
    ({"": ["a:1"]}, ValueError, "Invalid job name ''"),
    ({3: ["a:1"]}, TypeError, "Job name 3"),
    ({"worker": {0: "a:1", "0": "b:1"}}, ValueError, "Duplicate task index 0 in job 'worker'"),
    ({"worker": {-1: "a:1"}}, ValueError, "Task index -1 in job 'worker' is negative"),
    ({"worker": {"one": "a:1"}}, ValueError, "Task index 'one' in job 'worker'"),
])
def test_bad_specs(spec, error, message):
    with pytest.raises(error, match=message):
        tf.train.ClusterSpec(spec)


def test_duplicate_job_in_cluster_def():
    cluster_def = cluster_pb2.ClusterDef()
    cluster_def.job.add(name="ps", tasks={0: "a:1"})
    cluster_def.job.add(name="ps", tasks={1: "b:1"})
    with pytest.raises(ValueError, match="Duplicate job 'ps'"):
        tf.train.ClusterSpec(cluster_def)
