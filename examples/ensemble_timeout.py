"""An in-graph ensemble that survives a crashed member, with the chapter's timeout pattern.

Each member is a network on its own worker task. After training, every member
pushes its class probabilities for the test set into a queue on the ps; the
aggregator dequeues them with a deadline (`RunOptions(timeout_in_ms=...)`), so a
member whose task crashed only costs one timeout: the ensemble votes without it.

    python -m examples.ensemble_timeout --members 3 --crash 2
"""

import argparse
import threading

import numpy as np

import dtfnb as tf
from examples import digits
from examples.launch import cluster_or_local


def build(n_members, learning_rate):
    """Returns ([(train_op, enqueue_op) per member], X, y, dequeue, queue)."""
    X, y = digits.placeholders(tf)
    with tf.device("/job:ps/task:0"):
        predictions = tf.FIFOQueue(n_members, [tf.float32], name="predictions")
    members = []
    for i in range(n_members):
        with tf.device(f"/job:worker/task:{i}"), tf.name_scope(f"member_{i}"):
            params = digits.model_params(tf, seed=i, name=f"member_{i}")
            loss = digits.loss(tf, params, X, y)
            train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
            probabilities = tf.nn.softmax(digits.logits(tf, params, X))
        with tf.device("/job:ps/task:0"):  # a queue's ops run where the queue lives
            members.append((train_op, predictions.enqueue([probabilities])))
    return members, X, y, predictions.dequeue()


def vote(sess, dequeue, n_members, timeout_in_ms):
    """Averages the probabilities that arrive before each dequeue's deadline."""
    options = tf.RunOptions(timeout_in_ms=timeout_in_ms)
    received = []
    for _ in range(n_members):
        try:
            received.append(sess.run(dequeue, options=options))
        except tf.errors.DeadlineExceededError:
            break  # the members still missing are not coming
    return np.mean(received, axis=0), len(received)


def run(cluster, n_members, steps, batch_size, learning_rate, crash, timeout_in_ms):
    data = digits.load_digits()
    with tf.Graph().as_default():
        members, X, y, dequeue = build(n_members, learning_rate)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            stream = digits.batches(data.X_train, data.y_train, batch_size)
            train_ops = [train_op for train_op, _ in members]
            for _ in range(steps):  # one step trains every member, each on its task
                X_batch, y_batch = next(stream)
                sess.run(train_ops, feed_dict={X: X_batch, y: y_batch})
            if crash is not None:
                cluster.kill("worker", crash)
            failures = []

            def predict(enqueue):
                try:
                    sess.run(enqueue, feed_dict={X: data.X_test})
                except tf.errors.OpError as err:  # its task is gone
                    failures.append(err)

            threads = [threading.Thread(target=predict, args=(enqueue,))
                       for _, enqueue in members]
            for thread in threads:
                thread.start()
            probabilities, answered = vote(sess, dequeue, n_members, timeout_in_ms)
            for thread in threads:
                thread.join()
            return {"accuracy": digits.accuracy(probabilities, data.y_test),
                    "members_answered": answered, "failures": [type(e).__name__
                                                              for e in failures]}


def main(n_members=3, steps=200, batch_size=32, learning_rate=0.3, crash=None,
         timeout_in_ms=2000, cluster=None):
    """Trains `n_members` networks on as many worker tasks; crashes member `crash`'s task
    before they predict. Starts its own cluster unless `cluster` is given."""
    with cluster_or_local(cluster, {"ps": 1, "worker": n_members}) as cluster:
        return run(cluster, n_members, steps, batch_size, learning_rate, crash,
                   timeout_in_ms)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--crash", type=int, help="kill this member's task before voting")
    parser.add_argument("--timeout-ms", type=int, default=2000)
    args = parser.parse_args()
    print(main(args.members, args.steps, crash=args.crash, timeout_in_ms=args.timeout_ms))
