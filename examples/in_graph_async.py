"""In-graph replication, asynchronous updates: one client builds one graph with a tower
and an optimizer per worker task, and runs each tower's training op from its own thread.
Each tower applies its gradients as soon as it has them, so they are stale: the ps
reports by how many global steps.

    python -m examples.in_graph_async --workers 2 --steps 300
"""

import threading

import dtfnb as tf
from examples import digits
from examples.launch import cluster_or_local, training_parser
from examples.watching import EventCollector, mean_staleness


def build(n_workers, learning_rate):
    """Returns ([(train_op, X, y) per tower], (X_eval, eval_logits), global_step)."""
    with tf.device("/job:ps/task:0"):
        params = digits.model_params(tf)
        global_step = tf.train.get_or_create_global_step()
    towers = []
    for i in range(n_workers):
        with tf.device(f"/job:worker/task:{i}"), tf.name_scope(f"tower_{i}"):
            X, y = digits.placeholders(tf)
            loss = digits.loss(tf, params, X, y)
            opt = tf.train.GradientDescentOptimizer(learning_rate)
            towers.append((opt.minimize(loss, global_step=global_step), X, y))
    with tf.device("/job:worker/task:0"):
        X_eval, _ = digits.placeholders(tf)
        eval_logits = digits.logits(tf, params, X_eval)
    return towers, (X_eval, eval_logits), global_step


def train(cluster, n_workers, steps, batch_size, learning_rate):
    data = digits.load_digits()
    with tf.Graph().as_default():
        towers, (X_eval, eval_logits), global_step = build(n_workers, learning_rate)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            errors = []

            def run_tower(i):
                train_op, X, y = towers[i]
                try:
                    stream = digits.batches(data.X_train, data.y_train, batch_size, seed=i)
                    for _ in range(steps):
                        X_batch, y_batch = next(stream)
                        sess.run(train_op, feed_dict={X: X_batch, y: y_batch})
                except Exception as err:  # noqa: BLE001 - reported by the main thread
                    errors.append(err)

            with EventCollector(cluster.target("ps", 0), ["variable_update"]) as ps_events:
                threads = [threading.Thread(target=run_tower, args=(i,))
                           for i in range(n_workers)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            if errors:
                raise errors[0]
            accuracy = digits.accuracy(sess.run(eval_logits, {X_eval: data.X_test}),
                                       data.y_test)
            updates = ps_events.of("variable_update")
            return {"accuracy": accuracy, "global_step": int(sess.run(global_step)),
                    "mean_staleness": mean_staleness(updates), "updates": len(updates),
                    "data": data.source}


def main(n_workers=2, steps=300, batch_size=32, learning_rate=0.3, cluster=None):
    """Trains on a cluster of 1 ps + `n_workers` (started here unless `cluster` is given)."""
    with cluster_or_local(cluster, {"ps": 1, "worker": n_workers}) as cluster:
        return train(cluster, n_workers, steps, batch_size, learning_rate)


if __name__ == "__main__":
    args = training_parser(__doc__, learning_rate=0.3).parse_args()
    print(main(args.workers, args.steps, args.batch_size, args.learning_rate))
