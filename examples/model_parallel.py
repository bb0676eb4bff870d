"""Model parallelism: one network spread over two worker tasks, in two of the chapter's ways.

* `split`: every layer split vertically, half of its units on each task; each half of
  the next layer needs both halves of the one before, so activations cross every layer.
* `stacked`: a two-layer recurrent network reading each 8x8 digit as 8 rows, one layer
  per task. Unrolled, the upper layer works on row t while the lower one reads row t + 1:
  the tasks overlap, as a traced step's stats (RunOptions(trace_level=FULL_TRACE)) show.

    python -m examples.model_parallel --model stacked --steps 300
"""

import argparse

import numpy as np

import dtfnb as tf
from examples import digits
from examples.launch import cluster_or_local

TASKS = ("/job:worker/task:0", "/job:worker/task:1")
ROWS = COLUMNS = 8  # a digit as a sequence of ROWS steps of COLUMNS pixels


def _dense(n_in, n_out, name, seed):
    rng = np.random.default_rng(seed)
    W = tf.Variable(rng.normal(0, np.sqrt(2.0 / n_in), (n_in, n_out)).astype(np.float32),
                    name=f"{name}/W")
    b = tf.Variable(np.zeros(n_out, np.float32), name=f"{name}/b")
    return lambda x: tf.matmul(x, W) + b


def split_logits(X, n_hidden=128):
    """Two hidden layers, each split in two halves across the tasks; the output layer too."""
    inputs = [X, X]
    for layer in ("hidden1", "hidden2"):
        halves = []
        for i, task in enumerate(TASKS):
            with tf.device(task):
                whole = tf.concat(inputs, axis=1) if layer != "hidden1" else X
                dense = _dense(whole.shape[1].value, n_hidden // 2, f"{layer}_{i}", seed=i)
                halves.append(tf.nn.relu(dense(whole)))
        inputs = halves
    partial = []
    for i, task in enumerate(TASKS):  # each task's share of the output sums
        with tf.device(task):
            partial.append(_dense(n_hidden // 2, digits.N_OUTPUTS, f"output_{i}", seed=i)(
                inputs[i]))
    with tf.device(TASKS[0]):
        return tf.add_n(partial)


def stacked_logits(X, n_units=64):
    """A recurrent layer per task, unrolled over the rows; the top one's last state
    classifies the digit."""
    rows = tf.unstack(tf.reshape(X, [-1, ROWS, COLUMNS]), axis=1)
    for layer, task in enumerate(TASKS):
        with tf.device(task), tf.name_scope(f"cell_{layer}"):
            n_in = COLUMNS if layer == 0 else n_units
            read = _dense(n_in, n_units, f"cell_{layer}/input", seed=layer)
            recur = _dense(n_units, n_units, f"cell_{layer}/state", seed=10 + layer)
            state = tf.tanh(read(rows[0]))
            outputs = [state]
            for row in rows[1:]:
                state = tf.tanh(read(row) + recur(state))
                outputs.append(state)
        rows = outputs
    with tf.device(TASKS[1]):
        return _dense(n_units, digits.N_OUTPUTS, "output", seed=20)(rows[-1])


def device_overlap(step_stats):
    """Per task, the union of its busy intervals; returns (busy seconds per task, seconds
    both were busy at once, whether the second started before the first finished)."""
    intervals = {}
    for dev in step_stats.dev_stats:
        task = dev.device.rpartition("/device:")[0]
        for node in dev.node_stats:
            if node.node_name.startswith(("_send", "_recv")):
                continue  # waiting for a tensor is not work
            start = node.all_start_micros
            intervals.setdefault(task, []).append((start, start + node.all_end_rel_micros))
    merged = [_union(intervals.get(f"/job:worker/replica:0/task:{i}", []))
              for i in range(len(TASKS))]
    busy = [sum(end - start for start, end in spans) / 1e6 for spans in merged]
    both = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in merged[0] for s2, e2 in merged[1])
    interleaved = bool(merged[0] and merged[1] and merged[1][0][0] < merged[0][-1][1])
    return busy, both / 1e6, interleaved


def _union(spans):
    merged = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def run(cluster, model, steps, batch_size, learning_rate):
    data = digits.load_digits()
    with tf.Graph().as_default():
        X, y = digits.placeholders(tf)
        logits = (split_logits if model == "split" else stacked_logits)(X)
        with tf.device(TASKS[0]):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            stream = digits.batches(data.X_train, data.y_train, batch_size)
            first = None
            for _ in range(steps):
                X_batch, y_batch = next(stream)
                _, loss_value = sess.run([train_op, loss], {X: X_batch, y: y_batch})
                first = loss_value if first is None else first
            # Traced on a batch large enough that a row's work outlasts a transfer. The
            # OS may run the tasks by turns for a whole step on a busy machine: the best
            # of three steps shows what the partitioning allows.
            traced = []
            for _ in range(3):
                metadata = tf.RunMetadata()
                sess.run(logits, {X: np.tile(data.X_test, (8, 1))},
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=metadata)
                traced.append((device_overlap(metadata.step_stats), metadata))
            (busy, both, interleaved), metadata = max(traced, key=lambda t: t[0][1])
            accuracy = digits.accuracy(sess.run(logits, {X: data.X_test}), data.y_test)
    return {"model": model, "accuracy": accuracy, "first_loss": float(first),
            "last_loss": float(loss_value), "busy_seconds": busy,
            "overlap_seconds": both, "interleaved": interleaved,
            "devices": sorted(d.device for d in metadata.step_stats.dev_stats)}


def main(model="stacked", steps=300, batch_size=32, learning_rate=0.1, cluster=None):
    """Trains `model` ("split" or "stacked") over two worker tasks (started here unless
    `cluster` is given) and traces one inference step."""
    if model not in ("split", "stacked"):
        raise ValueError(f"model must be 'split' or 'stacked', got {model!r}")
    with cluster_or_local(cluster, {"worker": 2}) as cluster:
        return run(cluster, model, steps, batch_size, learning_rate)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("split", "stacked"), default="stacked")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    args = parser.parse_args()
    print(main(args.model, args.steps, learning_rate=args.learning_rate))
