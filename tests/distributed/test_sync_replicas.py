"""SyncReplicasOptimizer: the graph TensorFlow builds, between-graph replicas as threads over
an in-process cluster, and a cluster of processes with a slow spare worker."""

import collections
import threading

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport.monitor import watch
from tests.helpers import (
    Cluster,
    SyncReplica,
    cluster_dict,
    linear_data,
    linear_model,
    poll_for,
    train_sync_replicas,
)


def _partitioned_model(task=0):
    """linear_model with its weight in 2 parts, which replica_device_setter spreads."""
    x, y = linear_data(task)
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer(),
                        partitioner=tf.fixed_size_partitioner(2))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) - y))
    return w, loss


# -- the graph ------------------------------------------------------------------------------

def test_the_graph_tensorflow_builds():
    w, loss = linear_model()
    global_step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=3)
    with pytest.raises(ValueError, match="Should be called after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="should be called before using the hook"):
        opt.make_session_run_hook(is_chief=True).begin()
    with pytest.raises(ValueError, match="Global step is required to check staleness"):
        opt.minimize(loss)
    train_op = opt.minimize(loss, global_step=global_step)
    local_step, = tf.local_variables()
    assert local_step.op.name == "sync_rep_local_step"
    assert local_step.dtype.base_dtype == tf.int64
    assert train_op.op.type == "Assign" and train_op.op.inputs[0].op is local_step.op
    handles = {op.get_attr("shared_name"): op for op in tf.get_default_graph().get_operations()
               if op.type in ("ResourceConditionalAccumulator", "FIFOQueueV2")}
    assert sorted(handles) == [b"dummy_queue", b"sync_token_q", b"w:0/grad_accum"]
    assert handles[b"w:0/grad_accum"].name == "sync_replicas/conditional_accumulator"
    runner = opt.get_chief_queue_runner()
    assert runner.queue.name == "dummy_queue"
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: -2 "
                                         r"\(given\) vs -1 \(needed\)"):
        opt.get_init_tokens_op(num_tokens=-2)
    assert opt.get_init_tokens_op(num_tokens=0).name == "no_init_tokens"
    assert opt.variables() == [] and opt.get_slot_names() == []


def test_one_replica_drives_the_steps_and_a_sparse_gradient_updates_its_rows():
    """One replica, one gradient per step; an IndexedSlices gradient goes through a
    SparseConditionalAccumulator."""
    table = tf.Variable(tf.ones([4, 2]), name="table")
    rows = tf.constant([2, 0])
    grads = [(tf.IndexedSlices(tf.constant([[1., 1.], [3., 3.]]), rows,
                               tf.constant([4, 2])), table)]
    global_step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 1)
    train_op = opt.apply_gradients(grads, global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=True)
    hook.begin()
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        with pytest.raises(RuntimeError, match="Variables not initialized: table, "
                                               "global_step"):
            hook.after_create_session(sess, coord)
        sess.run(tf.global_variables_initializer())
        hook.after_create_session(sess, coord)
        # A run returns its token: the global step it was handed out at. The second run
        # still offers a gradient of step 0 (its token was an initial one): it is dropped.
        assert [sess.run(train_op) for _ in range(4)] == [0, 1, 2, 3]
        assert poll_for(lambda: sess.run(global_step) == 3)
        np.testing.assert_allclose(sess.run(table), [[-3.5, -3.5], [1., 1.], [-0.5, -0.5],
                                                     [1., 1.]])
        coord.request_stop()
    coord.join(stop_grace_period_secs=10)


# As in TensorFlow, the chief's runner, still waiting for gradients when the session
# closes, ends with a CancelledError traceback after the coordinator has joined.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_hook_inside_a_monitored_training_session():
    w, loss = linear_model()
    global_step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 1)
    train_op = opt.minimize(loss, global_step=global_step)
    hooks = [opt.make_session_run_hook(is_chief=True), tf.train.StopAtStepHook(last_step=5)]
    with tf.train.MonitoredTrainingSession(hooks=hooks, stop_grace_period_secs=1) as sess:
        first = sess.run(loss)
        while not sess.should_stop():
            _, step, last = sess.run([train_op, global_step, loss])
    assert step >= 4  # read as the run starts: the chief may apply this step's update later
    assert last < first


# -- replicas as threads over an in-process cluster -----------------------------------------

def _gradient_events(subscription):
    """The replicas' gradients, as their accumulators report them (the aggregated
    update reports nothing of its own)."""
    events = []
    while (event := subscription.get(0.5)) is not None:
        assert event.variable_update.variable.endswith("/grad_accum"), event
        events.append(event.variable_update)
    return events


def test_replicas_aggregate_two_of_three_gradients_per_global_step(cluster):
    tasks = cluster({"ps": 1, "worker": 3})
    subscription = tasks["ps", 0].events.subscribe(kinds=["variable_update"])
    replicas = [SyncReplica(tasks.spec, task, 2, 3, tasks.target("worker", task))
                for task in range(3)]
    before, after, _ = train_sync_replicas(replicas, lambda step: step >= 8, tasks.target("ps"))
    events = _gradient_events(subscription)
    subscription.close()
    assert after < before / 4
    assert all(r.runs > 0 for r in replicas)
    kept = collections.Counter(e.computed_at_step for e in events if not e.dropped)
    dropped = [e for e in events if e.dropped]
    # The global step advanced once per aggregation of at least 2 fresh gradients.
    assert all(kept[step] >= 2 for step in range(8)), kept
    assert all(e.computed_at_step < e.applied_at_step for e in dropped)
    assert {e.worker for e in events} == {f"/job:worker/replica:0/task:{i}" for i in range(3)}
    assert {e.device for e in events} == {"/job:ps/replica:0/task:0/device:CPU:0"}


def test_each_part_of_a_partitioned_weight_is_aggregated_on_its_own_ps_task(cluster):
    tasks = cluster({"ps": 2, "worker": 2})
    subscriptions = [tasks["ps", i].events.subscribe(kinds=["variable_update"])
                     for i in range(2)]
    replicas = [SyncReplica(tasks.spec, task, 2, 2, tasks.target("worker", task),
                         model=_partitioned_model) for task in range(2)]
    before, after, _ = train_sync_replicas(replicas, lambda step: step >= 6, tasks.target("ps"))
    events = [_gradient_events(subscription) for subscription in subscriptions]
    for subscription in subscriptions:
        subscription.close()
    assert after < before / 4
    assert [v.device for v in replicas[0].w] == ["/job:ps/task:0", "/job:ps/task:1"]
    for ps in range(2):  # each part's gradients are aggregated where the part lies
        part = f"w/part_{ps}"
        assert {e.variable for e in events[ps]} == {f"{part}:0/grad_accum"}
        assert {e.device for e in events[ps]} == {f"/job:ps/replica:0/task:{ps}/device:CPU:0"}


# -- a cluster of processes with a slow spare worker -----------------------------------------

def test_processes_proceed_at_the_pace_of_the_fastest_two_and_drop_the_slow_gradients():
    """1 ps + 3 workers as `python -m dtfnb.server` processes, one client thread per worker;
    worker 2 sleeps before each run. With 2 of 3 gradients per step, the global step runs
    ahead of the slow worker, whose late gradients the ps drops and reports."""
    cluster = cluster_dict(ps=1, worker=3)
    slow_delay = 1.0
    with Cluster(cluster, processes=True) as procs:
        watcher = watch("grpc://" + cluster["ps"][0], kinds=["variable_update"], replay=False)
        updates = []
        reader = threading.Thread(target=lambda: updates.extend(
            e.variable_update for e in watcher))
        reader.start()
        try:
            replicas = [SyncReplica(cluster, task, 2, 3, "grpc://" + cluster["worker"][task])
                        for task in range(3)]
            slow = replicas[2]
            before, after, steps = train_sync_replicas(replicas, lambda step: slow.runs >= 2,
                                          "grpc://" + cluster["ps"][0],
                                          delays=[0.0, 0.0, slow_delay])
            assert poll_for(lambda: any(u.dropped for u in updates), timeout=5)
        finally:
            watcher.close()
            reader.join(10)
    assert all(proc.returncode == 0 for proc in procs.values())
    assert after < before
    # In lock step the global step could not pass the slow worker's runs; here it does.
    assert steps >= 2 * slow.runs + 1, (steps, [r.runs for r in replicas])
    gradients = [u for u in updates if u.variable == "w:0/grad_accum"]
    dropped = collections.Counter(u.worker for u in gradients if u.dropped)
    assert dropped["/job:worker/replica:0/task:2"] >= 1, dropped
    assert all(u.computed_at_step < u.applied_at_step for u in gradients if u.dropped)
    assert {u.device for u in gradients} == {"/job:ps/replica:0/task:0/device:CPU:0"}
