"""In-graph replication, synchronous updates: one client builds one graph with a tower per
worker task; the towers' gradients are averaged on the ps and applied once per step.

    python -m examples.in_graph_sync --workers 2 --steps 300
"""

import dtfnb as tf
from examples import digits
from examples.launch import cluster_or_local, training_parser


def build(n_workers, learning_rate):
    """Returns (train_op, [(X, y) per tower], (X_eval, eval_logits), global_step)."""
    with tf.device("/job:ps/task:0"):
        params = digits.model_params(tf)
        global_step = tf.train.get_or_create_global_step()
    opt = tf.train.GradientDescentOptimizer(learning_rate)
    towers, tower_grads = [], []
    for i in range(n_workers):
        with tf.device(f"/job:worker/task:{i}"), tf.name_scope(f"tower_{i}"):
            X, y = digits.placeholders(tf)
            loss = digits.loss(tf, params, X, y)
            tower_grads.append(opt.compute_gradients(loss, var_list=list(params.values())))
            towers.append((X, y))
    with tf.device("/job:ps/task:0"):
        averaged = [(tf.add_n([g for g, _ in grads]) / n_workers, grads[0][1])
                    for grads in zip(*tower_grads)]
        train_op = opt.apply_gradients(averaged, global_step=global_step)
    with tf.device("/job:worker/task:0"):
        X_eval, _ = digits.placeholders(tf)
        eval_logits = digits.logits(tf, params, X_eval)
    return train_op, towers, (X_eval, eval_logits), global_step


def train(target, n_workers, steps, batch_size, learning_rate):
    data = digits.load_digits()
    with tf.Graph().as_default():
        train_op, towers, (X_eval, eval_logits), global_step = build(n_workers,
                                                                     learning_rate)
        streams = [digits.batches(data.X_train, data.y_train, batch_size, seed=i)
                   for i in range(n_workers)]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                feed = {}
                for (X, y), stream in zip(towers, streams):
                    feed[X], feed[y] = next(stream)
                sess.run(train_op, feed_dict=feed)
            accuracy = digits.accuracy(sess.run(eval_logits, {X_eval: data.X_test}),
                                       data.y_test)
            return {"accuracy": accuracy, "global_step": int(sess.run(global_step)),
                    "data": data.source}


def main(n_workers=2, steps=300, batch_size=32, learning_rate=0.5, cluster=None):
    """Trains on a cluster of 1 ps + `n_workers` (started here unless `cluster` is given)."""
    with cluster_or_local(cluster, {"ps": 1, "worker": n_workers}) as cluster:
        return train(cluster.target("worker", 0), n_workers, steps, batch_size, learning_rate)


if __name__ == "__main__":
    args = training_parser(__doc__, learning_rate=0.5).parse_args()
    print(main(args.workers, args.steps, args.batch_size, args.learning_rate))
