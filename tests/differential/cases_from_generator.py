"""Dataset.from_generator: elements of every structure and dtype, each pass calling the
generator anew, arguments, static types and shapes, and what a wrong element does."""

import numpy as np
from observe import drain, outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _failure(tf, sess, next_element):
    """The class of the step's error and the last line of its message."""
    try:
        return sess.run(next_element)
    except tf.errors.OpError as err:
        lines = [line for line in str(err).split("\n\t [[")[0].splitlines() if line.strip()]
        return type(err).__name__, lines[-1]


@case
def elements_passes_and_arguments(tf):
    """Tuples, dicts, strings (text and bytes) and arrays; a repeated dataset and a
    re-initialized iterator calling the generator again; arguments; batching, shuffling
    with a seed and a map after it; the static types and shapes."""
    calls = []

    def pairs():
        calls.append(1)
        for i in range(3):
            yield i, [float(i)] * 2

    def labelled():
        yield {"id": 1, "name": "h\u00e9"}
        yield {"id": 2, "name": b"b"}

    datasets = [
        tf.data.Dataset.from_generator(pairs, (tf.int64, tf.float32), ((), (2,))).repeat(2),
        tf.data.Dataset.from_generator(labelled, {"id": tf.int32, "name": tf.string}),
        tf.data.Dataset.from_generator(lambda n, step: range(0, n, step), tf.int32,
                                       args=[tf.constant(7), 2]),
        tf.data.Dataset.from_generator(lambda: (np.full([2, 2], i) for i in range(5)),
                                       tf.float64, [2, None]).shuffle(5, seed=3).batch(2),
        tf.data.Dataset.from_generator(lambda: iter([1, 2, 3]), tf.int64).map(lambda x: x * 2)]
    static = [(d.output_types, d.output_shapes) for d in datasets]
    iterator = datasets[0].make_initializable_iterator()
    next_pair = iterator.get_next()
    nexts = [d.make_one_shot_iterator().get_next() for d in datasets[1:]]
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        values = [drain(tf, sess, next_pair)]
        sess.run(iterator.initializer)
        values.append(sess.run(next_pair))
        values += [drain(tf, sess, n) for n in nexts]
    return static, values, len(calls)


@case
def wrong_elements(tf):
    """An element of another shape, structure or type fails the step; a generator that
    raises fails it as its exception; a generator that is not callable, or no types,
    fail at build."""
    def raising():
        yield 1
        raise ValueError("no more")

    built = [tf.data.Dataset.from_generator(lambda: iter([np.zeros(3)]), tf.float32, [2]),
             tf.data.Dataset.from_generator(lambda: iter([(1, 2)]), (tf.int64,)),
             tf.data.Dataset.from_generator(lambda: iter(["x"]), tf.int32),
             tf.data.Dataset.from_generator(raising, tf.int32)]
    nexts = [d.make_one_shot_iterator().get_next() for d in built]
    with tf.Session() as sess:
        failures = [_failure(tf, sess, n) for n in nexts[:3]]
        failures += [sess.run(nexts[3]), _failure(tf, sess, nexts[3])]
    return (failures, outcome(tf.data.Dataset.from_generator, [1, 2], tf.int32),
            outcome(tf.data.Dataset.from_generator, lambda: iter([1])))


@case
def conversions(tf):
    """How a yielded value becomes an element: cast as numpy casts it where the shape is
    given, converted as tf.constant converts it where it is not."""
    table = (([1.5], tf.int32), ([np.zeros(2)], tf.float32), ([np.zeros(2, np.int64)], tf.int32),
             ([True], tf.int32), ([3], tf.float32), ([[1, 2]], tf.int64), (["a"], tf.string),
             ([2 ** 40], tf.int32), ([None], tf.float32), ([np.float32(2.5)], tf.float64))
    nexts = [tf.data.Dataset.from_generator(lambda items=items: iter(items), dtype, shapes)
             .make_one_shot_iterator().get_next()
             for items, dtype in table for shapes in (None, [None])]
    with tf.Session() as sess:
        return [_failure(tf, sess, n) for n in nexts]
