"""Cluster resolvers: TF_CONFIG (Kubernetes TFJob) and Slurm, from environment variables."""

import json

import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.resolvers import (
    SlurmClusterResolver,
    TFConfigClusterResolver,
    expand_hostlist,
    expand_tasks_per_node,
    resolve_from_environment,
)

CLUSTER = {"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]}
SLURM_VARS = ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_STEP_NODELIST",
              "SLURM_JOB_NODELIST", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ("TF_CONFIG",) + SLURM_VARS:
        monkeypatch.delenv(name, raising=False)


def set_tf_config(monkeypatch, config):
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))


def set_slurm(monkeypatch, procid, ntasks, nodelist, tasks_per_node):
    monkeypatch.setenv("SLURM_PROCID", str(procid))
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", str(ntasks))
    monkeypatch.setenv("SLURM_STEP_NODELIST", nodelist)
    monkeypatch.setenv("SLURM_STEP_TASKS_PER_NODE", tasks_per_node)


def test_facade_names():
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver is TFConfigClusterResolver
    assert tf.distribute.cluster_resolver.SlurmClusterResolver is SlurmClusterResolver


# -- TF_CONFIG ---------------------------------------------------------------------------

def test_tf_config_worker(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}})
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == tf.train.ClusterSpec(CLUSTER)
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.master() == "grpc://w1:2222"
    assert resolver.master("ps", 0) == "grpc://ps0:2222"


def test_tf_config_is_read_at_each_call_and_arguments_override(monkeypatch):
    resolver = TFConfigClusterResolver(task_id=0)
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "ps", "index": 7},
                                "rpc_layer": "grpc+verbs"})
    assert (resolver.task_type, resolver.task_id) == ("ps", 0)
    assert resolver.master() == "grpc+verbs://ps0:2222"
    assert resolver.master(rpc_layer="grpc") == "grpc://ps0:2222"


def test_tf_config_sparse_cluster_from_json(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": {"worker": {"1": "w1:2222"}, "ps": ["ps0:2222"]},
                                "task": {"type": "worker", "index": "1"}})
    resolver = TFConfigClusterResolver()
    assert resolver.task_id == 1
    assert resolver.master() == "grpc://w1:2222"


def test_tf_config_without_cluster_or_with_one_task_gives_local_master(monkeypatch):
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == tf.train.ClusterSpec({})
    assert resolver.master() == ""
    assert (resolver.task_type, resolver.task_id) == (None, None)
    set_tf_config(monkeypatch, {"cluster": {"chief": ["c:1"]}, "task": {"type": "chief"}})
    assert resolver.master() == ""


def test_tf_config_session_master_wins(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "session_master": "grpc://elsewhere:1"})
    assert TFConfigClusterResolver().master() == "grpc://elsewhere:1"


@pytest.mark.parametrize("text, message", [
    ("{not json", "TF_CONFIG is not valid JSON"),
    ("[1, 2]", "TF_CONFIG must be a JSON object"),
    ('{"task": "worker"}', "TF_CONFIG must be a JSON object"),
])
def test_tf_config_malformed(monkeypatch, text, message):
    monkeypatch.setenv("TF_CONFIG", text)
    with pytest.raises(ValueError, match=message):
        TFConfigClusterResolver().master()


def test_tf_config_bad_cluster_or_task(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": {"worker": [1]}, "task": {"index": "x"}})
    resolver = TFConfigClusterResolver()
    with pytest.raises(ValueError, match=r"TF_CONFIG: bad cluster: .*address 1 of task 0"):
        resolver.cluster_spec()
    with pytest.raises(ValueError, match="TF_CONFIG: task index 'x' is not an integer"):
        resolver.task_id  # noqa: B018
    set_tf_config(monkeypatch, {"cluster": CLUSTER})
    with pytest.raises(ValueError, match="TF_CONFIG names no task"):
        resolver.master()
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "chief", "index": 0}})
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        resolver.master()


# -- Slurm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("hostlist, hosts", [
    ("n1", ["n1"]),
    ("node[01-03,7],gpu5", ["node01", "node02", "node03", "node7", "gpu5"]),
    ("n[8-10]", ["n8", "n9", "n10"]),
    ("n[098-100]", ["n098", "n099", "n100"]),
    ("r[1-2]n[1,3]", ["r1n1", "r1n3", "r2n1", "r2n3"]),
    ("a-[1-2]-x,b", ["a-1-x", "a-2-x", "b"]),
])
def test_expand_hostlist(hostlist, hosts):
    assert expand_hostlist(hostlist) == hosts


@pytest.mark.parametrize("hostlist", ["node[1-3", "node1]", "n[3-1]", "n[a-b]", "", "a,,b",
                                      "n[]"])
def test_expand_hostlist_rejects(hostlist):
    with pytest.raises(ValueError):
        expand_hostlist(hostlist)


def test_expand_tasks_per_node():
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert expand_tasks_per_node("4") == [4]
    with pytest.raises(ValueError, match="bad item '2x3'"):
        expand_tasks_per_node("2x3")


def test_slurm_assigns_ranks_to_jobs_in_order(monkeypatch):
    set_slurm(monkeypatch, procid=2, ntasks=5, nodelist="node[01-02],gpu5",
              tasks_per_node="2(x2),1")
    resolver = SlurmClusterResolver(jobs={"ps": 2, "worker": 3}, port_base=9000)
    assert resolver.cluster_spec().as_dict() == {
        "ps": ["node01:9000", "node01:9001"],
        "worker": ["node02:9000", "node02:9001", "gpu5:9000"]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 0)
    assert resolver.master() == "grpc://node02:9000"
    assert resolver.master("ps", 1) == "grpc://node01:9001"


def test_slurm_defaults_to_workers_and_reads_job_variables(monkeypatch):
    monkeypatch.setenv("SLURM_PROCID", "1")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "a,b")
    monkeypatch.setenv("SLURM_TASKS_PER_NODE", "1(x2)")
    resolver = SlurmClusterResolver()
    assert resolver.cluster_spec().as_dict() == {"worker": ["a:8888", "b:8888"]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)


def test_slurm_tasks_per_node_argument_overrides(monkeypatch):
    set_slurm(monkeypatch, procid=0, ntasks=3, nodelist="a,b", tasks_per_node="garbage")
    resolver = SlurmClusterResolver(jobs={"ps": 1, "worker": 2}, tasks_per_node={"a": 1, "b": 2})
    assert resolver.cluster_spec().as_dict() == {"ps": ["a:8888"],
                                                 "worker": ["b:8888", "b:8889"]}
    set_slurm(monkeypatch, procid=0, ntasks=4, nodelist="a,b", tasks_per_node="garbage")
    assert SlurmClusterResolver(tasks_per_node=2).cluster_spec().num_tasks("worker") == 4


@pytest.mark.parametrize("change, message", [
    ({"SLURM_PROCID": None}, "SLURM_PROCID is not set"),
    ({"SLURM_STEP_NUM_TASKS": None}, "SLURM_STEP_NUM_TASKS or SLURM_NTASKS is not set"),
    ({"SLURM_PROCID": "one"}, "Malformed SLURM_PROCID='one'"),
    ({"SLURM_STEP_NODELIST": "n[1-2"}, r"Malformed SLURM_STEP_NODELIST='n\[1-2'"),
    ({"SLURM_STEP_TASKS_PER_NODE": "1(x)"}, "Malformed SLURM_STEP_TASKS_PER_NODE"),
    ({"SLURM_STEP_TASKS_PER_NODE": "1"}, "Slurm lists 2 nodes"),
    ({"SLURM_STEP_NUM_TASKS": "3"}, "The nodes hold 2 tasks"),
    ({"SLURM_PROCID": "2"}, r"SLURM_PROCID=2 is not in \[0, 2\)"),
])
def test_slurm_malformed_environment(monkeypatch, change, message):
    set_slurm(monkeypatch, procid=0, ntasks=2, nodelist="n[1-2]", tasks_per_node="1(x2)")
    for name, value in change.items():
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        SlurmClusterResolver()


def test_slurm_jobs_must_add_up(monkeypatch):
    set_slurm(monkeypatch, procid=0, ntasks=2, nodelist="n[1-2]", tasks_per_node="1(x2)")
    with pytest.raises(ValueError, match="ask for 3 tasks but Slurm runs 2"):
        SlurmClusterResolver(jobs={"ps": 1, "worker": 2})


# -- which one applies -----------------------------------------------------------------

def test_resolve_from_environment(monkeypatch):
    assert resolve_from_environment() is None
    set_slurm(monkeypatch, procid=1, ntasks=2, nodelist="n[1-2]", tasks_per_node="1(x2)")
    resolver = resolve_from_environment(jobs={"ps": 1, "worker": 1}, port_base=7000)
    assert isinstance(resolver, SlurmClusterResolver)
    assert resolver.master() == "grpc://n2:7000"
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 0}})
    assert isinstance(resolve_from_environment(), TFConfigClusterResolver)
