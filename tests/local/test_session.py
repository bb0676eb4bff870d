"""Session.run: fetch structures, feeds, default sessions, callables and timeouts."""

import collections
import functools
import threading
import time

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.base.shapes import TensorShape
from dtfnb.framework.registry import define_op
from dtfnb.kernels.registry import register_kernel
from dtfnb.ops.building import make_tensor
from dtfnb.protos import config_pb2
from tests import helpers

Pair = collections.namedtuple("Pair", ["first", "second"])


@pytest.fixture
def consts():
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    c = tf.constant("text", name="c")
    return a, b, c


# -- fetch structures --------------------------------------------------------------------------


def test_single_fetches(consts):
    a, b, c = consts
    with tf.Session() as sess:
        value = sess.run(a)
        assert value == 1.0 and isinstance(value, np.float32)
        np.testing.assert_array_equal(sess.run(b), [2, 3])
        assert sess.run(b).dtype == np.int32
        assert sess.run(c) == b"text"
        assert sess.run(a.op) is None
        assert sess.run("a:0") == 1.0
        assert sess.run("a") is None  # an op name runs the op


def test_nested_fetch_structures(consts):
    a, b, c = consts
    with tf.Session() as sess:
        assert sess.run([a, a.op]) == [1.0, None]
        out = sess.run((a, [b, {"k": c}]))
        assert isinstance(out, tuple) and isinstance(out[1], list)
        assert out[0] == 1.0 and out[1][1] == {"k": b"text"}
        pair = sess.run(Pair(a, c))
        assert isinstance(pair, Pair) and pair == Pair(1.0, b"text")
        nested = sess.run({"x": Pair(first=[a, "a:0"], second=(c,)), "y": b.op})
        assert nested == {"x": Pair([1.0, 1.0], (b"text",)), "y": None}
        assert sess.run([]) == []
        ordered = sess.run(collections.OrderedDict([("z", a), ("y", c)]))
        assert isinstance(ordered, collections.OrderedDict) and list(ordered) == ["z", "y"]


def test_duplicate_fetches_are_computed_once():
    v = tf.Variable(0.0, name="v")
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([inc, inc, (inc,)]) == [1.0, 1.0, (1.0,)]
        assert sess.run(v) == 1.0


def test_fetched_arrays_are_copies():
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        value = sess.run(v)
        value[0] = 100.0
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_bad_fetches():
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(1.0)
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        with pytest.raises(TypeError):
            sess.run(None)
        with pytest.raises(TypeError):
            sess.run(42)
        with pytest.raises(ValueError):
            sess.run(other)
        with pytest.raises(ValueError):
            sess.run("missing:0")
        assert sess.run(a) == 1.0


# -- feeds ---------------------------------------------------------------------------------------


def test_feeding_placeholders_by_tensor_and_name():
    p = tf.placeholder(tf.float32, shape=(None, 2), name="p")
    q = tf.identity(p, name="q")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(q, {p: [[1, 2]]}), [[1, 2]])
        np.testing.assert_array_equal(sess.run(q, {"p:0": np.ones((3, 2))}), np.ones((3, 2)))
        # a fed tensor fetched gives back the fed value
        np.testing.assert_array_equal(sess.run(p, {p: [[5, 6]]}), [[5, 6]])


def test_feeds_convert_to_the_tensor_dtype():
    p = tf.placeholder(tf.float32, name="p")
    i = tf.placeholder(tf.int32, name="i")
    with tf.Session() as sess:
        value = sess.run(p, {p: [1, 2]})
        assert value.dtype == np.float32
        assert sess.run(i, {i: np.float64(3.0)}).dtype == np.int32
        with pytest.raises((TypeError, ValueError)):
            sess.run(p, {p: "not a number"})


def test_any_tensor_may_be_fed_and_its_producer_then_does_not_run():
    counter = tf.Variable(0, name="counter")
    bumped = tf.assign_add(counter, 1)
    doubled = tf.identity(bumped, name="doubled")
    p = tf.placeholder(tf.float32, name="p")
    through = tf.identity(p, name="through")
    downstream = tf.identity(through, name="downstream")
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(doubled, {bumped: 41}) == 41
        assert sess.run(counter) == 0  # assign_add did not run
        assert sess.run(downstream, {through: 7.0}) == 7.0  # p was never needed
        assert sess.run(doubled) == 1


def test_feeding_a_wrong_shape_is_a_value_error():
    p = tf.placeholder(tf.float32, shape=(None, 2), name="p")
    anything = tf.placeholder(tf.float32, name="anything")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\) for Tensor "
                           r"p:0, which has shape \(\?, 2\)"):
            sess.run(p, {p: [1.0, 2.0]})
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(1, 3\)"):
            sess.run(p, {p: [[1.0, 2.0, 3.0]]})
        assert sess.run(p, {p: np.zeros((5, 2))}).shape == (5, 2)   # any batch size
        assert sess.run(anything, {anything: np.zeros((2, 3, 4))}).shape == (2, 3, 4)


def test_non_feedable_and_foreign_tensors_are_rejected():
    a = tf.constant(1.0, name="a")
    b = tf.identity(a, name="b")
    tf.get_default_graph().prevent_feeding(a)
    g = tf.Graph()
    with g.as_default():
        foreign = tf.constant(2.0)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="may not be fed"):
            sess.run(b, {a: 5.0})
        with pytest.raises(TypeError, match="not an element of this graph"):
            sess.run(b, {foreign: 5.0})
        with pytest.raises(TypeError):
            sess.run(b, {b: tf.constant(3.0)})  # a feed value cannot be a Tensor
        with pytest.raises(TypeError):
            sess.run(b, {"zzz:0": 1.0})
        assert sess.run(b) == 1.0


def test_unfed_placeholder_is_an_invalid_argument_error():
    p = tf.placeholder(tf.float32, shape=(None, 2), name="p")
    q = tf.identity(p, name="q")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(q)
    assert info.value.message.startswith(
        "You must feed a value for placeholder tensor 'p' with dtype float and shape [?,2]")
    assert info.value.op is p.op


# -- session life and default sessions ------------------------------------------------------------


def test_closed_session_raises_runtime_error():
    a = tf.constant(1.0)
    sess = tf.Session()
    sess.close()
    sess.close()  # closing twice is fine
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(a)


def test_with_session_makes_it_the_default_session_and_graph():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0, name="a")
        v = tf.Variable(3.0, name="v")
    assert tf.get_default_session() is None
    with tf.Session(graph=g) as sess:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is g
        assert sess.graph is g
        v.initializer.run()
        assert a.eval() == 2.0
        assert v.eval() == 3.0
        assert a.eval(feed_dict={a: 5.0}) == 5.0
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError):
        sess.run(a)
    with pytest.raises(ValueError, match="No default session"):
        a.eval()


def test_as_default_does_not_close_and_explicit_sessions_work():
    a = tf.constant(2.0, name="a")
    sess = tf.Session()
    with sess.as_default():
        assert a.eval() == 2.0
    assert a.eval(session=sess) == 2.0
    assert sess.run(a) == 2.0
    other = tf.Graph()
    with other.as_default():
        b = tf.constant(1.0)
    with pytest.raises(ValueError):
        b.eval(session=sess)
    sess.close()


def test_interactive_session_installs_itself_as_default():
    a = tf.constant(4.0, name="a")
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert a.eval() == 4.0
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_session_properties_and_config_type():
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        assert sess.sess_str == ""
        assert [n.name for n in sess.graph_def.node] == ["a"]
    with pytest.raises(TypeError):
        tf.Session(config={"allow_soft_placement": True})
    del a


def test_graph_grows_between_runs():
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        assert sess.run(a) == 1.0
        b = tf.add(a, a, name="b")
        assert sess.run(b) == 2.0
        assert sess.run([a, b]) == [1.0, 2.0]


def test_graph_defs_carry_tensorflows_versions_and_only_the_nodes():
    with tf.Session() as sess:
        assert str(sess.graph_def) == (f"versions {{\n  producer: {tf.GRAPH_DEF_VERSION}\n}}\n")
        a = tf.constant(1.0)
        delta = sess.graph.as_graph_def(from_version=sess.graph.version)
        assert len(delta.node) == 0 and delta.versions == sess.graph.graph_def_versions
        assert sess.run(a) == 1.0 and len(sess.graph_def.node) == 1


def test_make_callable_runs_fetches_with_positional_feeds():
    p = tf.placeholder(tf.float32, name="p")
    q = tf.placeholder(tf.float32, name="q")
    total = tf.add(p, q, name="total")
    with tf.Session() as sess:
        add = sess.make_callable(total, [p, q])
        assert add(1.0, 2.0) == 3.0
        assert add(10.0, 20.0) == 30.0
        both = sess.make_callable([total, total.op], feed_list=[p, q])
        assert both(1.0, 1.0) == [2.0, None]
        constant = sess.make_callable(tf.constant(7.0))
        assert constant() == 7.0
        with tf.Graph().as_default():
            elsewhere = tf.constant(1.0)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.make_callable(elsewhere)  # checked once, when made, as in TensorFlow
    with pytest.raises(RuntimeError, match="closed Session"):
        add(1.0, 2.0)


def test_sessions_have_separate_state():
    v = tf.Variable(1.0, name="v")
    with tf.Session() as first, tf.Session() as second:
        first.run(v.initializer)
        assert first.run(v) == 1.0
        with pytest.raises(tf.errors.FailedPreconditionError):
            second.run(v)


def test_sessions_in_threads_share_a_graph():
    x = tf.placeholder(tf.float32, name="x")
    y = tf.add(x, x, name="y")
    results = {}

    def work(k):
        with tf.Session(graph=y.graph) as sess:
            results[k] = [sess.run(y, {x: float(k * 10 + i)}) for i in range(20)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert results[k] == [2.0 * (k * 10 + i) for i in range(20)]


# -- timeouts --------------------------------------------------------------------------------------

define_op("DtfnbTestWaitForever", lambda op: [TensorShape([])], stateful=True)


@register_kernel("DtfnbTestWaitForever", blocking=True)
def _wait_forever(ctx, step):
    """Blocks until the step's deadline passes or the step is aborted."""
    cond = threading.Condition()
    with cond:
        step.wait(cond, lambda: False)


def _blocker():
    return make_tensor("DtfnbTestWaitForever", [], tf.float32, name="wait")


def test_operation_timeout_in_ms_gives_deadline_exceeded_and_the_session_lives_on():
    wait = _blocker()
    a = tf.constant(1.0, name="a")
    config = tf.ConfigProto(operation_timeout_in_ms=100)
    with tf.Session(config=config) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            sess.run(wait)
        assert time.monotonic() - start < 5
        assert info.value.error_code == 4
        assert "Timed out waiting for notification" in info.value.message
        assert sess.run(a) == 1.0
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run([wait, a])  # every run of the session is bounded
        assert sess.run(a) == 1.0


def test_run_options_timeout_applies_per_call_and_overrides_the_config():
    wait = _blocker()
    a = tf.constant(1.0, name="a")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match="Timed out waiting for notification"):
            sess.run(wait, options=tf.RunOptions(timeout_in_ms=50))
        assert sess.run(a, options=tf.RunOptions(timeout_in_ms=50)) == 1.0
    config = tf.ConfigProto(operation_timeout_in_ms=600000)
    with tf.Session(config=config) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(wait, options=tf.RunOptions(timeout_in_ms=50))
        assert time.monotonic() - start < 5


def test_fed_strings_become_bytes_as_in_tensorflow():
    p = tf.placeholder(tf.string)
    with tf.Session() as sess:
        assert sess.run(p, {p: "x"}) == b"x"
        assert sess.run(p, {p: [["é", b"b"]]}).tolist() == [["é".encode(), b"b"]]
        assert sess.run(p, {p: []}).shape == (0,)


def test_concurrent_first_runs_after_the_graph_grew_lose_nothing():
    with tf.Session() as sess:
        helpers.assert_concurrent_first_runs_lose_nothing(sess)


def test_names_may_be_bytes_as_in_tensorflow():
    c = tf.constant(3.0, name="c")
    x = tf.placeholder(tf.float32, name="x")
    y = x * 2
    assert tf.get_default_graph().as_graph_element(b"c:0") is c
    with tf.Session() as sess:
        assert sess.run(b"c:0") == 3.0
        assert sess.run(b"c") is None
        assert sess.run(y, {b"x:0": 1.0}) == 2.0


def test_make_callable_takes_run_options_only_when_asked():
    c = tf.constant(2.0)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="options"):
            sess.make_callable(c)(options=tf.RunOptions())
        traced = sess.make_callable(c, accept_options=True)
        metadata = tf.RunMetadata()
        assert traced(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                      run_metadata=metadata) == 2.0
        assert len(metadata.step_stats.dev_stats) > 0


def test_identities_and_groups_keep_their_order_whether_a_step_is_traced_or_not():
    """An untraced step skips what only passes a value on (Identity) or orders (NoOp);
    what they ordered still happens in order, and a traced step shows them."""
    v = tf.Variable(1.0)
    x = tf.placeholder(tf.float32)
    before = tf.identity(v)                    # a ref's value: read before the assign
    with tf.control_dependencies([before]):
        assign = tf.assign_add(v, 10.0)
    with tf.control_dependencies([assign]):
        after = tf.identity(x, name="after")   # passes x on, once v is 11
    total = tf.assign_add(v, after)            # 16 only after the first assign
    done = tf.group(total, name="done")
    full = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        for options in (None, full):
            sess.run(v.initializer)
            metadata = tf.RunMetadata()
            assert sess.run([before, total, done], {x: 5.0}, options=options,
                            run_metadata=metadata) == [1.0, 16.0, None]
            shown = {node.node_name for device in metadata.step_stats.dev_stats
                     for node in device.node_stats}
            assert {"after", "done"} <= shown if options else not shown


def test_build_cost_model_fills_a_cost_graph_every_so_many_runs_of_a_signature():
    config = tf.ConfigProto(graph_options=tf.GraphOptions(build_cost_model=2,
                                                          infer_shapes=True))
    a = tf.constant([1.0, 2.0], name="a")
    b = tf.add(a, a, name="b")
    with tf.Session(config=config) as sess:
        assert list(sess.graph_def.node[1].attr["_output_shapes"].list.shape[0].dim) \
            == [tf.TensorShape([2]).as_proto().dim[0]]
        graphs = []
        for _ in range(4):
            metadata = tf.RunMetadata()
            sess.run(b, run_metadata=metadata)
            graphs.append(metadata.cost_graph if metadata.HasField("cost_graph") else None)
    assert graphs[0] is None and graphs[2] is None and not graphs[1].node[0].input_info
    nodes = {node.name: node for node in graphs[3].node}
    assert [i.preceding_node for i in nodes["b"].input_info] == [nodes["a"].id] * 2
    output, = nodes["b"].output_info
    assert (output.size, [d.size for d in output.shape.dim], output.dtype) == \
        (8, [2], tf.float32.as_datatype_enum)


def test_callable_from_options_feeds_values_as_they_are():
    ph = tf.placeholder(tf.float32)
    a = tf.add(ph, 1.0)
    options = config_pb2.CallableOptions(feed=[ph.name], fetch=[a.name, a.name])
    options.run_options.trace_level = tf.RunOptions.FULL_TRACE
    with tf.Session() as sess:
        call = sess._make_callable_from_options(options)
        metadata = tf.RunMetadata()
        assert call(np.float32(1.0), run_metadata=metadata) == [2.0, 2.0]
        assert metadata.step_stats.dev_stats
        with pytest.raises(tf.errors.InvalidArgumentError, match="actual double vs. expect float"):
            call(1.0)


def test_shape_arithmetic_on_constants_runs_once_before_the_steps_unless_traced(monkeypatch):
    """As TensorFlow's Grappler folds it: shape arithmetic on constants alone (a Fill, a
    Mul...) runs when the graph is set up, not in each untraced step; a traced step runs
    and shows it. One that fails, or whose output is large, runs in each step."""
    from dtfnb.kernels import registry
    runs = collections.Counter()
    for op_type in ("Fill", "Mul"):
        kernel = registry.find_kernel(op_type, "CPU", {})
        monkeypatch.setattr(kernel, "fn", functools.partial(
            lambda fn, ctx, *args: runs.update([ctx.name]) or fn(ctx, *args), kernel.fn))
    x = tf.placeholder(tf.float32, name="x")
    twos = tf.multiply(tf.fill([2, 3], 1.0, name="ones"), 2.0, name="twos")
    big = tf.fill([300, 300], 1.0, name="big")                  # 360 KB: made each step
    bad = tf.floormod(tf.constant([4]), tf.constant([0]), name="bad")
    out = tf.multiply(x, tf.reduce_sum(twos), name="out")
    full = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        for _ in range(3):
            value, kept, ones = sess.run([out, twos, big], {x: 1.5})
            assert value == 18.0 and kept.sum() == 12.0 and ones.sum() == 90000
            kept[:] = 0   # a fetched value is the caller's: the one kept is not changed
            ones[:] = 0
        # set up once: ones and twos; big tried then made by each step; out each step
        assert runs == {"ones": 1, "twos": 1, "big": 1 + 3, "out": 3}
        metadata = tf.RunMetadata()
        sess.run(twos, options=full, run_metadata=metadata)
        # set up again for this new fetch, then run by the traced step
        assert runs["twos"] == 1 + 2 and "twos" in {
            n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}
        for options in (None, full):
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Integer division by zero"):
                sess.run(bad, options=options)
