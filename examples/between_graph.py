"""Between-graph replication: each worker is its own client process that builds its own
copy of the graph under `replica_device_setter` (variables on the ps, computation on its
worker task). The chief (worker 0) initializes the variables; the others wait until
they are, and all start training together.

* async (default): each worker applies its gradients whenever they are ready. The ps
  reports the staleness of every gradient (about workers - 1 global steps), and a
  worker that crashes does not stop the others (`--kill-worker 1 --kill-at-step 100`).
* `--sync`: `SyncReplicasOptimizer` averages one gradient from every worker per global
  step; the chief's queue runner applies it and hands out the next tokens.

    python -m examples.between_graph --workers 2 --steps 300 [--sync]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import dtfnb as tf
from examples import digits
from examples.launch import cluster_or_local, training_parser
from examples.watching import EventCollector, mean_staleness, staleness_limits

# Where the worker clients run `python -m examples.between_graph`: `-m` puts the working
# directory first on sys.path, so that `examples` imports there.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOAT_TYPES = {"float32": None, "float16": tf.float16, "bfloat16": tf.bfloat16}


def build(cluster_spec, task_index, learning_rate, sync=False, aggregate=None):
    """One worker's graph: returns (train_op, loss, X, y, global_step, optimizer). Sync:
    each step applies the mean of `aggregate` gradients (default: one per worker; fewer
    leaves spare replicas, whose late gradients are dropped)."""
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster_spec, worker_device=f"/job:worker/task:{task_index}")):
        params = digits.model_params(tf)
        global_step = tf.train.get_or_create_global_step()
        X, y = digits.placeholders(tf)
        loss = digits.loss(tf, params, X, y)
        opt = tf.train.GradientDescentOptimizer(learning_rate)
        if sync:
            opt = tf.train.SyncReplicasOptimizer(
                opt, replicas_to_aggregate=aggregate or len(cluster_spec["worker"]),
                total_num_replicas=len(cluster_spec["worker"]))
        train_op = opt.minimize(loss, global_step=global_step)
    return train_op, loss, X, y, global_step, opt


def wait_until_initialized(sess, timeout=60.0):
    """A non-chief worker waits for the chief, as TensorFlow's SessionManager does (for
    the global variables: local ones, like a sync replica's local step, are its own)."""
    uninitialized = tf.report_uninitialized_variables(tf.global_variables())
    deadline = time.monotonic() + timeout
    while len(sess.run(uninitialized)):
        if time.monotonic() > deadline:
            raise tf.errors.DeadlineExceededError(
                None, None, f"the variables were not initialized within {timeout} s")
        time.sleep(0.1)


def start_together(sess, started, n_workers, timeout=60.0):
    """Counts this worker in, then waits until all `n_workers` are: a chief that trained
    alone until a slower-starting worker joined would measure no staleness at all."""
    sess.run(started.assign_add(1))
    deadline = time.monotonic() + timeout
    while sess.run(started) < n_workers:
        if time.monotonic() > deadline:
            raise tf.errors.DeadlineExceededError(
                None, None, f"not all {n_workers} workers started within {timeout} s")
        time.sleep(0.02)


def worker(cluster_spec, task_index, steps, batch_size, learning_rate, float_type="float32",
           sync=False, aggregate=None):
    """The client of one worker: trains `steps` steps (sync: until the global step is
    `steps`), returns what it saw."""
    data = digits.load_digits()
    train_op, loss, X, y, global_step, opt = build(cluster_spec, task_index, learning_rate,
                                                   sync, aggregate)
    with tf.device("/job:ps/task:0"):
        started = tf.Variable(0, trainable=False, name="workers_started")
    hook = release = None
    if sync:
        hook = opt.make_session_run_hook(is_chief=task_index == 0)
        hook.begin()
        # A replica done with training hands every other one a token, in case one waits
        # for the step it will no longer help to finish.
        release = opt.get_init_tokens_op(num_tokens=len(cluster_spec["worker"]))
    # As TensorFlow recommends for between-graph replication: this worker's session sees
    # only the ps tasks and its own task, so it never waits for (or on) another worker.
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task_index}"])
    if FLOAT_TYPES[float_type] is not None:
        config.transfer_float_type = FLOAT_TYPES[float_type].as_datatype_enum
    stream = digits.batches(data.X_train, data.y_train, batch_size, seed=task_index)
    target = f"grpc://{cluster_spec['worker'][task_index]}"
    coord = tf.train.Coordinator()
    with tf.Session(target, config=config) as sess:
        if task_index == 0:
            sess.run(tf.global_variables_initializer())
        else:
            wait_until_initialized(sess)
        start_together(sess, started, len(cluster_spec["worker"]))
        if hook is not None:  # local step, tokens, and the chief's queue runner
            hook.after_create_session(sess, coord)
        start = time.perf_counter()
        done = 0
        while True:
            X_batch, y_batch = next(stream)
            result, loss_value = sess.run([train_op, loss], {X: X_batch, y: y_batch})
            done += 1
            # Async: `steps` steps each. Sync: until the global step reaches `steps`; the
            # train op returns the step a replica's next gradients are for.
            if (result >= steps) if sync else (done == steps):
                break
        seconds = time.perf_counter() - start
        if release is not None:
            sess.run(release)
        coord.request_stop()  # the chief's queue runner ends as the session closes
        return {"task": task_index, "steps": done, "loss": float(loss_value),
                "steps_per_second": done / seconds, "global_step": int(sess.run(global_step))}


def evaluate(target):
    """Accuracy on the test set of the parameters now on the ps (read by a new client)."""
    data = digits.load_digits()
    with tf.Graph().as_default(), tf.device("/job:ps/task:0"):
        params = digits.model_params(tf)  # the same names: the same variables on the ps
        global_step = tf.train.get_or_create_global_step()
        X, _ = digits.placeholders(tf)
        logits = digits.logits(tf, params, X)
        with tf.Session(target) as sess:
            return (digits.accuracy(sess.run(logits, {X: data.X_test}), data.y_test),
                    int(sess.run(global_step)))


def wait_for_global_step(target, step, timeout):
    """Waits until the global step on the ps reaches `step`."""
    with tf.Graph().as_default(), tf.device("/job:ps/task:0"):
        global_step = tf.train.get_or_create_global_step()
        with tf.Session(target) as sess:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    if sess.run(global_step) >= step:
                        return
                except tf.errors.FailedPreconditionError:
                    pass  # the chief has not initialized it yet
                if time.monotonic() > deadline:
                    raise tf.errors.DeadlineExceededError(
                        None, None, f"global step {step} not reached in {timeout} s")
                time.sleep(0.05)


def _exit_with_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


class _Client:
    """One worker's client process (this script with --task)."""

    def __init__(self, cluster_spec, task, steps, batch_size, learning_rate, float_type, sync,
                 aggregate):
        self._log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "examples.between_graph", "--cluster",
             json.dumps(cluster_spec), "--task", str(task), "--steps", str(steps),
             "--batch-size", str(batch_size), "--learning-rate", str(learning_rate),
             "--float-type", float_type] + (["--sync"] if sync else [])
            + (["--aggregate", str(aggregate)] if aggregate else []),
            stdout=subprocess.PIPE, stderr=self._log, text=True, cwd=REPO)

    def result(self):
        """What the client printed, once it has exited; raises if it failed."""
        out = self.proc.stdout.read()
        self.proc.wait()
        self._log.seek(0)
        errors = self._log.read()
        self._log.close()
        if self.proc.returncode != 0:
            raise RuntimeError(f"worker client exited with {self.proc.returncode}:\n"
                               f"{errors[-3000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def _results(clients, timeout):
    """Every client's result; the first to fail (or the deadline) stops the others, which
    a sync step would otherwise keep waiting for."""
    deadline = time.monotonic() + timeout
    while any(c.proc.poll() is None for c in clients):
        if any(c.proc.poll() not in (None, 0) for c in clients):
            break
        if time.monotonic() > deadline:
            raise tf.errors.DeadlineExceededError(
                None, None, f"the workers did not finish in {timeout} s")
        time.sleep(0.05)
    for client in clients:
        if client.proc.poll() is None:
            client.kill()
    return [client.result() for client in clients]


def train(cluster, n_workers, steps, batch_size, learning_rate, float_type="float32",
          sync=False, aggregate=None, kill_worker=None, kill_at_step=None, timeout=300):
    """Runs one client process per worker; `kill_worker` crashes (client and task) once
    the global step reaches `kill_at_step`. Returns accuracy, staleness, throughput."""
    ps_target, spec = cluster.target("ps", 0), cluster.spec.as_dict()
    spec["worker"] = spec["worker"][:n_workers]  # a bigger cluster lends its first ones
    with EventCollector(ps_target, ["variable_update", "health"]) as ps_events:
        clients = [_Client(spec, i, steps, batch_size, learning_rate, float_type, sync,
                           aggregate) for i in range(n_workers)]
        try:
            if kill_worker is not None:
                wait_for_global_step(ps_target, kill_at_step, timeout)
                clients[kill_worker].kill()
                cluster.kill("worker", kill_worker)
            results = _results([c for i, c in enumerate(clients) if i != kill_worker],
                               timeout)
        finally:
            for client in clients:
                client.kill()
    accuracy, global_step = evaluate(ps_target)
    updates = ps_events.of("variable_update")
    return {"accuracy": accuracy, "global_step": global_step, "workers": results,
            "mean_staleness": mean_staleness(updates), "updates": len(updates),
            **staleness_check(updates),
            "ps_bytes_sent_per_step": bytes_sent_per_step(ps_events.of("health")),
            "data": digits.load_digits().source}


def bytes_sent_per_step(health):
    """What the ps sent per graph it ran, between its first and last health event while
    watched: the first window may hold the end of an earlier run, and a short run's
    windows set-up alone (a few graphs that move no parameters)."""
    if len(health) < 2 or health[-1].graphs_run == health[0].graphs_run:
        return float("nan")
    return ((health[-1].bytes_sent - health[0].bytes_sent)
            / (health[-1].graphs_run - health[0].graphs_run))


def staleness_check(updates):
    """The mean limit on staleness, and how many updates the ps reported staler (none)."""
    pairs = staleness_limits(updates)
    return {"mean_staleness_limit": statistics.fmean(limit for _, limit in pairs) if pairs
            else float("nan"),
            "staler_than_possible": sum(s > limit or s < 0 for s, limit in pairs)}


def main(n_workers=2, steps=300, batch_size=32, learning_rate=0.3, float_type="float32",
         sync=False, aggregate=None, cluster=None, **kill):
    """Trains on a cluster of 1 ps + `n_workers` (started here unless `cluster` is given)."""
    with cluster_or_local(cluster, {"ps": 1, "worker": n_workers}) as cluster:
        return train(cluster, n_workers, steps, batch_size, learning_rate, float_type, sync,
                     aggregate, **kill)


if __name__ == "__main__":
    parser = training_parser(__doc__, learning_rate=0.3)
    parser.add_argument("--float-type", choices=sorted(FLOAT_TYPES), default="float32",
                        help="how parameters and gradients cross between tasks")
    parser.add_argument("--sync", action="store_true", help="SyncReplicasOptimizer")
    parser.add_argument("--aggregate", type=int,
                        help="sync: gradients per step (fewer than workers: spare replicas)")
    parser.add_argument("--kill-worker", type=int, help="crash this worker mid-training")
    parser.add_argument("--kill-at-step", type=int, default=100)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)  # a worker client: the spec
    parser.add_argument("--task", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cluster is not None:
        threading.Thread(target=_exit_with_parent, daemon=True).start()
        print(json.dumps(worker(json.loads(args.cluster), args.task, args.steps,
                                args.batch_size, args.learning_rate, args.float_type,
                                args.sync, args.aggregate)))
    else:
        kill = {}
        if args.kill_worker is not None:
            kill = {"kill_worker": args.kill_worker, "kill_at_step": args.kill_at_step}
        print(main(args.workers, args.steps, args.batch_size, args.learning_rate,
                   args.float_type, args.sync, args.aggregate, **kill))
