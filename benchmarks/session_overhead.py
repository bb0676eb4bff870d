"""Local-session overhead: dtfnb against TensorFlow (tensorflow.compat.v1), in one run.

    python benchmarks/session_overhead.py [--tf-python /path/to/python-with-tensorflow]

Prints the median latency of `sess.run` on a trivial graph (v + 1) and the steps/s of
a 784-300-100-10 ReLU MLP SGD step (batch 128), fed through `sess.run(feed_dict=...)`
and through a callable (`sess.make_callable`), each with the ratio to TensorFlow
(> 1x: dtfnb is faster) and the issue's target for it. Nothing is installed:
TensorFlow is used only where it already is.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _compare import main  # noqa: E402


def trivial_run(tf):
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(1.0, name="v")
        y = v + 1
    sess = tf.Session(graph=graph)
    sess.run(v.initializer)

    def measure(n):
        start = time.perf_counter()
        for _ in range(n):
            sess.run(y)
        return time.perf_counter() - start

    return measure


def neuron_layer(tf, X, n_neurons, name, activation=None):
    """The book's hand-written dense layer (TF 2.21's tf.layers needs Keras 2)."""
    n_inputs = int(X.get_shape()[1])
    with tf.name_scope(name):
        W = tf.Variable(tf.truncated_normal((n_inputs, n_neurons),
                                            stddev=2 / np.sqrt(n_inputs)), name="kernel")
        b = tf.Variable(tf.zeros([n_neurons]), name="bias")
        Z = tf.matmul(X, W) + b
        return activation(Z) if activation is not None else Z


def _mlp(tf):
    """The chapter's MLP and its training op in a session: (sess, training_op, X, y,
    a batch for X, one for y)."""
    rng = np.random.default_rng(0)
    x_batch = rng.standard_normal((128, 784)).astype(np.float32)
    y_batch = rng.integers(0, 10, 128).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        X = tf.placeholder(tf.float32, shape=(None, 784), name="X")
        y = tf.placeholder(tf.int64, shape=(None,), name="y")
        hidden1 = neuron_layer(tf, X, 300, "hidden1", activation=tf.nn.relu)
        hidden2 = neuron_layer(tf, hidden1, 100, "hidden2", activation=tf.nn.relu)
        logits = neuron_layer(tf, hidden2, 10, "outputs")
        xentropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        loss = tf.reduce_mean(xentropy, name="loss")
        training_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return sess, training_op, X, y, x_batch, y_batch


def mlp_step(tf):
    sess, training_op, X, y, x_batch, y_batch = _mlp(tf)
    feed = {X: x_batch, y: y_batch}

    def measure(n):
        start = time.perf_counter()
        for _ in range(n):
            sess.run(training_op, feed_dict=feed)
        return time.perf_counter() - start

    return measure


def mlp_callable_step(tf):
    sess, training_op, X, y, x_batch, y_batch = _mlp(tf)
    step = sess.make_callable(training_op, feed_list=[X, y])

    def measure(n):
        start = time.perf_counter()
        for _ in range(n):
            step(x_batch, y_batch)
        return time.perf_counter() - start

    return measure


WORKLOADS = {"sess.run(v + 1) latency": trivial_run, "MLP SGD step (batch 128)": mlp_step,
             "MLP SGD step, callable": mlp_callable_step}
# The bar for the local MLP step.
TARGETS = {"MLP SGD step (batch 128)": 1.2, "MLP SGD step, callable": 1.2}

if __name__ == "__main__":
    main(os.path.abspath(__file__), WORKLOADS,
         [("sess.run(v + 1) latency", 2000, "us"), ("MLP SGD step (batch 128)", 200, "/s"),
          ("MLP SGD step, callable", 200, "/s")], targets=TARGETS)
