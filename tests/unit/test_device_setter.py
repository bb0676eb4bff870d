"""tf.train.replica_device_setter and the ps strategies: the devices stored on ops
(TF_SEMANTICS §2, "replica_device_setter")."""

import pytest

import dtfnb as tf

CLUSTER = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}


def devices():
    return {op.name: op.device for op in tf.get_default_graph().get_operations()}


def test_chapter_example_round_robin_and_nested_blocks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1, v2, v3, v4, v5 = (tf.Variable(float(k), name=f"v{k}") for k in range(1, 6))
        s = v1 + v2
        with tf.device("/task:1"):
            p1 = 2 * s
            with tf.device("/cpu:0"):
                p2 = 3 * s
    got = devices()
    for k, task in zip(range(1, 6), (0, 1, 0, 1, 0)):
        for name in (f"v{k}", f"v{k}/Assign", f"v{k}/read"):
            assert got[name] == f"/job:ps/task:{task}"
        assert got[f"v{k}/initial_value"] == "/job:worker"
    assert s.op.device == "/job:worker"
    assert p1.op.device == "/job:worker/task:1"
    assert p2.op.device == "/job:worker/task:1/device:CPU:0"
    assert [s.op.name, p1.op.name, p2.op.name] == ["add", "mul", "mul_1"]


def test_cluster_argument_and_ps_device_with_cpu():
    setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(CLUSTER),
                                            ps_device="/job:ps/cpu:0")
    with tf.device(setter):
        a, b, c = (tf.Variable(0.0, name=n) for n in "abc")
    assert [v.op.device for v in (a, b, c)] == [
        "/job:ps/task:0/device:CPU:0", "/job:ps/task:1/device:CPU:0",
        "/job:ps/task:0/device:CPU:0"]


def test_cluster_as_a_dict_with_three_ps():
    with tf.device(tf.train.replica_device_setter(cluster={"ps": ["a:1", "b:1", "c:1"]})):
        tasks = [tf.Variable(0.0).op.device for _ in range(4)]
    assert tasks == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0"]


def test_inner_blocks_merge_piecewise_under_the_worker_device():
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker")):
        with tf.device("/gpu:1"):
            x = tf.constant(1.0, name="x")
            with tf.device("/task:1"):
                y = tf.constant(2.0, name="y")
        with tf.device("/job:ps/task:0"):
            z = tf.constant(3.0, name="z")
    assert x.op.device == "/job:worker/device:GPU:1"
    assert y.op.device == "/job:worker/task:1/device:GPU:1"
    assert z.op.device == "/job:ps/task:0"


def test_inner_block_on_a_variable():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        a = tf.Variable(0.0, name="a")
        with tf.device("/task:0"):
            b = tf.Variable(0.0, name="b")  # the block's task wins, but uses up task 1
        with tf.device("/job:worker/task:2"):
            c = tf.Variable(0.0, name="c")  # another job: no task taken
        with tf.device("/cpu:0"):
            d = tf.Variable(0.0, name="d")
    assert a.op.device == "/job:ps/task:0"
    assert b.op.device == "/job:ps/task:0"
    assert c.op.device == "/job:worker/task:2"
    assert d.op.device == "/job:ps/task:0/device:CPU:0"


def test_merge_devices_false_keeps_inner_devices_whole():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
        with tf.device("/gpu:0"):
            x = tf.constant(1.0)
            v = tf.Variable(0.0)
        y = tf.constant(2.0)
    assert x.op.device == "/device:GPU:0"
    assert v.op.device == "/device:GPU:0"
    assert y.op.device == "/job:worker"


def test_global_step_goes_to_ps_and_the_train_op_is_colocated_with_it():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER)):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        loss = tf.reduce_sum(tf.square(w))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=global_step)
    assert global_step.op.device == "/job:ps/task:0"
    assert w.op.device == "/job:ps/task:1"
    assert train_op.device == "/job:ps/task:0"
    assert loss.op.device == "/job:worker"
    got = devices()
    assert got["GradientDescent/update_w/ApplyGradientDescent"] == "/job:ps/task:1"
    assert got["gradients/Square_grad/Mul_1"] == "/job:worker"


def test_custom_ps_ops_and_strategy():
    setter = tf.train.replica_device_setter(ps_tasks=3, ps_ops=["Const"],
                                            ps_strategy=lambda op: 2)
    with tf.device(setter):
        c = tf.constant(1.0)
        v = tf.Variable(0.0)
    assert c.op.device == "/job:ps/task:2"
    assert v.op.device == "/job:worker"


def test_no_ps_tasks_means_no_device_function():
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(ps_tasks=2, cluster={"worker": ["w:1"]}) is None
    assert tf.train.replica_device_setter(cluster=CLUSTER, ps_device="") is None
    with tf.device(tf.train.replica_device_setter()):
        assert tf.Variable(0.0).op.device == ""


def test_ps_strategy_must_be_callable():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_greedy_strategy_balances_bytes():
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        big = tf.Variable(tf.zeros([100]), name="big")               # 400 bytes → ps 0
        medium = tf.Variable(tf.zeros([50], tf.float64), name="medium")  # 400 bytes → ps 1
        small = tf.Variable(tf.zeros([30]), name="small")           # 120 bytes → ps 0 (tie)
        last = tf.Variable(tf.zeros([10]), name="last")             # 40 bytes → ps 1
    assert [v.op.device for v in (big, medium, small, last)] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0", "/job:ps/task:1"]


def test_greedy_strategy_differs_from_round_robin():
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        tasks = [tf.Variable(tf.zeros([n]), name=f"v{n}").op.device for n in (100, 50, 30)]
    assert tasks == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1"]


def test_byte_size_load_fn():
    assert tf.train.byte_size_load_fn(tf.Variable(tf.zeros([3, 4])).op) == 48
    assert tf.train.byte_size_load_fn(tf.Variable(0, dtype=tf.int64).op) == 8
    unknown = tf.Variable(tf.zeros([2]), validate_shape=False)
    with pytest.raises(ValueError, match="Shape <unknown> is not fully defined"):
        tf.train.byte_size_load_fn(unknown.op)
    split = tf.split(tf.zeros([4]), 2)[0].op
    with pytest.raises(ValueError, match="must have a single output"):
        tf.train.byte_size_load_fn(split)
