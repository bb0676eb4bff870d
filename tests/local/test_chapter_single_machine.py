"""The chapter's single-machine examples, as written, after `import dtfnb as tf`.

Where the book's code does not run as written in TensorFlow 1 (TF_SEMANTICS §1), the
test checks TensorFlow's actual outcome and then the corrected form.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dtfnb as tf

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
LOG_LINE = re.compile(r"^(\S+): \((\w+)\): (/job:\S+)( \(emulated\))?$", re.M)


def placements(text):
    return {m[1]: m[3] for m in LOG_LINE.finditer(text)}


def traced(sess, fetches):
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    value = sess.run(fetches, options=options, run_metadata=metadata)
    return value, metadata.step_stats


# -- (a) simple placement and logging placements ----------------------------------------------


def test_logging_placements(capfd):
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)

    c = a * b

    config = tf.ConfigProto()
    config.log_device_placement = True
    sess = tf.Session(config=config)
    a.initializer.run(session=sess)
    assert sess.run(c) == 12.0
    sess.close()
    assert placements(capfd.readouterr().out) == {
        "Variable": CPU0, "Variable/initial_value": CPU0, "Variable/Assign": CPU0,
        "Variable/read": CPU0, "Const": CPU0, "mul": CPU0}


def test_logging_placements_with_an_emulated_gpu_puts_mul_on_the_gpu(capfd):
    # the book's log: a, b and their ops on /cpu:0, mul on /gpu:0
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)

    c = a * b

    config = tf.ConfigProto(emulated_gpus=1)
    config.log_device_placement = True
    sess = tf.Session(config=config)
    a.initializer.run(session=sess)
    assert sess.run(c) == 12.0
    sess.close()
    out = capfd.readouterr().out
    assert placements(out)["mul"] == GPU0
    assert "mul: (Mul): /job:localhost/replica:0/task:0/device:GPU:0 (emulated)" in out
    assert placements(out)["Variable/read"] == CPU0


def test_logged_device_placement_inside_the_block():
    with tf.device("/cpu:0"):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
        c = a * b
    assert a.op.device == b.op.device == c.op.device == "/device:CPU:0"
    with tf.Session() as sess:
        sess.run(a.initializer)
        assert sess.run(c) == 12.0


# -- (b) dynamic placement functions -----------------------------------------------------------


def variables_on_cpu(op):
    if op.type == "Variable":
        return "/cpu:0"
    else:
        return "/gpu:0"


def variable_v2_on_cpu(op):
    if op.type == "VariableV2":
        return "/cpu:0"
    else:
        return "/gpu:0"


def test_the_books_placement_function_puts_everything_on_the_gpu():
    with tf.device(variables_on_cpu):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
        c = a * b
    assert a.op.type == "VariableV2"  # never "Variable": the book's test is never true
    assert {op.device for op in tf.get_default_graph().get_operations()} == {"/gpu:0"}
    config = tf.ConfigProto(emulated_gpus=1, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(a.initializer)
        value, stats = traced(sess, c)
    assert value == 12.0
    ops = {op.name for op in tf.get_default_graph().get_operations()}
    assert {dev.device for dev in stats.dev_stats for n in dev.node_stats
            if n.node_name in ops} == {GPU0}


def test_the_books_placement_function_on_a_cpu_only_machine_needs_soft_placement():
    with tf.device(variables_on_cpu):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
        c = a * b
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="CUDA is not enabled"):
            sess.run(a.initializer)
    config = tf.ConfigProto()
    config.allow_soft_placement = True
    with tf.Session(config=config) as sess:
        sess.run(a.initializer)
        assert sess.run(c) == 12.0


def test_the_corrected_placement_function_puts_the_variable_on_the_cpu():
    with tf.device(variable_v2_on_cpu):
        a = tf.Variable(3.0)
        b = tf.constant(4.0)
        c = a * b
    assert a.op.device == "/cpu:0"
    assert b.op.device == c.op.device == "/gpu:0"
    config = tf.ConfigProto(emulated_gpus=1, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(a.initializer)
        value, stats = traced(sess, c)
    assert value == 12.0
    nodes = {n.node_name: dev.device for dev in stats.dev_stats for n in dev.node_stats}
    assert nodes["Variable"] == nodes["Variable/read"] == CPU0
    assert nodes["mul"] == nodes["Const"] == GPU0


# -- (c) operations and kernels, soft placement --------------------------------------------------


def test_int_variable_on_the_gpu_fails_then_runs_with_soft_placement():
    with tf.device("/gpu:0"):
        i = tf.Variable(3)

    sess = tf.Session(config=tf.ConfigProto(emulated_gpus=1))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape("Could not satisfy explicit device specification "
                                       "'/device:GPU:0' because no supported kernel for GPU "
                                       "devices is available.")):
        sess.run(i.initializer)
    sess.close()

    config = tf.ConfigProto(emulated_gpus=1)
    config.allow_soft_placement = True
    sess = tf.Session(config=config)
    sess.run(i.initializer)  # the placer runs and falls back to /cpu:0
    assert sess.run(i) == 3
    sess.close()


def test_int_variable_on_the_gpu_of_a_cpu_only_machine():
    with tf.device("/gpu:0"):
        i = tf.Variable(3)
    sess = tf.Session()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Cannot assign a device for operation Variable: .*CUDA is not "
                             "enabled"):
        sess.run(i.initializer)
    sess.close()
    config = tf.ConfigProto()
    config.allow_soft_placement = True
    sess = tf.Session(config=config)
    sess.run(i.initializer)
    assert sess.run(i) == 3
    sess.close()


# -- (d) parallel execution ------------------------------------------------------------------------


def test_independent_operations_run_in_parallel():
    rng = np.random.default_rng(0)
    x_np = rng.random((600, 600), dtype=np.float32)
    y_np = rng.random((600, 600), dtype=np.float32)
    x = tf.constant(x_np)
    y = tf.constant(y_np)
    first = tf.matmul(x, y)
    second = tf.matmul(y, x)
    total = tf.reduce_sum(first) + tf.reduce_sum(second)
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        for _ in range(5):  # the two MatMuls are ready together; one goes to the pool
            value, stats = traced(sess, total)
            records = {n.node_name: n for dev in stats.dev_stats for n in dev.node_stats}
            if records[first.op.name].thread_id != records[second.op.name].thread_id:
                break
        else:
            pytest.fail("the two MatMuls never ran on different threads")
    expected = np.sum(x_np @ y_np, dtype=np.float64) + np.sum(y_np @ x_np, dtype=np.float64)
    assert value == pytest.approx(expected, rel=1e-4)


# -- (e) control dependencies ---------------------------------------------------------------------


def test_control_dependencies_postpone_evaluation():
    a = tf.constant(1.0)
    b = a + 2.0

    with tf.control_dependencies([a, b]):
        x = tf.constant(3.0)
        y = tf.constant(4.0)

    z = x + y

    assert x.op.control_inputs == [a.op, b.op]
    assert y.op.control_inputs == [a.op, b.op]
    assert z.op.control_inputs == []
    with tf.Session() as sess:
        value, stats = traced(sess, z)
    assert value == 7.0
    ran = {n.node_name: n for dev in stats.dev_stats for n in dev.node_stats}
    assert {a.op.name, b.op.name} <= set(ran)  # run although z does not use their values
    assert ran[b.op.name].all_start_micros <= ran[x.op.name].all_start_micros


def test_control_dependencies_on_the_op_itself():
    a = tf.constant(1.0)
    b = a + 2.0
    x = tf.constant(3.0)
    y = tf.constant(4.0)
    with tf.control_dependencies([a, b]):
        z = x + y
    assert z.op.control_inputs == [a.op, b.op]
    with tf.Session() as sess:
        value, stats = traced(sess, z)
    assert value == 7.0
    ran = {n.node_name for dev in stats.dev_stats for n in dev.node_stats}
    assert {a.op.name, b.op.name, z.op.name} <= ran


# -- (f) preloading the data into a variable -------------------------------------------------------


def test_preloading_data_into_a_variable_needs_validate_shape_false():
    n_features = 3
    training_set_init = tf.placeholder(tf.float32, shape=(None, n_features))
    with pytest.raises(ValueError, match=r"initial_value must have a shape specified: .*"
                                         r"Placeholder:0.*\(\?, 3\)"):
        tf.Variable(training_set_init, trainable=False, collections=[], name="training_set")

    training_set = tf.Variable(training_set_init, trainable=False, collections=[],
                               name="training_set", validate_shape=False)
    # the failed attempt had already opened the name scope, as in TensorFlow
    assert training_set.op.name == "training_set_1"
    assert tf.global_variables() == [] and tf.trainable_variables() == []

    with tf.Session() as sess:
        data = np.arange(15, dtype=np.float32).reshape(5, n_features)
        sess.run(training_set.initializer, feed_dict={training_set_init: data})
        np.testing.assert_array_equal(sess.run(training_set), data)
        column_sums = tf.reduce_sum(training_set, axis=0)
        np.testing.assert_array_equal(sess.run(column_sums), data.sum(axis=0))


# -- the terminal tour -------------------------------------------------------------------------


def test_the_tour_runs_every_example_and_shows_its_real_output():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", NO_COLOR="1")
    result = subprocess.run([sys.executable, "-m", "dtfnb.tour"], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Traceback" not in out and "Error:" not in out.replace(
        "InvalidArgumentError:", "").replace("ValueError:", "").replace(
        "FailedPreconditionError:", "")
    assert not result.stderr, result.stderr
    for number in range(1, 12):
        assert f"{number}/11" in out
    assert "mul: (Mul): /job:localhost/replica:0/task:0/device:CPU:0\n" in out
    assert "mul: (Mul): /job:localhost/replica:0/task:0/device:GPU:0 (emulated)\n" in out
    assert out.count("    12.0\n") == 4
    assert "a.op.type: VariableV2" in out
    assert "Variable: (VariableV2): /job:localhost/replica:0/task:0/device:GPU:0 (emulated)" \
        in out
    assert "Could not satisfy" in out and "    i = 3\n" in out
    assert re.search(r"MatMul(_1)?\s+thread 1 .*\n\s+MatMul(_1)?\s+thread 2 ", out)
    assert "x waits for: ['Const', 'add']" in out and "z = 7.0" in out
    assert "initial_value must have a shape specified" in out
    assert " [ 9. 10. 11.]]" in out
    assert "c = 4.0\n" in out
    assert "a     ran on /job:ps/replica:0/task:0/device:CPU:0" in out
    assert "add_1 ran on /job:worker/replica:0/task:1/device:CPU:0" in out
    assert "client 1: 1.0\n" in out and "client 2: 2.0\n" in out
    assert "FailedPreconditionError: Attempting to use uninitialized value x\n" in out
    assert "v2     /job:ps/task:1\n" in out and "mul_1  /job:worker/task:1/device:CPU:0" in out
    assert "[np.float32(6.0), np.float32(9.0)]" in out
    assert "\033[" not in out
