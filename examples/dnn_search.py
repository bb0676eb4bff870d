"""Exercise 8: a hyperparameter search, one client process per DNN, each on its own device
and in its own resource container. Run as a script, this file is the client that trains
one DNN and prints its results as one JSON line:

    python examples/dnn_search.py --data digits.npz --target grpc://127.0.0.1:2222 \\
        --device /job:worker/task:0/cpu:0 --container dnn-0 --hidden 100,50

Imported, `search` starts one client per configuration of `GRID`, all at once, on a
cluster of worker tasks with two CPU devices each (notebooks 09 and 10 both run it).
"""

import argparse
import json
import subprocess
import sys
import time

import numpy as np

import dtfnb as tf
from dtfnb.notebook.experiment import Proportion

GRID = [
    {"hidden": "64", "activation": "relu", "optimizer": "sgd", "learning_rate": 0.1},
    {"hidden": "128,64", "activation": "relu", "optimizer": "momentum", "learning_rate": 0.02},
    {"hidden": "100", "activation": "elu", "optimizer": "adam", "learning_rate": 0.002},
    {"hidden": "64,64", "activation": "tanh", "optimizer": "sgd", "learning_rate": 0.5},
    {"hidden": "32", "activation": "relu", "optimizer": "adam", "learning_rate": 0.01},
    {"hidden": "16", "activation": "tanh", "optimizer": "sgd", "learning_rate": 0.01},
]
ACTIVATIONS = {"relu": tf.nn.relu, "elu": tf.nn.elu, "tanh": tf.tanh}
OPTIMIZERS = {"sgd": tf.train.GradientDescentOptimizer,
              "momentum": lambda rate: tf.train.MomentumOptimizer(rate, momentum=0.9),
              "adam": tf.train.AdamOptimizer}


def describe(params):
    """A configuration in one line: "[100,50] relu, adam 0.01"."""
    return (f"[{params['hidden']}] {params['activation']}, "
            f"{params['optimizer']} {params['learning_rate']}")


def logits(X, params):
    """The DNN of a configuration: its hidden layers, then 10 outputs."""
    hidden = X
    for n_neurons in map(int, params["hidden"].split(",")):
        hidden = tf.layers.dense(hidden, n_neurons, activation=ACTIVATIONS[params["activation"]])
    return tf.layers.dense(hidden, 10)


def optimizer(params):
    """The configuration's optimizer with its learning rate."""
    return OPTIMIZERS[params["optimizer"]](params["learning_rate"])


def train(args):
    """The client: trains one DNN where `args` say; returns its correct answers on the
    validation set after the last epoch, and its training seconds."""
    data = np.load(args.data)
    X_train, y_train, X_valid, y_valid = (data[name] for name in
                                          ("X_train", "y_train", "X_valid", "y_valid"))
    params = {"hidden": args.hidden, "activation": args.activation,
              "optimizer": args.optimizer, "learning_rate": args.learning_rate}
    tf.set_random_seed(args.seed)
    with tf.container(args.container), tf.device(args.device):
        X_ = tf.placeholder(tf.float32, shape=(None, 64), name="X")
        y_ = tf.placeholder(tf.int64, shape=(None), name="y")
        output = logits(X_, params)
        xentropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_, logits=output)
        training_op = optimizer(params).minimize(tf.reduce_mean(xentropy))
        correct = tf.reduce_sum(tf.cast(tf.nn.in_top_k(output, y_, 1), tf.int32))
        init = tf.global_variables_initializer()

    rng = np.random.RandomState(args.seed)
    with tf.Session(args.target) as sess:
        init.run()
        start = time.perf_counter()
        for _ in range(args.epochs):
            for batch in np.array_split(rng.permutation(len(X_train)),
                                        len(X_train) // args.batch_size):
                sess.run(training_op, feed_dict={X_: X_train[batch], y_: y_train[batch]})
        seconds = time.perf_counter() - start
        right = int(correct.eval(feed_dict={X_: X_valid, y_: y_valid}))
    return {"correct": right, "examples": len(y_valid), "seconds": seconds}


def command(data_file, target, device, container, params, seed):
    """The command line of the client that trains `params` on `device`."""
    options = ["--data", data_file, "--target", target, "--device", device,
               "--container", container, "--seed", str(seed)]
    for name, value in params.items():
        options += ["--" + name.replace("_", "-"), str(value)]
    return [sys.executable, __file__, *options]


def device_of(i):
    """Network i's device: CPU i mod 2 of worker task i // 2."""
    task, cpu = divmod(i, 2)
    return task, f"/job:worker/task:{task}/cpu:{cpu}"


def search(cluster, data_file, seed=42, grid=GRID, timeout=300):
    """Trains every configuration of `grid` at once, one client process each, network i
    on device_of(i) in container dnn-i (freed afterwards). Returns what compare_together
    takes: {describe(params): its validation accuracy and training seconds}, and for
    "all at once" the seconds from the start to the last result."""
    start = time.perf_counter()
    clients = []
    for i, params in enumerate(grid):
        task, device = device_of(i)
        clients.append(subprocess.Popen(
            command(data_file, cluster.target("worker", task), device, f"dnn-{i}", params, seed),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    measures = {}
    for params, client in zip(grid, clients):
        out, err = client.communicate(timeout=timeout)
        if client.returncode != 0:
            raise RuntimeError(err.strip().splitlines()[-1])
        result = json.loads(out)
        measures[describe(params)] = {
            "validation accuracy": Proportion(result["correct"], result["examples"]),
            "training seconds": result["seconds"]}
    measures["all at once"] = {"seconds to the last result": time.perf_counter() - start}
    tf.Session.reset(cluster.target("worker", 0), [f"dnn-{i}" for i in range(len(grid))])
    return measures


def ranking(result, measure="validation accuracy"):
    """The configurations of search()'s Result, best first: by median, then by mean."""
    names = [name for name in result.names if measure in result.runs[name][0]]
    return sorted(names, key=lambda name: (-result.summary(name, measure).median,
                                                  -np.mean(result.values(name, measure))))


def _parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="training and validation sets, .npz")
    parser.add_argument("--target", required=True, help="the master: grpc://host:port")
    parser.add_argument("--device", required=True, help="where the DNN runs")
    parser.add_argument("--container", required=True, help="the resource container")
    parser.add_argument("--hidden", default="64", help="neurons per hidden layer: 100,50")
    parser.add_argument("--activation", default="relu", choices=sorted(ACTIVATIONS))
    parser.add_argument("--optimizer", default="sgd", choices=sorted(OPTIMIZERS))
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(json.dumps(train(_parse())))
