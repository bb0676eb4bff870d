"""What seeded random ops draw: TensorFlow's values (its Philox generator), for every
kind, dtype and size, run after run and session after session; the seeds a graph seed
gives ops that name none; initializers, dropout and shuffles built on them."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _twice_then_anew(tf, fetches):
    """Two runs in one session, then one in a new session (which starts over)."""
    with tf.Session() as sess:
        first = [sess.run(fetches), sess.run(fetches)]
    return first + [run(tf, fetches)]


@case
def every_kind_and_dtype_with_op_seeds(tf):
    """Normal, uniform, truncated normal and integer draws of each dtype, of sizes that
    fill their last group of draws and sizes that do not."""
    built = []
    for seed, shape in ((1, [7]), (2, [3, 4]), (3, [0]), (4, [2, 1, 5])):
        for dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64):
            built += [tf.random_normal(shape, dtype=dtype, seed=seed),
                      tf.random_uniform(shape, dtype=dtype, seed=seed),
                      tf.truncated_normal(shape, dtype=dtype, seed=seed)]
        built += [tf.random_uniform(shape, -3, 100, dtype=tf.int32, seed=seed),
                  tf.random_uniform(shape, -2**40, 2**40 + 7, dtype=tf.int64, seed=seed)]
    built += [tf.random_normal([3], mean=2.0, stddev=0.5, seed=-5, name="negative_seed"),
              tf.random_uniform([2], 1.0, 3.0, seed=2**40)]
    return _twice_then_anew(tf, built)


@case
def many_values_of_one_op(tf):
    """Thousands of draws: truncated doubles reject often enough that some groups read on
    past their first draws."""
    built = [tf.truncated_normal([20000], dtype=tf.float64, seed=8),
             tf.truncated_normal([300, 100], seed=9), tf.random_normal([4099], seed=10),
             tf.random_uniform([1001], 0, 7, dtype=tf.int64, seed=11)]
    return _twice_then_anew(tf, built)


@case
def a_graph_seed_seeds_each_op_by_their_count(tf):
    """With a graph seed, an op that names no seed takes the count of such ops before it
    in the graph (TensorFlow 2's rule), whatever other ops there are; its values follow."""
    tf.set_random_seed(42)
    a = tf.random_uniform([4])
    tf.add(tf.constant([1.0, 2.0]), 1.0)   # other ops do not count
    b = tf.random_normal([3], seed=5)
    c = tf.truncated_normal([3])
    samplers = [op for op in tf.get_default_graph().get_operations()
                if op.type in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal")]
    seeds = [(op.get_attr("seed"), op.get_attr("seed2")) for op in samplers]
    return seeds, _twice_then_anew(tf, [a, b, c])


@case
def initializers_and_dropout(tf):
    """Variables initialized as the book's chapters do, and dropout's mask, under a graph
    seed."""
    tf.set_random_seed(42)
    variables = [
        tf.get_variable("glorot", [3, 4]),
        tf.get_variable("truncated", [2, 3],
                        initializer=tf.truncated_normal_initializer(stddev=0.1)),
        tf.get_variable("he", [4, 2], initializer=tf.variance_scaling_initializer()),
        tf.get_variable("normal", [5], initializer=tf.random_normal_initializer(1.0, 2.0)),
        tf.get_variable("uniform", [5], initializer=tf.random_uniform_initializer(-1, 1)),
        tf.Variable(tf.truncated_normal([4, 3], stddev=2 / np.sqrt(4)), name="W")]
    dropped = [tf.nn.dropout(tf.ones([10]), rate=0.5),
               tf.nn.dropout(tf.ones([2, 6]), keep_prob=0.7, noise_shape=[2, 1])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(variables), sess.run(dropped), sess.run(dropped)


@case
def shuffles_of_rows(tf):
    """random_shuffle swaps rows as TensorFlow's does; one row or no elements: as is."""
    built = [tf.random_shuffle(tf.range(10), seed=1),
             tf.random_shuffle(np.arange(24).reshape(6, 2, 2), seed=2),
             tf.random_shuffle([[1.0, 2.0]], seed=3),
             tf.random_shuffle(np.zeros((3, 0)), seed=4)]
    return _twice_then_anew(tf, built)


@case
def uniform_int_bounds_are_checked_when_run(tf):
    low, high = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    draw = tf.random_uniform([2], low, high, dtype=tf.int32, seed=1)
    return [outcome(run, tf, draw, {low: lo, high: hi})
            for lo, hi in ((4, 4), (5, 2), ([1, 2], 5), (0, [7]))]


@case
def a_seeded_shuffle_queue_hands_out_tensorflows_order(tf):
    """A RandomShuffleQueue takes each element with a word of TensorFlow's generator, so
    the same enqueues and dequeues give TensorFlow's order, component by component."""
    queue = tf.RandomShuffleQueue(50, 3, [tf.int32, tf.string], shapes=[[], []], seed=5)
    numbers = list(range(20))
    enqueue = queue.enqueue_many([numbers, [str(n).encode() for n in numbers]])
    one, many, up_to = queue.dequeue(), queue.dequeue_many(4), queue.dequeue_up_to(50)
    with tf.Session() as sess:
        sess.run(enqueue)
        taken = [sess.run(one) for _ in range(3)] + [sess.run(many)]
        sess.run(enqueue)
        taken.append(sess.run(many))
        sess.run(queue.close())
        return taken + [sess.run(up_to)]


@case
def dataset_shuffles_in_tensorflows_order(tf):
    """Dataset.shuffle takes from its window as TensorFlow's does, each pass of a repeat
    in another order unless reshuffle_each_iteration=False; an iterator initialized
    again, or in a new session, repeats the passes."""
    def passes(dataset):
        iterator = tf.data.make_initializable_iterator(dataset)
        element = iterator.get_next()

        def drain(sess):
            sess.run(iterator.initializer)
            taken = []
            while True:
                try:
                    taken.append(sess.run(element))
                except tf.errors.OutOfRangeError:
                    return taken
        with tf.Session() as sess:
            again = [drain(sess), drain(sess)]
        with tf.Session() as sess:
            return again + [drain(sess)]

    numbers = tf.data.Dataset.range(10)
    tf.set_random_seed(11)
    return [passes(numbers.shuffle(4, seed=3).repeat(3)),
            passes(numbers.shuffle(4, seed=3, reshuffle_each_iteration=False).repeat(2)),
            passes(tf.data.Dataset.range(100).shuffle(1000, seed=7)),
            passes(tf.data.Dataset.range(30).shuffle(8, seed=1).batch(4)),
            passes(numbers.shuffle(5))]


@case
def multinomial_draws_classes_as_tensorflow_does(tf):
    """tf.multinomial and tf.random.categorical: TensorFlow's classes run after run, for
    float and double logits, with -inf and NaN logits never drawn, in int64 or int32."""
    built = [tf.multinomial([[1.0, 2.0, 3.0]], 5, seed=2),
             tf.multinomial(np.log([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]), 7, seed=3),
             tf.random.categorical([[0.0, -np.inf, 1.0, np.nan]], 9, seed=4, dtype=tf.int32),
             tf.multinomial(np.float64([[1, 1, 1, 1]]), 4, seed=5),
             tf.multinomial([[-np.inf, -np.inf]], 2, seed=6),
             tf.multinomial(np.zeros((3, 2), np.float32), 0, seed=7)]
    return _twice_then_anew(tf, built)


@case
def multinomial_graphs_shapes_and_errors(tf):
    rows = tf.placeholder(tf.float32, [None, 4])
    count = tf.placeholder(tf.int32)
    built = [tf.multinomial([[1.0, 2.0]], 3), tf.random.categorical(rows, count),
             tf.random.multinomial(rows, 2, output_dtype=tf.int32, name="drawn")]
    graph = [(op.type, op.name, [t.name for t in op.inputs],
              sorted((k, str(op.get_attr(k))) for k in ("T", "output_dtype")))
             for op in tf.get_default_graph().get_operations() if op.type == "Multinomial"]
    logits, samples = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    drawn = tf.multinomial(logits, samples, seed=1)
    at_run = [outcome(run, tf, drawn, {logits: value, samples: n})
              for value, n in (([[1.0]], -1), (np.zeros((2, 0)), 2), ([1.0], 1),
                               ([[1.0]], [1]))]
    return (graph, [t.shape.as_list() if t.shape.ndims is not None else None for t in built],
            outcome(tf.multinomial, [1.0, 2.0], 2),
            outcome(tf.multinomial, [[1.0]], 2, output_dtype=tf.float32),
            outcome(tf.multinomial, [[1.0]], [2]), at_run)


@case
def input_producers_shuffle_in_tensorflows_order(tf):
    """The chapter's input producers shuffle each epoch with RandomShuffle, so a seeded
    pipeline reads its files and slices in TensorFlow's order."""
    names = tf.train.string_input_producer([b"f%d" % i for i in range(8)], shuffle=True,
                                           seed=7, num_epochs=2).dequeue()
    tf.set_random_seed(3)
    (number,) = tf.train.slice_input_producer([list(range(6))], shuffle=True, num_epochs=1)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        taken = [sess.run(names) for _ in range(16)], [sess.run(number) for _ in range(6)]
        coord.request_stop()
        coord.join(threads)
    return taken


@case
def orthogonal_initializer_graph_and_values(tf):
    """tf.orthogonal_initializer: TensorFlow's graph (Qr, DiagPart, Sign, a transpose when
    there are fewer rows than columns), its values from the same normal draws, its gain,
    and its refusal of a one-dimensional shape."""
    variables = [tf.get_variable("wide", [3, 5], initializer=tf.orthogonal_initializer(seed=1)),
                 tf.get_variable("tall", [6, 4],
                                 initializer=tf.orthogonal_initializer(gain=2.0, seed=2)),
                 tf.get_variable("kernel", [2, 2, 3, 4],
                                 initializer=tf.orthogonal_initializer(seed=3))]
    graph = node_defs(tf.get_default_graph())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return graph, sess.run(variables), outcome(tf.orthogonal_initializer(), [3])
