"""Kubernetes: a cluster as a Kubeflow TFJob manifest, and the TF_CONFIG each replica sees.

    manifest = to_tfjob({"chief": 1, "ps": 2, "worker": 4}, name="mnist",
                        image="registry.example.com/me/dtfnb:0.1")
    print(json.dumps(manifest, indent=2))   # JSON is YAML: kubectl apply -f mnist.json
    tf_configs(manifest)                    # {("ps", 1): '{"cluster":...}', ...}

dtfnb starts no pods: the Kubeflow training operator does. Every replica runs
`python -m dtfnb.server`, which reads the TF_CONFIG the operator sets (see
distributed_runtime/resolvers.py) and serves at its replica's service name,
`<name>-<replica type>-<index>.<namespace>.svc:<port>`. The cluster token reaches each
replica's environment from a Kubernetes Secret, never from the manifest.
`tf_configs` computes TF_CONFIG from a manifest as the operator does (kubeflow/training-
operator, release 1.9, pkg/controller.v1/tensorflow/tensorflow.go), so that what each
replica will see can be read, and tested, without a Kubernetes cluster.
"""

import json
import re

from dtfnb.distributed_runtime.cluster import ClusterSpec
from dtfnb.distributed_runtime.transport.rpc import TOKEN_VARIABLE

API_VERSION = "kubeflow.org/v1"
# TensorFlow's job names and the replica types of a TFJob ("Master" is the old "Chief").
REPLICA_TYPES = {"chief": "Chief", "master": "Master", "ps": "PS", "worker": "Worker",
                 "evaluator": "Evaluator"}
CONTAINER = "tensorflow"   # the operator sets TF_CONFIG in the container of this name only
PORT_NAME = "tfjob-port"   # and takes the port of this name (else 2222) for every replica
DEFAULT_PORT = 2222
_DNS_LABEL = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")   # RFC 1035, as the operator checks


def to_tfjob(cluster, name, image, namespace="default", port=DEFAULT_PORT,
             token_secret="dtfnb-cluster-token", token_key="token", python="python",
             server_args=(), sparse=False):
    """A TFJob manifest (a dict, as `kubectl apply` takes it) with a replica spec per job of
    `cluster`, and as many replicas as the job has tasks.

    `cluster`: a ClusterSpec, or what ClusterSpec takes, or {job: number of tasks}; the
    addresses are not used (the operator names the replicas), only the jobs (chief, master,
    ps, worker, evaluator) and their task counts. Each replica runs `python -m
    dtfnb.server` (`python`: the image's interpreter; `server_args`: more flags) in a
    container `image` has, serving on `port`, with the cluster token from key `token_key`
    of the Secret `token_secret` (`kubectl create secret generic dtfnb-cluster-token
    --from-literal=token=...`). `sparse`: the operator's `enableDynamicWorker`, in which
    each worker's TF_CONFIG names only the ps tasks and itself, so that workers may come
    and go; it serves workers and one ps task (TensorFlow cannot start ps task 1 from
    what the operator gives it, nor a worker without a ps).
    """
    if not _DNS_LABEL.fullmatch(name):
        raise ValueError(f"A TFJob's name must be a DNS label (RFC 1035: lower case letters, "
                         f"digits and '-', from a letter, at most 63): not {name!r}")
    counts = _task_counts(cluster)
    if {"chief", "master"} <= set(counts):
        raise ValueError("A TFJob has one chief: a chief job or a master job, not both")
    unknown = sorted(set(counts) - set(REPLICA_TYPES))
    if unknown:
        raise ValueError(f"A TFJob has no replica type for the jobs {unknown}: name them "
                         f"among {sorted(REPLICA_TYPES)}")
    if sparse and (set(counts) - {"ps", "worker"} or counts.get("ps") != 1):
        raise ValueError("A sparse TF_CONFIG (enableDynamicWorker) makes a cluster of "
                         f"workers and one ps task only; this one has {counts}")
    def container():   # one per replica spec: a user may edit one (GPUs for the workers)
        return {
            "name": CONTAINER,
            "image": image,
            # --bind: the pod's service name may not resolve yet when its task starts
            "command": [python, "-m", "dtfnb.server", "--bind", "0.0.0.0", *server_args],
            "ports": [{"name": PORT_NAME, "containerPort": port}],
            "env": [{"name": TOKEN_VARIABLE,
                     "valueFrom": {"secretKeyRef": {"name": token_secret, "key": token_key}}}],
        }

    spec = {
        # Pods still running when the job ends (ps tasks serve until stopped) are deleted.
        "runPolicy": {"cleanPodPolicy": "All"},
        "tfReplicaSpecs": {REPLICA_TYPES[job]: {
            "replicas": n, "template": {"spec": {"containers": [container()]}}}
            for job, n in counts.items()},
    }
    if sparse:
        spec["enableDynamicWorker"] = True
    return {"apiVersion": API_VERSION, "kind": "TFJob",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _task_counts(cluster):
    if isinstance(cluster, dict) and all(isinstance(n, int) for n in cluster.values()):
        return dict(cluster)
    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    counts = {}
    for job in spec.jobs:
        indices = spec.task_indices(job)
        if indices != list(range(len(indices))):
            raise ValueError(f"A TFJob's replicas are numbered from 0 with no gap; job "
                             f"{job!r} has the tasks {indices}")
        counts[job] = len(indices)
    return counts


def tf_configs(manifest, cluster_domain=None):
    """{(job, index): the TF_CONFIG JSON text of that replica}, as the training operator
    computes it from `manifest`; {} for a job of one replica, which gets none.

    Every replica's cluster holds every replica type, the evaluator's too, at
    `<name>-<type>-<index>.<namespace>.svc[.<cluster_domain>]:<port>`, and `environment`
    is "cloud"; with `enableDynamicWorker` a worker's holds the ps tasks and itself
    (`{"worker": {"3": ...}}`), a ps's itself, any other's nothing. `cluster_domain`:
    the operator's $CUSTOM_CLUSTER_DOMAIN."""
    metadata, spec = manifest["metadata"], manifest["spec"]
    replicas = {rtype.lower(): replica.get("replicas", 1)
                for rtype, replica in spec["tfReplicaSpecs"].items()}
    if sum(replicas.values()) == 1:
        return {}
    namespace = metadata.get("namespace", "default")
    suffix = f".{cluster_domain}" if cluster_domain else ""
    cluster = {}
    for rtype, replica in sorted(spec["tfReplicaSpecs"].items(), key=lambda r: r[0].lower()):
        job, port = rtype.lower(), _port(replica)
        cluster[job] = [f"{metadata['name']}-{job}-{i}.{namespace}.svc{suffix}:{port}"
                        for i in range(replicas[job])]
    configs = {}
    for job, n in replicas.items():
        for index in range(n):
            task = {"type": job, "index": index}
            if spec.get("enableDynamicWorker"):
                config = {"cluster": _sparse(cluster, job, index), "task": task}
            else:
                config = {"cluster": cluster, "task": task, "environment": "cloud"}
            configs[job, index] = json.dumps(config, separators=(",", ":"))
    return configs


def _port(replica):
    for container in replica["template"]["spec"]["containers"]:
        if container["name"] == CONTAINER:
            for port in container.get("ports", []):
                if port.get("name") == PORT_NAME:
                    return port["containerPort"]
    return DEFAULT_PORT


def _sparse(cluster, job, index):
    """The operator's sparse cluster of one replica (its ps list starts at this ps task)."""
    if job == "ps":
        return {"worker": {}, "ps": [cluster["ps"][index]]}
    if job == "worker":
        return {"worker": {str(index): cluster["worker"][index]}, "ps": cluster.get("ps")}
    return {"worker": {}, "ps": []}
