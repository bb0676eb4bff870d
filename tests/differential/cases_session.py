"""Sessions: fetch and feed structures (nests, composite tensors, names), their errors,
make_callable, partial runs, the session's lifetime and its context managers."""

import collections

import numpy as np
from observe import outcome, run

CASES = {}

Pair = collections.namedtuple("Pair", ["first", "second"])


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _session_case(build):
    """A case running `build(tf, sess)` in a fresh session."""
    def run_case(tf):
        with tf.Session() as sess:
            return build(tf, sess)
    return run_case


# -- fetch structures ----------------------------------------------------------------

def _consts(tf):
    return tf.constant(1.0, name="a"), tf.constant([2, 3], name="b")


_FETCHES = {
    "tensor": lambda tf, a, b: a,
    "operation": lambda tf, a, b: a.op,
    "list": lambda tf, a, b: [a, b, a.op],
    "tuple": lambda tf, a, b: (a, b),
    "namedtuple": lambda tf, a, b: Pair(a, b),
    "dict": lambda tf, a, b: {"x": a, "y": [b, a]},
    "ordered_dict": lambda tf, a, b: collections.OrderedDict([("y", b), ("x", a)]),
    "defaultdict": lambda tf, a, b: collections.defaultdict(int, {"x": a}),
    "nested": lambda tf, a, b: [(a, {"k": [b, (a,)]}), Pair([a], {"z": b})],
    "repeated": lambda tf, a, b: [a, a, b, a, "a:0", a.op],
    "names": lambda tf, a, b: ["a:0", "b:0", "a", b"b:0", "b"],
    "empty_list": lambda tf, a, b: [],
    "empty_dict": lambda tf, a, b: {},
    "nested_empty": lambda tf, a, b: [[], ((),), {"k": []}],
    "list_subclass": lambda tf, a, b: type("Fetches", (list,), {})([a, b]),
    "variable": lambda tf, a, b: [tf.Variable(4.0, name="v"), tf.Variable([1], name="w").op],
}


def _fetch_case(build):
    def run_case(tf):
        a, b = _consts(tf)
        fetches = build(tf, a, b)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            result = sess.run(fetches)
        if isinstance(result, collections.defaultdict):
            result = ("defaultdict", result.default_factory is int, dict(result),
                      result["missing"])
        elif isinstance(result, list):
            result = (type(result).__name__, result)
        return result
    return run_case


for _name, _build in _FETCHES.items():
    CASES[f"fetch_{_name}"] = _fetch_case(_build)


_BAD_FETCHES = {
    "none": lambda tf, a: None,
    "none_in_list": lambda tf, a: [a, None],
    "int": lambda tf, a: 3,
    "float_in_dict": lambda tf, a: {"x": 1.5},
    "missing_name": lambda tf, a: "nope:0",
    "missing_op_name": lambda tf, a: "nope",
    "bad_output_index": lambda tf, a: "a:3",
    "bad_name_format": lambda tf, a: "a:0:1",
    "other_graph": lambda tf, a: _other_graph_tensor(tf),
    "set": lambda tf, a: {a},
}


def _other_graph_tensor(tf):
    with tf.Graph().as_default():
        return tf.constant(1, name="other")


def _bad_fetch_case(build):
    def run_case(tf):
        a = tf.constant(1.0, name="a")
        with tf.Session() as sess:
            return outcome(sess.run, build(tf, a))
    return run_case


for _name, _build in _BAD_FETCHES.items():
    CASES[f"bad_fetch_{_name}"] = _bad_fetch_case(_build)


@case
def fetch_not_fetchable(tf):
    a = tf.constant(1.0, name="a")
    tf.get_default_graph().prevent_fetching(a.op)
    with tf.Session() as sess:
        return outcome(sess.run, a), outcome(sess.run, [a.op])


# -- feeds ---------------------------------------------------------------------------

_FEEDS = {
    "float_list": ("float32", [None], [1, 2]),
    "int_scalar": ("int32", [], 7),
    "numpy_int64_to_int32": ("int32", [2], np.array([1, 2], np.int64)),
    "float_to_int": ("int32", [2], [1.7, -1.7]),
    "bool": ("bool", [2], [1, 0]),
    "string": ("string", [2], ["a", b"b"]),
    "string_scalar": ("string", [], "x"),
    "int64_big": ("int64", [], 2 ** 40),
    "int32_overflow": ("int32", [], 2 ** 40),
    "int32_max_int64": ("int32", [], np.iinfo(np.int64).max),
    "uint8_negative": ("uint8", [], -1),
    "int32_list_overflow": ("int32", [2], [1, 2 ** 40]),
    "float_string": ("float32", [], "abc"),
    "shape_mismatch": ("float32", [2], [1, 2, 3]),
    "rank_mismatch": ("float32", [None, 2], [1, 2]),
    "unknown_shape": ("float32", None, [[1, 2], [3, 4]]),
    "nested_ragged": ("float32", None, [[1], [2, 3]]),
    "half": ("float16", [2], [0.5, 1.5]),
    "float64": ("float64", [1], [1e100]),
    "int_to_string": ("string", None, 1),
    "int_to_bool": ("bool", [], 2),
    "one_to_bool": ("bool", [], 1),
    "int_to_float": ("float32", [], 3),
    "bool_to_int": ("int32", [], True),
    "numpy_scalar_overflow": ("int32", [], np.int64(2 ** 40)),
}


def _feed_case(dtype, shape, value):
    def run_case(tf):
        p = tf.placeholder(getattr(tf, dtype), shape, name="p")
        return run(tf, tf.identity(p), {p: value})
    return run_case


for _name, (_dtype, _shape, _value) in _FEEDS.items():
    CASES[f"feed_{_name}"] = _feed_case(_dtype, _shape, _value)


_BAD_FEED_KEYS = {
    "int": lambda tf, p: 3,
    "missing_name": lambda tf, p: "nope:0",
    "op_name": lambda tf, p: "p",
    "operation": lambda tf, p: p.op,
    "other_graph": lambda tf, p: _other_graph_tensor(tf),
    "tensor_value": None,
}


def _bad_feed_key_case(key):
    def run_case(tf):
        p = tf.placeholder(tf.float32, [], name="p")
        with tf.Session() as sess:
            if key is None:
                return outcome(sess.run, p, {p: tf.constant(1.0)})
            return outcome(sess.run, p * 2, {key(tf, p): 1.0})
    return run_case


for _name, _key in _BAD_FEED_KEYS.items():
    CASES[f"bad_feed_key_{_name}"] = _bad_feed_key_case(_key)


@case
def feed_by_name(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    q = tf.placeholder(tf.float32, [], name="q")
    return run(tf, p + q, {"p:0": 1.0, b"q:0": 2.0})


@case
def feed_not_placeholder(tf):
    a = tf.constant([1.0, 2.0], name="a")
    b = a * 2
    return run(tf, [a, b], {a: [5.0, 6.0]})


@case
def fetch_fed_tensor(tf):
    p = tf.placeholder(tf.int32, [None], name="p")
    return run(tf, [p, p + 1], {p: np.array([3], np.int64)})


@case
def feed_prevented(tf):
    a = tf.constant(1.0, name="a")
    tf.get_default_graph().prevent_feeding(a)
    return outcome(run, tf, a * 2, {a: 3.0})


@case
def feed_tuple_key(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    q = tf.placeholder(tf.int32, [], name="q")
    return run(tf, [p, q], {(p, q): (1.5, 2)})


@case
def feed_nested_tuple_key(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    q = tf.placeholder(tf.int32, [], name="q")
    r = tf.placeholder(tf.bool, [], name="r")
    return run(tf, [p, q, r], {(p, (q, r)): [1.5, (2, True)]})


@case
def feed_tuple_key_wrong_length(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    q = tf.placeholder(tf.int32, [], name="q")
    return outcome(run, tf, [p, q], {(p, q): (1.5, 2, 3)})


@case
def feed_missing_placeholder(tf):
    p = tf.placeholder(tf.float32, [2], name="p")
    q = tf.placeholder(tf.float32, [], name="q")
    u = tf.placeholder(tf.float32, name="u")
    return [outcome(run, tf, p * 2), outcome(run, tf, q * 2), outcome(run, tf, u * 2)]


# -- sparse tensors and indexed slices ------------------------------------------------

@case
def sparse_tensor_properties(tf):
    sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    return [sp.indices, sp.values, sp.dense_shape, sp.dtype, sp.get_shape(), sp.shape,
            sp.op, sp.graph is tf.get_default_graph()]


@case
def sparse_tensor_fetch(tf):
    sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    with tf.Session() as sess:
        value = sess.run(sp)
        nested = sess.run({"s": [sp, sp.values]})
        single = sp.eval()
    return (type(value).__name__, tuple(value), value.indices, value.values,
            value.dense_shape, nested["s"][0].values, nested["s"][1], single.dense_shape)


@case
def sparse_tensor_value(tf):
    value = tf.SparseTensorValue([[0]], [5], [2])
    return type(value).__name__, value.indices, value.values, value.dense_shape, tuple(value)


@case
def sparse_tensor_feed(tf):
    indices = tf.placeholder(tf.int64, name="i")
    values = tf.placeholder(tf.float32, name="v")
    shape = tf.placeholder(tf.int64, name="s")
    sp = tf.SparseTensor(indices, values, shape)
    value = tf.SparseTensorValue(np.array([[0, 1]], np.int64), np.array([2.5], np.float32),
                                 np.array([2, 2], np.int64))
    with tf.Session() as sess:
        fed = sess.run([sp.indices, sp.values, sp.dense_shape], {sp: value})
        as_tuple = sess.run(sp, {sp: ([[1, 0]], [4.0], [3, 3])})
    return fed, tuple(as_tuple)


@case
def sparse_placeholder(tf):
    sp = tf.sparse_placeholder(tf.float32, shape=[3, 4], name="sp")
    doubled = sp.values * 2
    with tf.Session() as sess:
        out = sess.run([sp, doubled], {sp: ([[0, 0], [2, 3]], [1.0, 2.0], [3, 4])})
    return ([op.name for op in tf.get_default_graph().get_operations()],
            sp.indices, sp.values, sp.dense_shape, sp.get_shape(), tuple(out[0]), out[1])


@case
def sparse_placeholder_partial_shape(tf):
    sp = tf.sparse_placeholder(tf.int32, shape=[None, 5])
    unknown = tf.sparse_placeholder(tf.int32)
    with tf.Session() as sess:
        out = sess.run(sp, {sp: tf.SparseTensorValue([[1, 4]], [7], [2, 5])})
    return sp.get_shape(), unknown.get_shape(), sp.dense_shape, tuple(out)


@case
def sparse_tensor_bad_feed_shape(tf):
    sp = tf.sparse_placeholder(tf.float32, shape=[3, 4])
    with tf.Session() as sess:
        return outcome(sess.run, sp.values, {sp: ([[0, 0]], [1.0, 2.0], [3, 4])})


@case
def indexed_slices_fetch_and_feed(tf):
    values = tf.constant([[1.0, 2.0]], name="values")
    indices = tf.constant([1], name="indices")
    shape = tf.constant([3, 2], name="shape")
    with_shape = tf.IndexedSlices(values, indices, shape)
    without_shape = tf.IndexedSlices(values, indices)
    with tf.Session() as sess:
        a = sess.run(with_shape)
        b = sess.run(without_shape)
        fed = sess.run([with_shape.values, with_shape.indices],
                       {with_shape: ([[5.0, 6.0]], [0], [2, 2])})
    return (type(a).__name__, a.values, a.indices, a.dense_shape, b.dense_shape, tuple(a),
            fed)


@case
def make_callable_sparse(tf):
    sp = tf.sparse_placeholder(tf.float32, shape=[2])
    with tf.Session() as sess:
        call = sess.make_callable(sp.values * 2, feed_list=[sp])
        return call(([[0]], [1.5], [2]))


# -- make_callable ---------------------------------------------------------------------

@case
def make_callable_structures(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    q = tf.placeholder(tf.float32, [], name="q")
    with tf.Session() as sess:
        single = sess.make_callable(p + q, [p, q])
        nested = sess.make_callable({"s": [p * 2, (q,)]}, (p, q))
        op = sess.make_callable(tf.no_op())
        const = sess.make_callable(tf.constant(4))
        return single(1.0, 2.0), nested(3.0, 4.0), op(), const()


@case
def make_callable_errors(tf):
    p = tf.placeholder(tf.float32, [], name="p")
    with tf.Session() as sess:
        return [outcome(sess.make_callable, p, p), outcome(sess.make_callable, None),
                outcome(sess.make_callable(p * 2, [p]), [1.0, 2.0]),
                outcome(sess.make_callable(p * 2, [p])),
                outcome(sess.make_callable(p * 2, [p]), 1.0, options=None)]


@case
def make_callable_with_options(tf):
    a = tf.constant(3.0)
    with tf.Session() as sess:
        call = sess.make_callable(a, accept_options=True)
        metadata = tf.RunMetadata()
        value = call(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
        return value, len(metadata.step_stats.dev_stats) > 0


# -- partial runs -----------------------------------------------------------------------

@case
def partial_run(tf):
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    c = tf.placeholder(tf.float32, [], name="c")
    r1 = a + b
    r2 = r1 * c
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        first = sess.partial_run(h, r1, {a: 1.0, b: 2.0})
        second = sess.partial_run(h, r2, {c: first})
        h2 = sess.partial_run_setup({"x": r1, "y": [r2]}, [a, b, c])
        both = sess.partial_run(h2, [r1], {a: 2.0, b: 3.0})
        rest = sess.partial_run(h2, {"y": r2}, {c: 10.0})
    return first, second, both, rest


@case
def partial_run_errors(tf):
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    r1 = a + b
    r2 = r1 * 2
    other = tf.constant(1.0, name="other")
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b])
        errors = [outcome(sess.partial_run, h, other, {a: 1.0})]
        first = sess.partial_run(h, r1, {a: 1.0, b: 2.0})
        errors += [outcome(sess.partial_run, h, r1, {a: 1.0}),
                   outcome(sess.partial_run, h, r2, {a: 1.0})]
        second = sess.partial_run(h, r2)
        errors.append(outcome(sess.partial_run, h, r2))
        h = sess.partial_run_setup([r1, r2], [a, b])
        errors.append(outcome(sess.partial_run, h, r2, {a: 1.0}))
        errors.append(outcome(sess.partial_run, "nope", r2, {a: 1.0}))
        h = sess.partial_run_setup([r1, r2.op], [a, b])
        errors.append(outcome(sess.partial_run, h, [r2.op, r1], {a: 1.0, b: 2.0}))
        h = sess.partial_run_setup([r2], [a, b])
        nothing = sess.partial_run(h, [], {a: 1.0})
        last = sess.partial_run(h, r2, {b: 1.0})
    return first, second, nothing, last, errors


# -- the session's lifetime ---------------------------------------------------------

@case
def reentering_a_session(tf):
    a = tf.constant(1)
    sess = tf.Session()
    try:
        with sess:
            with sess:
                pass
    except RuntimeError as err:
        error = err
    return error, outcome(sess.run, a)


@case
def empty_graph(tf):
    with tf.Session() as sess:
        return [outcome(sess.run, []), outcome(sess.run, {}),
                outcome(sess.partial_run_setup, [])]


@case
def closed_session(tf):
    a = tf.constant(1)
    sess = tf.Session()
    sess.close()
    sess.close()
    return [outcome(sess.run, a), outcome(sess.partial_run_setup, [a])]


@case
def empty_fetches(tf):
    tf.constant(1)
    with tf.Session() as sess:
        return sess.run([]), sess.run({}), sess.run(()), sess.run([[], {}])


@case
def default_session(tf):
    a = tf.constant(5)
    sess = tf.Session()
    with sess.as_default():
        inside = tf.get_default_session() is sess, a.eval()
        with sess.as_default():
            nested = tf.get_default_session() is sess
    sess.close()
    return inside, nested, tf.get_default_session() is None


@case
def eval_without_session(tf):
    return outcome(tf.constant(1).eval)


@case
def eval_other_graph(tf):
    a = tf.constant(1)
    with tf.Graph().as_default():
        with tf.Session() as sess:
            return outcome(a.eval, session=sess)


@case
def session_graph_and_config(tf):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1)
    with tf.Session(graph=g) as sess:
        same = sess.graph is g
    return [same, outcome(tf.Session, config=3), outcome(tf.Session, graph=3),
            outcome(tf.Session, target=3)]


@case
def graph_def_versions(tf):
    return (tf.GRAPH_DEF_VERSION, tf.GRAPH_DEF_VERSION_MIN_CONSUMER,
            tf.GRAPH_DEF_VERSION_MIN_PRODUCER)


@case
def interactive_sessions(tf):
    a = tf.constant(2)
    first = tf.InteractiveSession()
    second = tf.InteractiveSession()
    value = a.eval()
    second.close()
    after_second = tf.get_default_session() is first
    first.close()
    return value, after_second, tf.get_default_session() is None, \
        tf.get_default_graph() is a.graph


@case
def session_run_string_types(tf):
    tf.constant(3, name=b"c")
    with tf.Session() as sess:
        return sess.run("c:0"), sess.run(b"c:0"), sess.run(["c:0", b"c:0"]), sess.run("c")


@case
def run_metadata_partition_graphs(tf):
    a = tf.constant(1.0, name="a")
    b = tf.identity(a, name="b")
    with tf.Session() as sess:
        metadata = tf.RunMetadata()
        sess.run(b, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
    # the nodes are not compared: TensorFlow's optimizer folds and renames them
    return len(metadata.partition_graphs)


@case
def run_metadata_describes_the_last_run_only(tf):
    b = tf.identity(tf.constant(1.0), name="b")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(b, options=tf.RunOptions(output_partition_graphs=True,
                                          trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
        asked = (len(metadata.partition_graphs) > 0, len(metadata.step_stats.dev_stats) > 0)
        sess.run(b, run_metadata=metadata)
        return asked, len(metadata.partition_graphs), len(metadata.step_stats.dev_stats)


@case
def switch_to_thread_local(tf):
    import threading

    g = tf.get_default_graph()
    names = []
    with g.name_scope("outer"), g.device("/cpu:0"):
        g.switch_to_thread_local()

        def build():
            with g.as_default(), g.name_scope("inner"):
                names.append(tf.constant(2.0, name="t").op.name)

        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
        a = tf.constant(1.0, name="a")
    return a.device, a.op.name, names, run(tf, a)
