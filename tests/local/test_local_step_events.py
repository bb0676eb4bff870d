"""What a local session's event log tells of each step: the plan it ran (PlanEvent) and
what its transfers between the task's devices moved (StepEvent)."""

import numpy as np

import dtfnb as tf

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def test_an_emulated_gpu_step_reports_its_transfers_and_scalars():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/gpu:0"):
        w = tf.Variable(np.ones([3, 1], np.float32), name="w")
        y = tf.matmul(x, w, name="y")
        mark = tf.no_op(name="mark")
    with tf.device("/cpu:0"), tf.control_dependencies([mark]):
        loss = tf.reduce_mean(y, name="loss")
    with tf.Session(config=tf.ConfigProto(emulated_gpus=1)) as sess:
        sess.run(w.initializer)
        watch = sess.events.subscribe(["plan", "step"])
        batches = [np.ones([2, 3], np.float32), np.ones([5, 3], np.float32)]
        values = [sess.run(loss, {x: batch}) for batch in batches]
        plan, *steps = (getattr(e, e.WhichOneof("kind"))
                        for e in iter(lambda: watch.get(timeout=0.5), None))
        watch.close()
    assert {n.name: n.assigned_device for n in plan.node} == {
        "w": GPU0, "w/read": GPU0, "y": GPU0, "mark": GPU0, "Const": CPU0, "loss": CPU0}
    assert list(plan.emulated_device) == [GPU0]
    transfers = [(t.tensor, t.src_device, t.dst_device, list(t.consumers))
                 for t in plan.transfer]
    # the control edge reaches loss through its axes, Const, made under the same dependency
    assert sorted(transfers) == [("^mark", GPU0, CPU0, ["Const"]), ("x:0", CPU0, GPU0, ["y"]),
                                 ("y:0", GPU0, CPU0, ["loss"])]
    for step, rows, value in zip(steps, (2, 5), values):
        assert step.plan_id == plan.plan_id
        moved = {t.tensor: n for t, n in zip(plan.transfer, step.transfer_bytes)}
        assert moved == {"x:0": rows * 3 * 4, "y:0": rows * 4, "^mark": 0}
        assert dict(step.scalars) == {"loss:0": value}
