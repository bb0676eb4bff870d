"""tf.py_func runs only in the process that built its graph, as in TensorFlow: the graph
names the function by a token, and no code crosses the wire."""

import pytest

import dtfnb as tf


def _doubled_on(device):
    with tf.device(device):
        return tf.py_func(lambda a: a * 2, [tf.constant([1.0, 2.0])], tf.float32)


def test_a_py_func_on_a_task_of_this_process_runs(cluster):
    tasks = cluster({"worker": 1})
    doubled = _doubled_on("/job:worker/task:0")
    with tf.Session(tasks.target("worker")) as sess:
        assert sess.run(doubled).tolist() == [2.0, 4.0]


def test_a_py_func_on_another_process_fails_the_step_naming_its_token(cluster):
    tasks = cluster({"ps": 1, "worker": 1}, processes=True)
    doubled = _doubled_on("/job:ps/task:0")
    with tf.Session(tasks.target("worker")) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Could not find callback with key=pyfunc_\d+ in the "
                                 r"registry"):
            sess.run(doubled)
        assert sess.run(tf.constant(1.0) + 1) == 2.0   # the session goes on
