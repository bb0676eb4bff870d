"""TF1 control flow: tf.cond, tf.case and tf.while_loop, their graphs, runs and errors."""

import collections

import numpy as np
from observe import node_defs, outcome, run

_ATTRS = ("T", "N", "frame_name", "is_constant", "parallel_iterations")
_CONTROL_FLOW = {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                 "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "Identity"}


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _nodes(tf):
    """Each op's name, type and inputs, and the attrs of the ops control flow adds.
    (String attrs as text: dtfnb's get_attr gives str where TensorFlow gives bytes, for
    every op.)"""
    found = []
    for op in tf.get_default_graph().get_operations():
        attrs = {}
        for name in _ATTRS + ("_class",) if op.type in _CONTROL_FLOW else ():
            try:
                value = op.get_attr(name)
            except ValueError:
                continue
            attrs[name] = ([_text(v) for v in value] if isinstance(value, list)
                           else getattr(value, "name", _text(value)))
        found.append([op.name, op.type, list(op.node_def.input), attrs])
    return found


# -- cond -------------------------------------------------------------------------------


def cond_both_ways(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    r = tf.cond(x > 0, lambda: x * 2.0, lambda: x - 1.0)
    with tf.Session() as sess:
        return sess.run(r, {x: 3.0}), sess.run(r, {x: -3.0}), r


def cond_graph(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    c = tf.constant(3.0, name="c")
    tf.cond(x > 0, lambda: x * c, lambda: tf.constant(1.0) - x)
    return _nodes(tf)


def cond_untaken_assign(tf):
    v = tf.Variable(0, name="v")
    pred = tf.placeholder(tf.bool, [])
    r = tf.cond(pred, lambda: tf.assign(v, 7), lambda: tf.identity(v))
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = sess.run(r, {pred: False})
        after_untaken = sess.run(v)
        second = sess.run(r, {pred: True})
        return first, after_untaken, second, sess.run(v)


def cond_assign_graph(tf):
    v = tf.Variable(1.0, name="v")
    tf.cond(tf.constant(True), lambda: tf.assign_add(v, 1.0), lambda: tf.identity(v))
    return _nodes(tf)


def cond_untaken_enqueue(tf):
    q = tf.FIFOQueue(5, tf.int32)
    pred = tf.placeholder(tf.bool, [])
    r = tf.cond(pred, lambda: tf.identity(1), lambda: tf.identity(2))
    enqueue = tf.cond(pred, lambda: q.enqueue(10), lambda: tf.no_op())
    with tf.Session() as sess:
        sess.run([r, enqueue], {pred: False})
        sizes = [sess.run(q.size())]
        sess.run(enqueue, {pred: True})
        sizes.append(sess.run(q.size()))
        return sizes


def cond_nested(tf):
    x = tf.placeholder(tf.int32, [])
    r = tf.cond(x > 0,
                lambda: tf.cond(x > 10, lambda: x * 100, lambda: x * 10),
                lambda: tf.cond(x < -10, lambda: -x, lambda: x - 1))
    with tf.Session() as sess:
        return [sess.run(r, {x: v}) for v in (20, 5, -20, -5)], r


def cond_nested_graph(tf):
    x = tf.placeholder(tf.int32, [], name="x")
    tf.cond(x > 0, lambda: tf.cond(x > 10, lambda: x * 3, lambda: x), lambda: x * 2)
    return _nodes(tf)


def cond_structures(tf):
    x = tf.constant(1.0)
    Pair = collections.namedtuple("Pair", "a b")
    results = [
        tf.cond(tf.constant(True), lambda: (x, x * 2), lambda: (x * 3, x * 4)),
        tf.cond(tf.constant(False), lambda: [x], lambda: [x * 5]),
        tf.cond(tf.constant(False), lambda: [x], lambda: [x * 5], strict=True),
        tf.cond(tf.constant(True), lambda: {"b": x, "a": x + 1},
                lambda: {"a": x, "b": x - 1}),
        tf.cond(tf.constant(False), lambda: Pair(x, x), lambda: Pair(x * 7, x * 8)),
    ]
    return results, run(tf, results)


def dict_structures_keep_their_key_order(tf):
    """Filled by sorted key, given back in the branch's own order (which a comparison of
    the dicts would not see)."""
    x = tf.constant(1.0)
    taken = tf.cond(tf.constant(True), lambda: {"b": x, "a": x + 1},
                    lambda: {"b": x - 1, "a": x})
    looped = tf.while_loop(lambda v: v["b"] < 3.0, lambda v: [{"b": v["b"] + 1, "a": v["a"]}],
                           [{"b": x, "a": x}])
    return [list(taken), list(looped[0])]


def structures_differ_first_in_their_items(tf):
    """A body whose result differs from the loop variables both in number and in an item:
    the item's difference is the one named, as TensorFlow compares items pairwise."""
    x = tf.constant(1.0)
    return outcome(tf.while_loop, lambda v: v["b"] < 3.0,
                   lambda v: {"b": v["b"] + 1, "a": v["a"]}, [{"b": x, "a": x}])


def cond_returns_outside_tensor(tf):
    x = tf.constant(4, name="x")
    y = tf.constant(5, name="y")
    r = tf.cond(tf.constant(False), lambda: x, lambda: y)
    return r, run(tf, r), _nodes(tf)


def cond_returns_op(tf):
    v = tf.Variable(1, name="v")
    pred = tf.placeholder(tf.bool, [])
    r = tf.cond(pred, lambda: tf.assign(v, 5).op, lambda: tf.no_op())
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = [sess.run(r, {pred: True}), sess.run(v)]
    return r, values


def cond_shapes(tf):
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [2, 4])
    c = tf.placeholder(tf.float32, [None, 3])
    p = tf.placeholder(tf.bool, [])
    return (tf.cond(p, lambda: a, lambda: b).shape, tf.cond(p, lambda: a, lambda: c).shape,
            tf.cond(p, lambda: a, lambda: tf.zeros([5])).shape)


def cond_variable_read_and_update(tf):
    v = tf.Variable(10.0, name="v")
    step = tf.placeholder(tf.float32, [])
    update = tf.cond(step > 0, lambda: tf.assign_sub(v, step), lambda: tf.assign_add(v, 100.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        return [sess.run(update, {step: s}) for s in (1.0, 2.0, -1.0)]


def cond_in_control_dependencies(tf):
    v = tf.Variable(0, name="v")
    inc = tf.assign_add(v, 1)
    with tf.control_dependencies([inc]):
        r = tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(r)
        return sess.run(v), _nodes(tf)


def cond_fetch_inside_branch(tf):
    x = tf.constant(2.0)
    seen = []

    def true_fn():
        seen.append(x * 3.0)
        return seen[0]

    tf.cond(tf.constant(True), true_fn, lambda: x)
    with tf.Session() as sess:
        return outcome(sess.run, seen[0])


def cond_errors(tf):
    t = tf.constant(True)
    one = tf.constant(1.0)
    return [
        outcome(tf.cond, t, lambda: [one, one], lambda: (one, one)),
        outcome(tf.cond, t, lambda: {"a": one}, lambda: {"b": one}),
        outcome(tf.cond, t, lambda: tf.constant(1), lambda: one),
        outcome(tf.cond, t, lambda: None, lambda: one),
        outcome(tf.cond, t, lambda: one, lambda: None),
        outcome(tf.cond, True, lambda: one, lambda: one),
        outcome(tf.cond, t, 1, lambda: one),
        outcome(tf.cond, t, lambda: one, "x"),
        outcome(tf.cond, t, lambda: one),
        outcome(tf.cond, t, lambda: one, lambda: one, fn1=lambda: one),
    ]


def cond_deprecated_fn_names(tf):
    r = tf.cond(tf.constant(False), fn1=lambda: tf.constant(1), fn2=lambda: tf.constant(2))
    return run(tf, r)


def cond_named(tf):
    x = tf.constant(1)
    a = tf.cond(tf.constant(True), lambda: x, lambda: x, name="choose")
    b = tf.cond(tf.constant(True), lambda: x, lambda: x, name="choose")
    return a, b


def cond_collections(tf):
    tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2))
    return len(tf.get_collection(tf.GraphKeys.COND_CONTEXT))


def cond_gradients(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    w = tf.Variable(2.0, name="w")
    r = tf.cond(x > 0, lambda: x * x * y, lambda: 3.0 * y)
    r2 = tf.cond(x > 0, lambda: w * x, lambda: tf.identity(w))
    grads = tf.gradients(r, [x, y]) + tf.gradients(r2, [w, x])
    with tf.Session() as sess:
        sess.run(w.initializer)
        return [sess.run(grads, {x: v, y: 5.0}) for v in (2.0, -1.0)]


def cond_gradients_nested_and_int_branch(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    n = tf.placeholder(tf.int32, [])
    r = tf.cond(n > 0, lambda: tf.cond(n > 5, lambda: tf.reduce_sum(x * x), lambda: x[0]),
                lambda: tf.reduce_sum(x) * 2.0)
    g = tf.gradients(r, x)
    with tf.Session() as sess:
        return [sess.run(g, {x: [1.0, 3.0], n: v}) for v in (7, 1, -1)]


def cond_training_step(tf):
    w = tf.Variable([1.0, -2.0], name="w")
    big = tf.placeholder(tf.bool, [])
    loss = tf.cond(big, lambda: tf.reduce_sum(w * w), lambda: tf.reduce_sum(w) * 0.5)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(w.initializer)
        for flag in (True, False, True):
            sess.run(train, {big: flag})
        return sess.run(w)


# -- case -------------------------------------------------------------------------------


def case_values(tf):
    x = tf.placeholder(tf.int32, [])
    r = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 10, lambda: tf.constant(100))],
                default=lambda: tf.constant(0))
    with tf.Session() as sess:
        return [sess.run(r, {x: v}) for v in (-5, 50, 5)], r


def case_exclusive(tf):
    x = tf.placeholder(tf.int32, [])
    r = tf.case([(x < 10, lambda: tf.constant(1)), (x < 20, lambda: tf.constant(2))],
                default=lambda: tf.constant(3), exclusive=True)
    with tf.Session() as sess:
        return sess.run(r, {x: 15}), sess.run(r, {x: 30}), outcome(sess.run, r, {x: 5})


def case_exclusive_graph(tf):
    """The asserts of an exclusive case without a default: their data hold bool tensors,
    so TensorFlow guards each with a cond."""
    x = tf.placeholder(tf.int32, [], name="x")
    r = tf.case([(x < 10, lambda: tf.constant(1)), (x >= 10, lambda: tf.constant(2))],
                exclusive=True)
    return r.name, node_defs(tf.get_default_graph(), skip=("x",))


def case_no_default(tf):
    x = tf.placeholder(tf.int32, [])
    r = tf.case([(x < 0, lambda: tf.constant(-1)), (x >= 0, lambda: tf.constant(1))])
    with tf.Session() as sess:
        return sess.run(r, {x: -3}), sess.run(r, {x: 3})


def case_errors(tf):
    x = tf.constant(1)
    return [outcome(tf.case, "x"), outcome(tf.case, [(x < 0,)]),
            outcome(tf.case, [(True, lambda: x)]),
            outcome(tf.case, [(x, lambda: x)]),
            outcome(tf.case, [(x < 0, 1)])]


# -- while_loop -------------------------------------------------------------------------


def while_counter_and_accumulator(tf):
    i = tf.constant(0)
    acc = tf.constant(1.0)
    out = tf.while_loop(lambda i, a: i < 10, lambda i, a: (i + 1, a * 2.0), [i, acc])
    return out, run(tf, out)


def while_graph(tf):
    i = tf.constant(0, name="i")
    acc = tf.constant(1.0, name="acc")
    k = tf.constant(2.0, name="k")
    tf.while_loop(lambda i, a: i < 10, lambda i, a: (tf.subtract(i, -1), a * k), [i, acc])
    return _nodes(tf)


def while_graph_options(tf):
    i = tf.constant(0, name="i")
    tf.while_loop(lambda i: i < 3, lambda i: tf.subtract(i, -1), [i],
                  parallel_iterations=1, name="loop")
    return _nodes(tf)


def while_single_var(tf):
    i = tf.constant(0)
    a = tf.while_loop(lambda i: i < 5, lambda i: i + 2, [i])
    b = tf.while_loop(lambda i: i < 5, lambda i: [i + 2], [i], return_same_structure=True)
    c = tf.while_loop(lambda i: i < 5, lambda i: (i + 2,), (i,))
    return a, b, c, run(tf, [a, b, c])


def while_python_values(tf):
    out = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), [0, 0.5])
    return out, run(tf, out)


def while_zero_iterations(tf):
    out = tf.while_loop(lambda i: i < 0, lambda i: i + 1, [tf.constant(7)])
    return run(tf, out)


def while_fed_bound(tf):
    n = tf.placeholder(tf.int32, [])
    out = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])
    with tf.Session() as sess:
        return [sess.run(out, {n: v}) for v in (0, 1, 10, 100)]


def while_maximum_iterations(tf):
    out = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)],
                        maximum_iterations=5)
    pair = tf.while_loop(lambda i, j: i < 100, lambda i, j: (i + 1, j - 1), [0, 0],
                         maximum_iterations=3)
    return out, pair, run(tf, [out, pair])


def while_structures(tf):
    Pair = collections.namedtuple("Pair", "a b")
    out = tf.while_loop(lambda p, d: p.a < 3,
                        lambda p, d: (Pair(p.a + 1, p.b * 2), {"y": d["y"] + 1, "x": d["x"]}),
                        [Pair(tf.constant(0), tf.constant(1)), {"x": tf.constant(5),
                                                                 "y": tf.constant(0)}])
    return out, run(tf, out)


def while_reads_variable(tf):
    v = tf.Variable(3.0, name="v")
    out = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + v), [0, 0.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        return sess.run(out)


def while_assigns_variable(tf):
    v = tf.Variable(0, name="v")

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, i)]):
            return i + 1

    out = tf.while_loop(lambda i: i < 5, body, [0], parallel_iterations=1)
    with tf.Session() as sess:
        sess.run(v.initializer)
        return sess.run(out), sess.run(v)


def while_assign_graph(tf):
    v = tf.Variable(0, name="v")

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1)]):
            return tf.subtract(i, -1)

    tf.while_loop(lambda i: i < 5, body, [tf.constant(0, name="i")])
    return _nodes(tf)


def while_dequeues(tf):
    q = tf.FIFOQueue(10, tf.float32)
    fill = q.enqueue_many([[1.0, 2.0, 3.0, 4.0, 5.0]])
    out = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + q.dequeue()), [0, 0.0])
    with tf.Session() as sess:
        sess.run(fill)
        return sess.run(out), sess.run(q.size())


def while_dequeue_runs_out(tf):
    q = tf.FIFOQueue(10, tf.float32)
    fill = q.enqueue_many([[1.0, 2.0]])
    out = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + q.dequeue()), [0, 0.0])
    with tf.Session() as sess:
        sess.run(fill)
        return outcome(sess.run, out, options=tf.RunOptions(timeout_in_ms=30))


def while_enqueues(tf):
    q = tf.FIFOQueue(10, tf.int32)

    def body(i):
        with tf.control_dependencies([q.enqueue(i * i)]):
            return i + 1

    out = tf.while_loop(lambda i: i < 4, body, [0], parallel_iterations=1)
    with tf.Session() as sess:
        sess.run(out)
        return sess.run(q.dequeue_many(4))


def while_with_cond(tf):
    def body(i, evens, odds):
        e, o = tf.cond(tf.equal(i % 2, 0), lambda: (evens + i, odds), lambda: (evens, odds + i))
        return i + 1, e, o

    out = tf.while_loop(lambda i, e, o: i < 10, body, [0, 0, 0])
    return run(tf, out)


def while_with_cond_graph(tf):
    def body(i):
        return tf.cond(i > 2, lambda: tf.subtract(i, -2), lambda: tf.subtract(i, -1))

    tf.while_loop(lambda i: i < 10, body, [tf.constant(0, name="i")])
    return _nodes(tf)


def while_nested(tf):
    def outer(i, total):
        inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), [0, 0])
        return i + 1, total + inner[1]

    out = tf.while_loop(lambda i, t: i < 5, outer, [0, 0])
    return run(tf, out)


def while_nested_graph(tf):
    def outer(i):
        return tf.while_loop(lambda j: j < i, lambda j: tf.subtract(j, -1), [i])

    tf.while_loop(lambda i: i < 3, outer, [tf.constant(0, name="i")])
    return _nodes(tf)


def while_in_untaken_branch(tf):
    pred = tf.placeholder(tf.bool, [])
    v = tf.Variable(0, name="v")

    def loop():
        def body(i):
            with tf.control_dependencies([tf.assign_add(v, 1)]):
                return i + 1
        return tf.while_loop(lambda i: i < 3, body, [0])

    r = tf.cond(pred, loop, lambda: tf.constant(-1))
    with tf.Session() as sess:
        sess.run(v.initializer)
        untaken = sess.run(r, {pred: False}), sess.run(v)
        taken = sess.run(r, {pred: True}), sess.run(v)
        return untaken, taken


def while_in_branch_graph(tf):
    x = tf.constant(1, name="x")
    tf.cond(x > 0, lambda: tf.while_loop(lambda i: i < 3, lambda i: tf.subtract(i, -1), [x]),
            lambda: x)
    return _nodes(tf)


def while_shape_invariants(tf):
    out = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.concat([s, [i]], 0)),
                        [0, tf.constant([9])],
                        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    return out, run(tf, out)


def while_loop_constant_ops(tf):
    # An op inside the body fed only by outside tensors runs once per iteration.
    c = tf.constant(2)
    out = tf.while_loop(lambda i, s: i < 3,
                        lambda i, s: (tf.subtract(i, -1), tf.subtract(s, c * 5)), [0, 0])
    return run(tf, out), _nodes(tf)


def while_fetch_inside(tf):
    seen = []

    def body(i):
        seen.append(i * 2)
        return i + 1

    tf.while_loop(lambda i: i < 3, body, [0])
    with tf.Session() as sess:
        return outcome(sess.run, seen[0])


def while_errors(tf):
    zero = tf.constant(0)
    return [
        outcome(tf.while_loop, lambda i: i < 3, lambda i: (i + 1, i), [zero]),
        outcome(tf.while_loop, lambda i, j: i < 3, lambda i, j: [i + 1], [zero, zero]),
        outcome(tf.while_loop, lambda i: i < 3, lambda i: i + 1, []),
        outcome(tf.while_loop, 1, lambda i: i + 1, [zero]),
        outcome(tf.while_loop, lambda i: i < 3, "body", [zero]),
        outcome(tf.while_loop, lambda i: i < 3, lambda i: i + 1, [zero],
                parallel_iterations=0),
        outcome(tf.while_loop, lambda i: i < 3, lambda i: i + 1, [tf.constant([0])],
                shape_invariants=[tf.TensorShape([2])]),
        outcome(tf.while_loop, lambda i: i < 3, lambda i: i + 1, [zero],
                maximum_iterations=[1, 2]),
    ]


def while_shape_grows_error(tf):
    return outcome(tf.while_loop, lambda i, s: i < 3,
                   lambda i, s: (i + 1, tf.concat([s, s], 0)), [0, tf.constant([1.0])])


def while_collections(tf):
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    return len(tf.get_collection(tf.GraphKeys.WHILE_CONTEXT))


def while_exit_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 2])
    out = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x * 2.0), [0, x])
    return out, run(tf, out, {x: np.ones([3, 2], np.float32)})


def while_long_loop(tf):
    out = tf.while_loop(lambda i, s: i < 1000, lambda i, s: (i + 1, s + i), [0, 0])
    return run(tf, out)


def while_on_another_device(tf):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        out = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [0, 0])
    return run(tf, out, config=config)


def cond_across_devices(tf):
    config = tf.ConfigProto(device_count={"CPU": 2})
    x = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:0"):
        pred = x > 0

    def on_other():
        with tf.device("/cpu:1"):
            return x * 10.0

    r = tf.cond(pred, on_other, lambda: x - 1.0)
    with tf.Session(config=config) as sess:
        return sess.run(r, {x: 2.0}), sess.run(r, {x: -2.0})


CASES = {name: fn for name, fn in list(globals().items())
         if callable(fn) and not name.startswith("_") and name[0].islower()
         and fn.__module__ == __name__}
