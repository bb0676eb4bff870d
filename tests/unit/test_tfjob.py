"""TFJob manifests (dtfnb/launch/tfjob.py): valid against the TFJob CRD and the operator's
admission checks, and the TF_CONFIG of each replica as the training operator computes it.
The round trip through real task processes is in distributed/test_namespace_hosts.py."""

import json

import pytest

import dtfnb as tf
from dtfnb.launch.tfjob import tf_configs, to_tfjob


def _object(required=(), **properties):
    return {"type": "object", "required": list(required), "properties": properties}


def _array(items):
    return {"type": "array", "items": items}


_STRING, _INTEGER, _BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

# The part of the TFJob CRD's openAPIV3Schema that to_tfjob's manifests reach (kubeflow/
# training-operator release 1.9, manifests/base/crds/kubeflow.org_tfjobs.yaml): each level's
# type and required fields. A field it does not list is an error here, where Kubernetes
# would silently drop it.
_CONTAINER = _object(
    ["name"], name=_STRING, image=_STRING, command=_array(_STRING), args=_array(_STRING),
    ports=_array(_object(["containerPort"], containerPort=_INTEGER, name=_STRING,
                         protocol=_STRING)),
    env=_array(_object(["name"], name=_STRING, value=_STRING, valueFrom=_object(
        secretKeyRef=_object(["key"], key=_STRING, name=_STRING, optional=_BOOLEAN)))))
_REPLICA = _object(replicas=_INTEGER, restartPolicy=_STRING, template=_object(
    metadata=_object(), spec=_object(["containers"], containers=_array(_CONTAINER))))
TFJOB_SCHEMA = _object(
    apiVersion=_STRING, kind=_STRING,
    metadata=_object(name=_STRING, namespace=_STRING),
    spec=_object(["tfReplicaSpecs"], enableDynamicWorker=_BOOLEAN,
                 runPolicy=_object(cleanPodPolicy=_STRING, backoffLimit=_INTEGER),
                 tfReplicaSpecs={"type": "object", "additionalProperties": _REPLICA}))
_TYPES = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}


def schema_errors(value, schema, path="manifest"):
    """What in `value` the schema refuses, as 'path: problem' lines."""
    if not isinstance(value, _TYPES[schema["type"]]) or (
            schema["type"] == "integer" and isinstance(value, bool)):
        return [f"{path}: not of type {schema['type']}"]
    errors = []
    if schema["type"] == "array":
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{i}]")
    elif schema["type"] == "object":
        errors += [f"{path}.{field}: required" for field in schema.get("required", ())
                   if field not in value]
        for field, item in value.items():
            known = schema.get("properties", {}).get(field, schema.get("additionalProperties"))
            errors += ([f"{path}.{field}: not in the schema"] if known is None
                       else schema_errors(item, known, f"{path}.{field}"))
    return errors


def admission_errors(manifest):
    """What the operator's admission webhook (tfjob_webhook.go) refuses in `manifest`."""
    specs = manifest["spec"]["tfReplicaSpecs"]
    errors = [f"{rtype}: not a replica type" for rtype in specs
              if rtype not in ("Chief", "Master", "PS", "Worker", "Evaluator")]
    if len({"Chief", "Master"} & set(specs)) > 1:
        errors.append("more than 1 Chief or Master role")
    for rtype, spec in specs.items():
        containers = spec["template"]["spec"]["containers"]
        errors += [f"{rtype}: container {c['name']} has no image" for c in containers
                   if not c.get("image")]
        if not any(c["name"] == "tensorflow" for c in containers):
            errors.append(f"{rtype}: no container named tensorflow")
    return errors


def test_a_manifest_has_a_replica_spec_per_job_that_runs_the_task_command():
    manifest = to_tfjob({"chief": 1, "ps": 2, "worker": 3, "evaluator": 1}, name="mnist",
                        image="registry.example.com/dtfnb:0.1", namespace="lab", port=2345,
                        server_args=["--cpus", "2"])
    assert schema_errors(manifest, TFJOB_SCHEMA) == []
    assert admission_errors(manifest) == []
    assert manifest["apiVersion"] == "kubeflow.org/v1" and manifest["kind"] == "TFJob"
    assert manifest["metadata"] == {"name": "mnist", "namespace": "lab"}
    specs = manifest["spec"]["tfReplicaSpecs"]
    assert {rtype: spec["replicas"] for rtype, spec in specs.items()} == {
        "Chief": 1, "PS": 2, "Worker": 3, "Evaluator": 1}
    container, = specs["Worker"]["template"]["spec"]["containers"]
    assert container["command"] == ["python", "-m", "dtfnb.server", "--bind", "0.0.0.0",
                                    "--cpus", "2"]
    assert container["ports"] == [{"name": "tfjob-port", "containerPort": 2345}]
    # The token comes from a Secret: the manifest holds none.
    assert container["env"] == [{"name": "DTFNB_CLUSTER_TOKEN", "valueFrom": {
        "secretKeyRef": {"name": "dtfnb-cluster-token", "key": "token"}}}]
    assert not any("value" in env for spec in specs.values()
                   for env in spec["template"]["spec"]["containers"][0]["env"])


def test_the_schema_check_refuses_what_the_crd_refuses():
    manifest = to_tfjob({"ps": 1, "worker": 1}, name="j", image="i")
    container = manifest["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["containers"][0]
    del container["ports"][0]["containerPort"]
    container["env"][0]["valueFrom"]["secretKeyRef"].pop("key")
    container["env"][0]["valueFrom"]["secretKeyRef"]["keys"] = "token"
    manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "1"
    prefix = "manifest.spec.tfReplicaSpecs"
    assert schema_errors(manifest, TFJOB_SCHEMA) == [
        f"{prefix}.PS.template.spec.containers[0].ports[0].containerPort: required",
        f"{prefix}.PS.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key: required",
        f"{prefix}.PS.template.spec.containers[0].env[0].valueFrom.secretKeyRef.keys: "
        "not in the schema",
        f"{prefix}.Worker.replicas: not of type integer"]
    del manifest["spec"]["tfReplicaSpecs"]
    assert schema_errors(manifest, TFJOB_SCHEMA) == ["manifest.spec.tfReplicaSpecs: required"]


def test_a_cluster_spec_gives_its_jobs_and_task_counts():
    spec = tf.train.ClusterSpec({"ps": ["a:1"], "worker": ["b:1", "c:1"]})
    manifest = to_tfjob(spec, name="from-spec", image="i")
    assert manifest == to_tfjob({"ps": 1, "worker": 2}, name="from-spec", image="i")
    assert manifest == to_tfjob(spec.as_dict(), name="from-spec", image="i")
    with pytest.raises(ValueError, match=r"no gap; job 'worker' has the tasks \[1\]"):
        to_tfjob({"worker": {1: "b:1"}}, name="j", image="i")
    with pytest.raises(ValueError, match=r"no replica type for the jobs \['local'\]"):
        to_tfjob({"local": 1}, name="j", image="i")
    with pytest.raises(ValueError, match="chief job or a master job, not both"):
        to_tfjob({"chief": 1, "master": 1}, name="j", image="i")
    with pytest.raises(ValueError, match="must be a DNS label"):
        to_tfjob({"worker": 2}, name="My_Job", image="i")
    with pytest.raises(ValueError, match="workers and one ps task only"):
        to_tfjob({"chief": 1, "ps": 1, "worker": 2}, name="j", image="i", sparse=True)


# The operator's own expectations (pkg/controller.v1/tensorflow/pod_test.go and
# tensorflow_test.go, release 1.9), for a TFJob named test-tfjob.

def test_tf_config_is_the_operators():
    manifest = to_tfjob({"evaluator": 1, "ps": 1, "worker": 1}, name="test-tfjob", image="i",
                        namespace="ns3")
    configs = tf_configs(manifest, cluster_domain="tf.training.io")
    assert configs["worker", 0] == (
        '{"cluster":{"evaluator":["test-tfjob-evaluator-0.ns3.svc.tf.training.io:2222"],'
        '"ps":["test-tfjob-ps-0.ns3.svc.tf.training.io:2222"],'
        '"worker":["test-tfjob-worker-0.ns3.svc.tf.training.io:2222"]},'
        '"task":{"type":"worker","index":0},"environment":"cloud"}')
    assert sorted(configs) == [("evaluator", 0), ("ps", 0), ("worker", 0)]
    assert json.loads(tf_configs(manifest)["ps", 0])["cluster"]["ps"] == [
        "test-tfjob-ps-0.ns3.svc:2222"]
    # One replica is not distributed: it gets no TF_CONFIG.
    assert tf_configs(to_tfjob({"worker": 1}, name="test-tfjob", image="i")) == {}


def test_a_sparse_tf_config_names_the_ps_and_the_worker_itself():
    manifest = to_tfjob({"ps": 1, "worker": 2}, name="test-tfjob", image="i", sparse=True)
    assert manifest["spec"]["enableDynamicWorker"] is True
    assert schema_errors(manifest, TFJOB_SCHEMA) == []
    configs = {key: json.loads(text) for key, text in tf_configs(manifest).items()}
    assert configs["worker", 1] == {
        "cluster": {"worker": {"1": "test-tfjob-worker-1.default.svc:2222"},
                    "ps": ["test-tfjob-ps-0.default.svc:2222"]},
        "task": {"type": "worker", "index": 1}}
    assert configs["ps", 0]["cluster"] == {"worker": {},
                                           "ps": ["test-tfjob-ps-0.default.svc:2222"]}
    # As TensorFlow reads it: worker 1 of a job whose other workers it does not know.
    spec = tf.train.ClusterSpec(configs["worker", 1]["cluster"])
    assert spec.task_indices("worker") == [1] and spec.num_tasks("ps") == 1


def test_a_cluster_writes_the_manifest_of_its_jobs():
    from dtfnb.launch import LocalCluster
    cluster = LocalCluster({"chief": 1, "ps": 2, "worker": 3}, start=False)
    manifest = cluster.to_tfjob("mnist", image="example.com/dtfnb:0.1", port=2300)
    assert manifest == to_tfjob({"chief": 1, "ps": 2, "worker": 3}, "mnist",
                                "example.com/dtfnb:0.1", port=2300)
    assert {job: spec["replicas"] for job, spec in
            manifest["spec"]["tfReplicaSpecs"].items()} == {"Chief": 1, "PS": 2, "Worker": 3}
