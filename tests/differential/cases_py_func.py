"""tf.py_func and tf.numpy_function: values of every kind, several and no outputs, the
graphs they build, their errors at build and at run (each exception's error class), and
a Python function inside a tf.data map."""

import numpy as np
from observe import node_defs, outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _graph(tf):
    """node_defs without the tokens, which count every py_func of the process."""
    nodes = node_defs(tf.get_default_graph())
    for node in nodes:
        node["attrs"].pop("token", None)
    return nodes


def _raising(exception):
    def fn(*args):
        raise exception
    return fn


def _failure(err):
    """An error from a step: its class and the last line of its message (TensorFlow's
    traceback before it runs through its own files)."""
    lines = [line for line in str(err).split("\n\t [[")[0].splitlines() if line.strip()]
    return type(err).__name__, lines[-1] if lines else ""


@case
def values_and_graphs(tf):
    """One and several outputs, strings (bytes, text, numpy bytes), int64 and bool, no
    outputs (the op itself), stateless, Python values and a variable as inputs,
    numpy_function and its decorator."""
    x = tf.constant([1.0, 2.0])
    v = tf.Variable([3.0, 4.0], name="v")

    @tf.numpy_function(Tout=tf.float32)
    def scaled(a, b):
        return a * b

    built = [tf.py_func(lambda a: a * 2, [x], tf.float32),
             *tf.py_func(lambda a, b: (a + b, np.int32(3)), [x, 1.0], [tf.float32, tf.int32]),
             tf.py_func(lambda s: s + b"!", [tf.constant("hi")], tf.string),
             tf.py_func(lambda: "h\u00e9", [], tf.string),
             tf.py_func(lambda: np.array([b"a", b"bc"]), [], tf.string),
             tf.py_func(lambda a: np.arange(3), [x], tf.int64),
             tf.py_func(lambda a: a > 1, [x], tf.bool, stateful=False, name="pure"),
             tf.py_func(lambda a, b, c: a + b + c, [1.0, np.float32([1, 2]), v], tf.float32,
                        name="mixed"),
             tf.numpy_function(lambda a: a[:0], [x], tf.float32),
             scaled(x, x)]
    nothing = tf.py_func(lambda a: None, [x], [])
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = sess.run(built)
        ran = sess.run(nothing)
    return (values, ran, type(nothing).__name__, [str(t.shape) for t in built],
            _graph(tf))


@case
def errors_at_build(tf):
    """A function that is not callable; numpy_function without Tout, without inp, and as
    a decorator given inp."""
    x = tf.constant([1.0])
    return [outcome(tf.py_func, 3, [x], tf.float32),
            outcome(tf.numpy_function, lambda a: a, [x]),
            outcome(tf.numpy_function, lambda a: a, Tout=tf.float32),
            outcome(tf.numpy_function, inp=[x], Tout=tf.float32)]


@case
def errors_at_run(tf):
    """What the function returns against Tout (a Python float is a double; a list is one
    value an element; None is none), and the error class each exception becomes."""
    x = tf.constant([1.0, 2.0])
    built = [tf.py_func(lambda a: 3.0, [x], tf.float32),
             tf.py_func(lambda a: (a, a), [x], [tf.float32]),
             tf.py_func(lambda: ["a", "bc"], [], tf.string),
             tf.py_func(lambda a: [[1.0, 2.0]], [x], tf.float32),
             tf.py_func(lambda a: None, [x], tf.float32)]
    built += [tf.py_func(_raising(exception), [x], tf.float32)
              for exception in (ValueError("bad value"), TypeError("bad type"),
                                StopIteration("done"), MemoryError("full"),
                                NotImplementedError("later"), IndexError("where"),
                                KeyError("which"))]
    with tf.Session() as sess:
        results = []
        for t in built:
            try:
                results.append(sess.run(t))
            except tf.errors.OpError as err:
                results.append(_failure(err))
    return results


@case
def in_a_dataset_map(tf):
    """A Python function mapping each element of a dataset, its result given a shape."""
    def label(x):
        return np.int64(x * 10), str(x).encode()

    dataset = tf.data.Dataset.range(3).map(
        lambda x: tuple(tf.py_func(label, [x], [tf.int64, tf.string])))
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        values = [sess.run(next_element) for _ in range(3)]
        end = outcome(sess.run, next_element)
    return values, end
