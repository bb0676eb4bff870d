"""Training throughput: dtfnb against TensorFlow (tensorflow.compat.v1), in one run.

    python benchmarks/training.py [--tf-python /path/to/python-with-tensorflow] [--rounds 3]

The model is the chapter's MLP, 784-300-100-10 with ReLUs and softmax cross-entropy,
trained by plain SGD on batches of 128 synthetic examples fed from numpy. Printed, as
medians of interleaved rounds, with the ratio to TensorFlow (> 1x: dtfnb is better):

1. local: one process, `tf.Session()`.
2. async, 1 ps + N workers (N = 1, 2): between-graph replication. The ps and the
   workers are task processes (`python -m dtfnb.server`, or `tf.train.Server(...)
   .join()` for TensorFlow); each worker has its own client process that builds the
   graph under `replica_device_setter` and runs `minimize(loss, global_step)` against
   its worker task. The chief initializes, the others wait. Steps/s count every
   worker's steps, timed from "go" until the last worker has run its share.
3. sync, 1 ps + N workers: in-graph replication. One client (this process, or
   TensorFlow's worker process) builds a tower per worker task; the towers' gradients
   are averaged on the ps and applied once per step. A step trains on N batches.

Samples/s are steps/s times 128 (times N for sync). The numpy compute floor, printed
after the table, is one step's arithmetic done directly in numpy in this process: no
framework can go below it on this machine.

dtfnb runs in this process and its children; TensorFlow in the interpreter given by
--tf-python, which runs this script in worker mode with its own tasks and clients.
Every subprocess stops when this one exits. The machine may be shared: compare the
ratios, measured in the same run, rather than the absolute figures.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cluster import (  # noqa: E402
    LineChild,
    dtfnb_env,
    exit_on_sigterm,
    free_ports,
    is_dtfnb,
    spawn_task,
    watch_parent,
)
from _compare import load_tf1, main, make_parser  # noqa: E402

SCRIPT = os.path.abspath(__file__)
LAYERS = (784, 300, 100, 10)
BATCH = 128
LEARNING_RATE = 0.01


def _load(impl):
    if impl == "dtfnb":
        import dtfnb

        return dtfnb
    return load_tf1()


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((BATCH, LAYERS[0]), dtype=np.float32),
            rng.integers(0, LAYERS[-1], BATCH).astype(np.int64))


def _mlp_loss(tf, X, y, params):
    hidden = X
    for i, (W, b) in enumerate(params):
        hidden = tf.matmul(hidden, W) + b
        if i < len(params) - 1:
            hidden = tf.nn.relu(hidden)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=hidden))


def _mlp_params(tf):
    params = []
    for i, (n_in, n_out) in enumerate(zip(LAYERS, LAYERS[1:])):
        W = tf.Variable(tf.truncated_normal([n_in, n_out], stddev=2 / np.sqrt(n_in)),
                        name=f"W{i}")
        params.append((W, tf.Variable(tf.zeros([n_out]), name=f"b{i}")))
    return params


def _placeholders(tf):
    return (tf.placeholder(tf.float32, [None, LAYERS[0]], name="X"),
            tf.placeholder(tf.int64, [None], name="y"))


def _steps(sess, train_op, feed):
    def measure(n):
        start = time.perf_counter()
        for _ in range(n):
            sess.run(train_op, feed_dict=feed)
        return time.perf_counter() - start

    return measure


# ---------------------------------------------------------------------------
# 1. Local.


def local(tf):
    graph = tf.Graph()
    with graph.as_default():
        X, y = _placeholders(tf)
        loss = _mlp_loss(tf, X, y, _mlp_params(tf))
        train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    X_batch, y_batch = _batch()
    return _steps(sess, train_op, {X: X_batch, y: y_batch})


# ---------------------------------------------------------------------------
# 2. Async between-graph: a client process per worker.


def train_client_main(impl, cluster_json, task):
    """`--train-client`: one worker's client. Answers `N` with the seconds N steps took."""
    tf = _load(impl)
    watch_parent()
    cluster = json.loads(cluster_json)
    with tf.device(tf.train.replica_device_setter(
            cluster=tf.train.ClusterSpec(cluster), worker_device=f"/job:worker/task:{task}")):
        X, y = _placeholders(tf)
        loss = _mlp_loss(tf, X, y, _mlp_params(tf))
        train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
    sess = tf.Session(f"grpc://{cluster['worker'][task]}")
    if task == 0:
        sess.run(tf.global_variables_initializer())
    else:
        uninitialized = tf.report_uninitialized_variables()
        while len(sess.run(uninitialized)):
            time.sleep(0.05)
    X_batch, y_batch = _batch(task)
    measure = _steps(sess, train_op, {X: X_batch, y: y_batch})
    print("ready", flush=True)
    for line in sys.stdin:
        print(measure(int(line)), flush=True)
    sess.close()


def _start_cluster(tf, n_workers):
    ports = free_ports(1 + n_workers)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"],
               "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    for job, addresses in cluster.items():
        for task, address in enumerate(addresses):
            spawn_task(tf, cluster, job, task, int(address.rpartition(":")[2]))
    return cluster


def async_training(n_workers):
    def build(tf):
        impl = "dtfnb" if is_dtfnb(tf) else "tensorflow"
        cluster = _start_cluster(tf, n_workers)
        env = dtfnb_env() if impl == "dtfnb" else None
        clients = []
        for task in range(n_workers):  # the chief first: the others wait for its init
            client = LineChild([sys.executable, SCRIPT, "--train-client", "--impl", impl,
                                "--cluster", json.dumps(cluster), "--task", str(task)],
                               f"{impl} worker {task} client", env)
            client.wait_ready()
            clients.append(client)

        def measure(n):
            start = time.perf_counter()
            for client in clients:
                client.send(str(n))
            for client in clients:
                client.reply()
            return (time.perf_counter() - start) / n_workers  # per step of any worker

        return measure

    return build


# ---------------------------------------------------------------------------
# 3. Sync in-graph: towers on the workers, averaged gradients on the ps.


def sync_training(n_workers):
    def build(tf):
        cluster = _start_cluster(tf, n_workers)
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                params = _mlp_params(tf)
                global_step = tf.train.get_or_create_global_step()
            opt = tf.train.GradientDescentOptimizer(LEARNING_RATE)
            feed, tower_grads = {}, []
            for task in range(n_workers):
                with tf.device(f"/job:worker/task:{task}"), tf.name_scope(f"tower_{task}"):
                    X, y = _placeholders(tf)
                    feed[X], feed[y] = _batch(task)
                    tower_grads.append(opt.compute_gradients(_mlp_loss(tf, X, y, params)))
            with tf.device("/job:ps/task:0"):
                averaged = [(tf.add_n([g for g, _ in grads]) / n_workers, grads[0][1])
                            for grads in zip(*tower_grads)]
                train_op = opt.apply_gradients(averaged, global_step=global_step)
            sess = tf.Session(f"grpc://{cluster['worker'][0]}", graph=graph)
            sess.run(tf.global_variables_initializer())
        return _steps(sess, train_op, feed)

    return build


# ---------------------------------------------------------------------------
# The floor: one step's arithmetic in numpy.


def numpy_step_seconds(reps=200):
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.05, (n_in, n_out)).astype(np.float32)
               for n_in, n_out in zip(LAYERS, LAYERS[1:])]
    biases = [np.zeros(n, np.float32) for n in LAYERS[1:]]
    X, y = _batch()

    def step():
        activations = [X]
        for i, (W, b) in enumerate(zip(weights, biases)):
            z = activations[-1] @ W + b
            activations.append(np.maximum(z, 0) if i < len(weights) - 1 else z)
        logits = activations[-1]
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        grad = exp / exp.sum(axis=1, keepdims=True)
        grad[np.arange(BATCH), y] -= 1
        grad /= BATCH
        for i in reversed(range(len(weights))):
            grad_W, grad_b = activations[i].T @ grad, grad.sum(axis=0)
            if i:
                grad = (grad @ weights[i].T) * (activations[i] > 0)
            weights[i] -= LEARNING_RATE * grad_W
            biases[i] -= LEARNING_RATE * grad_b

    step()
    start = time.perf_counter()
    for _ in range(reps):
        step()
    return (time.perf_counter() - start) / reps


STEPS = 100  # per worker and round
WORKLOADS = {
    "local: steps/s": local,
    "async 1 ps + 1 worker: steps/s": async_training(1),
    "async 1 ps + 2 workers: steps/s": async_training(2),
    "sync 1 ps + 1 worker: steps/s": sync_training(1),
    "sync 1 ps + 2 workers: steps/s": sync_training(2),
}
# A local round of STEPS takes a tenth of a second: four times as many, for a steadier figure.
ROWS = [(name, 4 * STEPS if name.startswith("local") else STEPS, "/s") for name in WORKLOADS]
# The bars: 1.2x for the local step, 1.5x for the distributed configurations.
TARGETS = {name: 1.2 if name.startswith("local") else 1.5 for name in WORKLOADS}


def _samples_per_second(results):
    """Samples/s from the medians (seconds per step): a sync step trains on N batches."""
    print()
    print(f"{'samples/s':<34}{'dtfnb':>14}{'TensorFlow':>14}")
    for name, medians in results.items():
        per_step = BATCH * (int(name.split("+ ")[1][0]) if name.startswith("sync") else 1)
        figures = [f"{per_step / medians[impl]:>13.0f} " if impl in medians else f"{'':>14}"
                   for impl in ("dtfnb", "tensorflow")]
        print(f"{name.replace(': steps/s', ''):<34}{''.join(figures)}")


if __name__ == "__main__":
    parser = make_parser(__doc__, rounds=3)
    parser.add_argument("--train-client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", choices=("dtfnb", "tensorflow"), help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    parser.add_argument("--task", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train_client:
        train_client_main(args.impl, args.cluster, args.task)
    else:
        exit_on_sigterm()
        results = main(SCRIPT, WORKLOADS, ROWS, args=args, targets=TARGETS)
        if results is not None and not args.json:
            _samples_per_second(results)
            floor = numpy_step_seconds()
            print(f"\nnumpy compute floor: {floor * 1e3:.2f} ms per step "
                  f"({1 / floor:.0f} steps/s, {BATCH / floor:.0f} samples/s)")
