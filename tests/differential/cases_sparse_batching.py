"""SparseTensors through input pipelines: every tf.train batching function with
SparseTensor examples (alone, beside a dense one, in a dict; one per example or
enqueue_many): the ops it builds (SparseTensorsMap ops, their attrs and colocation), the
static shapes it returns and the batches it gives; per-example, constant and fed
keep_input; unknown ranks; join lists that do not match; bad sparse inputs; and
tf.sparse_retain.

Value cases run the queue runner's enqueue ops by hand (no threads), and compare the rows
of shuffled batches without their order."""

import itertools

import numpy as np
from observe import node_defs, outcome

BATCHERS = {
    "batch": lambda tf, ex, n, **kw: tf.train.batch(ex, n, **kw),
    "maybe_batch": lambda tf, ex, n, **kw: tf.train.maybe_batch(ex, True, n, **kw),
    "batch_join": lambda tf, ex, n, **kw: tf.train.batch_join([ex], n, **kw),
    "maybe_batch_join": lambda tf, ex, n, **kw: tf.train.maybe_batch_join([ex], True, n, **kw),
    "shuffle_batch": lambda tf, ex, n, **kw: tf.train.shuffle_batch(ex, n, 10, 0, seed=7, **kw),
    "maybe_shuffle_batch": lambda tf, ex, n, **kw: tf.train.maybe_shuffle_batch(
        ex, n, 10, 0, True, seed=7, **kw),
    "shuffle_batch_join": lambda tf, ex, n, **kw: tf.train.shuffle_batch_join(
        [ex], n, 10, 0, seed=7, **kw),
    "maybe_shuffle_batch_join": lambda tf, ex, n, **kw: tf.train.maybe_shuffle_batch_join(
        [ex], n, 10, 0, True, seed=7, **kw),
}


def _static(value):
    """What a batching function returned, with each SparseTensor's tensors and shape."""
    if isinstance(value, dict):
        return {k: _static(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_static(v) for v in value]
    if hasattr(value, "dense_shape"):
        return {"sparse": [value.indices, value.values, value.dense_shape, value.get_shape(),
                           value.dtype]}
    return value


def _examples(tf, kind, enqueue_many):
    if enqueue_many:
        sparse = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0],
                                 dense_shape=[2, 4])
        dense = tf.constant([7, 8])
    else:
        sparse = tf.SparseTensor(indices=[[0], [2]], values=[1.0, 2.0], dense_shape=[4])
        dense = tf.constant(7)
    return {"sparse": [sparse], "mixed": [sparse, dense],
            "dict": {"s": sparse, "d": dense}}[kind]


def graph_case(batcher, kind, enqueue_many):
    def case(tf):
        out = BATCHERS[batcher](tf, _examples(tf, kind, enqueue_many), 2,
                                enqueue_many=enqueue_many)
        return _static(out), node_defs(tf.get_default_graph())
    return case


# -- values: examples fed to the enqueue ops, run by hand --------------------------------

_ONE_BY_ONE = [  # (indices, values, dense_shape, label) of single examples
    ([[0]], [1.0], [3], 10),
    ([[1], [4]], [2.0, 3.0], [5], 11),
    (np.zeros([0, 1], np.int64), np.zeros([0], np.float32), [2], 12),
]
_MANY = [  # batches of two examples (rank 2), then one of one
    ([[0, 1], [1, 0], [1, 3]], [1.0, 2.0, 3.0], [2, 4], [10, 11]),
    ([[0, 2]], [4.0], [1, 6], [12]),
]


def _rows(value, labels):
    """The rows of a SparseTensorValue batch (their indices without the row), each with
    its label, sorted by label."""
    rows = []
    for i, label in enumerate(labels.tolist()):
        mine = value.indices[:, 0] == i
        rows.append((label, value.indices[mine][:, 1:].tolist(), value.values[mine].tolist()))
    return sorted(rows), value.dense_shape.tolist()


def value_case(batcher, enqueue_many, smaller=False):
    def case(tf):
        sparse = tf.sparse_placeholder(tf.float32)
        label = tf.placeholder(tf.int32, [None] if enqueue_many else [])
        out = BATCHERS[batcher](tf, [sparse, label], 2 if smaller else 3,
                                enqueue_many=enqueue_many, allow_smaller_final_batch=smaller)
        runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
        with tf.Session() as sess:
            for indices, values, shape, labels in _MANY if enqueue_many else _ONE_BY_ONE:
                sess.run(runner.enqueue_ops[0], {sparse: tf.SparseTensorValue(
                    np.array(indices, np.int64), np.array(values, np.float32),
                    np.array(shape, np.int64)), label: labels})
            sess.run(runner.close_op)
            batches = []
            while True:
                got = outcome(sess.run, out)
                if isinstance(got, Exception):
                    break
                batches.append(got if "shuffle" not in batcher else _rows(*got))
        return _static(out), batches, type(got).__name__
    return case


# -- keep_input -----------------------------------------------------------------------

def keep_vector_case(batcher, with_graph):
    """TensorFlow's testMaybeBatchCorrectValues: only the kept rows are batched."""
    def case(tf):
        sparse = tf.SparseTensor(indices=[[0, 1], [0, 2], [1, 0], [1, 3]],
                                 dense_shape=[2, 4], values=[5, 4, 7, 2])
        keep = tf.constant([True, False])
        if "join" in batcher:
            ex = [[sparse]]
        else:
            ex = [sparse]
        fn = getattr(tf.train, batcher)
        if "shuffle" in batcher:
            out = fn(ex, 1, 10, 0, keep, seed=3, enqueue_many=True)
        else:
            out = fn(ex, keep, 1, enqueue_many=True)
        runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
        with tf.Session() as sess:
            sess.run(runner.enqueue_ops[0])
            got = sess.run(out)
        graph = node_defs(tf.get_default_graph()) if with_graph else None
        return _static(out), got, graph
    return case


def keep_false_case(batcher, enqueue_many):
    """A constant False keep_input stores no SparseTensor: the take from its map is refused."""
    def case(tf):
        return outcome(_maybe(tf, batcher), _examples(tf, "sparse", enqueue_many), False,
                       enqueue_many)
    return case


def _maybe(tf, batcher):
    def build(ex, keep, enqueue_many):
        fn = getattr(tf.train, batcher)
        if "join" in batcher:
            ex = [ex]
        if "shuffle" in batcher:
            return fn(ex, 2, 10, 0, keep, seed=7, enqueue_many=enqueue_many)
        return fn(ex, keep, 2, enqueue_many=enqueue_many)
    return build


def keep_fed_case(batcher, enqueue_many):
    """A fed keep_input: the examples fed with False never reach the batch."""
    def case(tf):
        sparse = tf.sparse_placeholder(tf.float32)
        label = tf.placeholder(tf.int32, [None] if enqueue_many else [])
        keep = tf.placeholder(tf.bool, [])
        out = _maybe(tf, batcher)([sparse, label], keep, enqueue_many)
        runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
        # two rows kept: a batch, whichever way a shuffling queue orders them
        examples, keeps = (_MANY, [False, False, True]) if enqueue_many else \
            (_ONE_BY_ONE, [False, True, True])
        with tf.Session() as sess:
            for kept, (indices, values, shape, labels) in zip(keeps, examples * 2):
                sess.run(runner.enqueue_ops[0], {sparse: tf.SparseTensorValue(
                    np.array(indices, np.int64), np.array(values, np.float32),
                    np.array(shape, np.int64)), label: labels, keep: kept})
            size = sess.run(runner.queue.size())
            got = sess.run(out)
        return _static(out), size, got if "shuffle" not in batcher else _rows(*got)
    return case


def keep_fed_graph_case(batcher, kind, enqueue_many):
    """The tf.cond that stores a SparseTensor only when keep_input holds, and the one
    around the enqueue."""
    def case(tf):
        out = _maybe(tf, batcher)(_examples(tf, kind, enqueue_many),
                                  tf.placeholder(tf.bool, []), enqueue_many)
        return _static(out), node_defs(tf.get_default_graph())
    return case


def keep_fed_rank0(tf):
    """A rank-0 SparseTensor example, stored only when the fed keep_input holds."""
    sparse = tf.SparseTensor(indices=np.zeros([1, 0], np.int64), values=[5.0],
                             dense_shape=np.zeros([0], np.int64))
    keep = tf.placeholder(tf.bool, [])
    out = tf.train.maybe_batch([sparse], keep, 2)
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
    with tf.Session() as sess:
        for kept in (True, False, True):
            sess.run(runner.enqueue_ops[0], {keep: kept})
        size = sess.run(runner.queue.size())
        return _static(out), size, sess.run(out)


# -- ranks and shapes -------------------------------------------------------------------

def unknown_rank_case(batcher, enqueue_many, keep):
    """TensorFlow's testBatchedSparseTensorInferredShapeUnknownRank and its variants."""
    def case(tf):
        sparse = tf.SparseTensor(indices=tf.placeholder(tf.int64),
                                 values=tf.placeholder(tf.float32),
                                 dense_shape=tf.placeholder(tf.int64))
        if keep is None:
            out = getattr(tf.train, batcher)([sparse], 2, enqueue_many=enqueue_many)
        else:
            out = getattr(tf.train, batcher)([sparse], keep, 2, enqueue_many=enqueue_many)
        return _static(out), out.dense_shape.get_shape().num_elements()
    return case


def mixed_ranks(tf):
    """Examples of different ranks through an unknown-rank SparseTensor: the take fails."""
    sparse = tf.sparse_placeholder(tf.float32)
    out = tf.train.batch([sparse], 2)
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
    with tf.Session() as sess:
        sess.run(runner.enqueue_ops[0], {sparse: tf.SparseTensorValue([[0]], [1.0], [3])})
        sess.run(runner.enqueue_ops[0], {sparse: tf.SparseTensorValue([[0, 1]], [2.0],
                                                                      [3, 4])})
        first = outcome(sess.run, out)
        # the failed take removed both from the map: the queue is empty now
        size = sess.run(runner.queue.size())
    return first, size


def several_sparse(tf):
    """Two SparseTensors (int64 and string values) and a dense tensor in one batch."""
    a = tf.SparseTensor(indices=[[0, 0]], values=tf.constant([3], tf.int64),
                        dense_shape=[2, 2])
    b = tf.SparseTensor(indices=[[1]], values=["x"], dense_shape=[3])
    out = tf.train.batch([a, b, tf.constant(1.5)], 2, name="both")
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
    with tf.Session() as sess:
        sess.run(runner.enqueue_ops[0])
        sess.run(runner.enqueue_ops[0])
        got = sess.run(out)
    return _static(out), got, node_defs(tf.get_default_graph())


def shared_name_and_scope(tf):
    with tf.name_scope("input"):
        sparse = tf.SparseTensor(indices=[[0]], values=[1], dense_shape=[2])
        out = tf.train.batch({"s": sparse}, 4, shared_name="shared_q", name="B")
    return _static(out), node_defs(tf.get_default_graph())


def on_devices(tf):
    """The take is colocated with the op that fills the map, on whatever device."""
    with tf.device("/cpu:0"):
        sparse = tf.SparseTensor(indices=[[0]], values=[1.0], dense_shape=[2])
        out = tf.train.batch([sparse, 1], 2)
    return _static(out), node_defs(tf.get_default_graph())


# -- join lists that do not match ------------------------------------------------------

def join_error_case(batcher, mismatch):
    def case(tf):
        a = tf.SparseTensor(indices=[[0]], values=[1.0], dense_shape=[2])
        if mismatch == "dense":
            other = [tf.constant(1.0)]
        elif mismatch == "rank":
            other = [tf.SparseTensor(indices=[[0, 0]], values=[1.0], dense_shape=[2, 2])]
        else:  # an unknown rank fits
            other = [tf.sparse_placeholder(tf.float32)]
        fn = getattr(tf.train, batcher)
        args = ([[a], other], 2) if "shuffle" not in batcher else ([[a], other], 2, 10, 0)
        out = outcome(fn, *args)
        return out if isinstance(out, Exception) else (_static(out),
                                                      node_defs(tf.get_default_graph()))
    return case


# -- what the map ops refuse -----------------------------------------------------------

_BAD_MANY = {
    "out_of_order": ([[1, 0], [0, 1]], [1.0, 2.0], [2, 3]),
    "out_of_order_inner": ([[0, 2], [0, 1]], [1.0, 2.0], [2, 3]),
    "out_of_bounds": ([[0, 0], [2, 1]], [1.0, 2.0], [2, 3]),
    "out_of_bounds_inner": ([[0, 0], [1, 3]], [1.0, 2.0], [2, 3]),
    "repeated": ([[0, 1], [0, 1]], [1.0, 2.0], [2, 3]),
    "rank_1": ([[0], [1]], [1.0, 2.0], [2]),
    "negative": ([[0, 0]], [1.0], [-1, 3]),
    "values_and_indices": ([[0, 0], [1, 1]], [1.0, 2.0, 3.0], [2, 3]),
    "shape_and_indices": ([[0, 0], [1, 1]], [1.0, 2.0], [2, 3, 4]),
}
_BAD_ONE = {
    "negative": ([[0]], [1.0], [-3]),
    "values_and_indices": ([[0], [1]], [1.0, 2.0, 3.0], [3]),
    "shape_and_indices": ([[0], [1]], [1.0, 2.0], [3, 4]),
}


def bad_input_case(enqueue_many, what):
    def case(tf):
        sparse = tf.sparse_placeholder(tf.float32)
        tf.train.batch([sparse], 2, enqueue_many=enqueue_many)
        runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
        indices, values, shape = (_BAD_MANY if enqueue_many else _BAD_ONE)[what]
        with tf.Session() as sess:
            return outcome(sess.run, runner.enqueue_ops[0], {sparse: tf.SparseTensorValue(
                np.array(indices, np.int64), np.array(values, np.float32),
                np.array(shape, np.int64))})
    return case


def unsorted_one_by_one(tf):
    """One example at a time, indices are kept as given: the batch shows them so."""
    sparse = tf.SparseTensor(indices=[[2], [0]], values=[1, 2], dense_shape=[3])
    out = tf.train.batch([sparse], 1)
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
    with tf.Session() as sess:
        sess.run(runner.enqueue_ops[0])
        return sess.run(out)


# -- tf.sparse_retain ------------------------------------------------------------------

def retain_values(tf):
    sparse = tf.SparseTensor(indices=[[0, 1], [0, 3], [2, 0], [3, 1]],
                             values=["a", "b", "c", "d"], dense_shape=[4, 5])
    kept = tf.sparse_retain(sparse, [True, False, False, True])
    also = tf.sparse.retain(tf.SparseTensorValue([[1], [2]], [1.5, 2.5], [4]), [False, True])
    with tf.Session() as sess:
        got = sess.run([kept, also])
    return _static([kept, also]), got, node_defs(tf.get_default_graph())


def retain_error_case(what):
    def case(tf):
        sparse = tf.SparseTensor(indices=[[0], [1], [2]], values=[1, 2, 3], dense_shape=[3])
        if what == "rank":
            return outcome(tf.sparse_retain, sparse, [[True], [False], [True]])
        if what == "length":
            return outcome(tf.sparse_retain, sparse, [True, False])
        if what == "not_sparse":
            return outcome(tf.sparse_retain, [1, 2, 3], [True, False, True])
        fed = tf.placeholder(tf.bool, [None])
        with tf.Session() as sess:
            return outcome(sess.run, tf.sparse_retain(sparse, fed), {fed: [True, False]})
    return case


CASES = {}
for _b, _kind, _em in itertools.product(BATCHERS, ("sparse", "mixed", "dict"), (False, True)):
    CASES[f"graph_{_b}_{_kind}{'_many' if _em else ''}"] = graph_case(_b, _kind, _em)
for _b, _em in itertools.product(BATCHERS, (False, True)):
    CASES[f"values_{_b}{'_many' if _em else ''}"] = value_case(_b, _em)
for _b, _em in itertools.product(("batch", "batch_join"), (False, True)):
    CASES[f"values_{_b}_smaller{'_many' if _em else ''}"] = value_case(_b, _em, smaller=True)
for _b in ("maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join"):
    CASES[f"keep_vector_{_b}"] = keep_vector_case(_b, with_graph="shuffle" not in _b)
for _b, _em in itertools.product(("maybe_batch", "maybe_batch_join"), (False, True)):
    CASES[f"keep_false_{_b}{'_many' if _em else ''}"] = keep_false_case(_b, _em)
for _b, _em in itertools.product(("maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
                                  "maybe_shuffle_batch_join"), (False, True)):
    CASES[f"keep_fed_{_b}{'_many' if _em else ''}"] = keep_fed_case(_b, _em)
    for _kind in ("sparse", "mixed"):
        CASES[f"keep_fed_graph_{_b}_{_kind}{'_many' if _em else ''}"] = \
            keep_fed_graph_case(_b, _kind, _em)
for _em, _keep in itertools.product((False, True), (None, True, "vector")):
    if _keep == "vector" and not _em:
        continue
    _b = "batch" if _keep is None else "maybe_batch"
    CASES[f"unknown_rank_{_b}{'_many' if _em else ''}_{_keep}"] = unknown_rank_case(
        _b, _em, [True, False] if _keep == "vector" else _keep)
for _b, _m in itertools.product(("batch_join", "shuffle_batch_join"),
                                ("dense", "rank", "unknown_rank")):
    CASES[f"join_{_b}_{_m}"] = join_error_case(_b, _m)
for _what in _BAD_MANY:
    CASES[f"bad_many_{_what}"] = bad_input_case(True, _what)
for _what in _BAD_ONE:
    CASES[f"bad_one_{_what}"] = bad_input_case(False, _what)
for _what in ("rank", "length", "not_sparse", "fed_length"):
    CASES[f"retain_{_what}"] = retain_error_case(_what)
CASES.update(keep_fed_rank0=keep_fed_rank0, mixed_ranks=mixed_ranks, several_sparse=several_sparse,
             shared_name_and_scope=shared_name_and_scope, on_devices=on_devices,
             unsorted_one_by_one=unsorted_one_by_one, retain_values=retain_values)
