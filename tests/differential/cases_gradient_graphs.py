"""The ops tf.gradients adds, as TensorFlow adds them: default grad_ys, the gradients of
reductions (sum, mean, max and min; all axes or some, shapes known, partly known or
unknown), of broadcasting binary ops and of broadcast_to, the tuples that gate an op's
input gradients, and a training step of a small MLP built as the chapter builds one.

Where dtfnb differs on purpose (it gates only the gradients that flow on towards the
xs: docs/differences.md), no case here has a gradient that stops."""

import numpy as np
from observe import node_defs, outcome

CASES = {}


def _gradient_ops(build):
    """A case: the gradients of what `build(tf)` returns ((xs, y)) and every op under
    `gradients/`."""
    def case(tf):
        xs, y = build(tf)
        grads = tf.gradients(y, xs)
        graph = tf.get_default_graph()
        return [g.name for g in grads], [n for n in node_defs(graph)
                                         if n["name"].startswith("gradients")]
    return case


def _x(tf, shape, name="x"):
    return tf.placeholder(tf.float32, shape, name=name)


def _reduction(reduce, shape, **kwargs):
    def build(tf):
        x = _x(tf, shape)
        return [x], getattr(tf, reduce)(x, **kwargs)
    return build


def _binary(op, x_shape, y_shape):
    def build(tf):
        x, y = _x(tf, x_shape), _x(tf, y_shape, "y")
        return [x, y], op(x, y)
    return build


for _name, _shape in [("known", [2, 3]), ("partly_known", [None, 3]), ("unknown", None)]:
    CASES[f"sum_all_{_name}"] = _gradient_ops(_reduction("reduce_sum", _shape))
    CASES[f"mean_all_{_name}"] = _gradient_ops(_reduction("reduce_mean", _shape))
    CASES[f"sum_axis_1_{_name}"] = _gradient_ops(_reduction("reduce_sum", _shape, axis=1))
    CASES[f"mean_axis_1_{_name}"] = _gradient_ops(_reduction("reduce_mean", _shape, axis=1))
    CASES[f"max_all_{_name}"] = _gradient_ops(_reduction("reduce_max", _shape))
    CASES[f"min_axis_1_{_name}"] = _gradient_ops(_reduction("reduce_min", _shape, axis=1))
CASES["max_kept_partly_known"] = _gradient_ops(
    _reduction("reduce_max", [None, 3], axis=1, keepdims=True))
CASES["sum_axis_0_known_twice"] = _gradient_ops(
    lambda tf: ([x := _x(tf, [2, 3])], tf.reduce_sum(x, 0) + tf.reduce_sum(x * 2.0, 0)))
CASES["sum_kept_partly_known"] = _gradient_ops(
    _reduction("reduce_sum", [None, 3], axis=1, keepdims=True))
CASES["mean_of_a_vector"] = _gradient_ops(_reduction("reduce_mean", [None]))

for _op_name in ("add", "subtract", "multiply"):
    for _name, _xs, _ys in [("bias_partly_known", [None, 3], [3]),
                            ("bias_known", [2, 3], [3]),
                            ("same_known", [2, 3], [2, 3]),
                            ("same_partly_known", [None, 3], [None, 3]),
                            ("leading_one", [3], [1, 3]),
                            ("unknown", None, None)]:
        CASES[f"{_op_name}_{_name}"] = _gradient_ops(
            _binary(lambda x, y, _op_name=_op_name: getattr(x, f"__{_op_name[:3]}__")(y)
                    if _op_name != "subtract" else x - y, _xs, _ys))

CASES["broadcast_to_known"] = _gradient_ops(
    lambda tf: ([x := _x(tf, [3])], tf.broadcast_to(x, [2, 3])))
CASES["broadcast_to_fed_shape"] = _gradient_ops(
    lambda tf: ([x := _x(tf, [1, 3])], tf.broadcast_to(
        x, tf.placeholder(tf.int32, [2], name="shape"))))
CASES["matmul_tuple"] = _gradient_ops(
    lambda tf: ([x := _x(tf, [2, 3]), w := _x(tf, [3, 4], "w")], tf.matmul(x, w)))
CASES["unused_output_zeros_like"] = _gradient_ops(
    lambda tf: ([x := _x(tf, [2, 3])], tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([0, 2]), logits=x)))


def mlp_training_step(tf):
    """The chapter's dense layers, cross entropy, mean loss and GradientDescentOptimizer,
    on a batch that is a variable (so that its gradient flows on too)."""
    rng = np.random.default_rng(0)
    X = tf.Variable(rng.standard_normal((4, 6)).astype(np.float32), name="X")
    y = tf.placeholder(tf.int64, [None], name="y")
    hidden = X
    for name, units in (("hidden1", 5), ("outputs", 3)):
        with tf.name_scope(name):
            W = tf.Variable(rng.standard_normal((int(hidden.shape[1]), units))
                            .astype(np.float32), name="kernel")
            b = tf.Variable(np.zeros(units, np.float32), name="bias")
            hidden = tf.matmul(hidden, W) + b
            if name != "outputs":
                hidden = tf.nn.relu(hidden)
    xentropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=hidden)
    loss = tf.reduce_mean(xentropy, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {y: [0, 1, 2, 0]})
        sess.run(train, {y: [0, 1, 2, 0]})
        after = sess.run(loss, {y: [0, 1, 2, 0]})
    return before, after, node_defs(tf.get_default_graph())


CASES["mlp_training_step"] = mlp_training_step


def prod_gradient_values(tf):
    """reduce_prod's gradient where entries are zero: the product of the others."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    grads = [tf.gradients(tf.reduce_prod(x, **kwargs), x)[0]
             for kwargs in ({}, {"axis": 1}, {"axis": 0, "keepdims": True})]
    values = np.array([[0.0, 2.0, 3.0], [4.0, 0.0, 0.0], [1.5, -2.0, 0.5],
                       [0.0, 5.0, -1.0]], np.float32)
    with tf.Session() as sess:
        return sess.run(grads, {x: values})


CASES["prod_gradient_values"] = prod_gradient_values


def prod_gradient_graph(tf):
    """reduce_prod's gradient, TensorFlow's: the reduced axes moved to the front and
    flattened, two exclusive cumprods, the shape arithmetic on the CPU. With a dim
    unknown, so that TensorFlow's shape inference, which evaluates the permutation,
    cannot make the permuted shape a constant (dtfnb's does not evaluate it:
    differences.md)."""
    x = tf.placeholder(tf.float32, [None, 3, 2], name="x")
    grads = [tf.gradients(tf.reduce_prod(x, **kwargs), x)[0]
             for kwargs in ({"axis": 1}, {"axis": [0, 2], "keepdims": True})]
    return [g.name for g in grads], [n for n in node_defs(tf.get_default_graph())
                                     if n["name"].startswith("gradients")]


CASES["prod_gradient_graph"] = prod_gradient_graph


def where_v2_broadcasts(tf):
    """tf.where_v2: the condition, then and else broadcast together; its static shapes,
    its errors at build and run, its one-argument form, and its gradient's graph (each
    branch summed back to its own shape) and values."""
    c = tf.placeholder(tf.bool, [None, 1], name="c")
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    z = tf.where_v2(c, x, y)
    grads = tf.gradients(tf.reduce_sum(z * [1.0, 2.0, 3.0]), [x, y])
    unknown = tf.placeholder(tf.float32, name="unknown")
    bad = tf.where_v2([True, False], unknown, [1.0, 2.0, 3.0])
    feed = {c: [[True], [False]], x: [1.0, 2.0, 3.0], y: 5.0}
    with tf.Session() as sess:
        values = sess.run([z, grads, tf.where_v2([[True, False], [False, True]])], feed)
        error = outcome(sess.run, bad, {unknown: [1.0, 2.0]})
    return (values, error, z.shape.as_list(), outcome(tf.where_v2, [True, False], x, 0.0),
            outcome(tf.where_v2, c, x), [n for n in node_defs(tf.get_default_graph())
                                         if n["name"].startswith(("gradients", "SelectV2"))])


CASES["where_v2_broadcasts"] = where_v2_broadcasts


def dense_cross_entropy(tf):
    """softmax_cross_entropy_with_logits(_v2), TensorFlow's graph: the logits and labels
    flattened to matrices for the op (moved to put `axis` last, cast up from float16),
    the loss reshaped back; values, gradients into both, shapes and errors."""
    x = np.array([[1.5, -2.0, 0.0], [3.0, 0.5, -1.0]], np.float32)
    logits = tf.placeholder(tf.float32, [None, 3], name="logits")
    labels = tf.placeholder(tf.float32, [None, 3], name="labels")
    a = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    b = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)
    c = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    d = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0, 0.0]], logits=x)
    e = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.5, 0.5]],
                                                   logits=tf.constant(x[:, :2], tf.float16))
    grads = tf.gradients(a + b, [logits, labels])
    feed = {logits: x, labels: [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]}
    with tf.Session() as sess:
        values = sess.run([a, b, c, d, e, grads], feed)
    return (values, [t.shape.as_list() for t in (a, b, c, d, e)],
            node_defs(tf.get_default_graph()),
            outcome(tf.nn.softmax_cross_entropy_with_logits_v2, labels=[[1.0, 0.0]], logits=x),
            outcome(tf.nn.softmax_cross_entropy_with_logits_v2, labels=1.0, logits=2.0))


CASES["dense_cross_entropy"] = dense_cross_entropy


def sigmoid_cross_entropy(tf):
    """sigmoid_cross_entropy_with_logits as TensorFlow builds it (Selects on x >= 0, not
    a Relu and an Abs): its gradient at a logit of 0, where zero-initialized weights
    start, is sigmoid(0) - label; the cross entropies called with labels and logits by
    position, and their errors for a missing one, a shape and both `dim` and `axis`."""
    x = tf.Variable(np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 30.0]], np.float32), name="x")
    z = np.array([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]], np.float32)
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    by_position = [tf.nn.sigmoid_cross_entropy_with_logits(z, x),
                   tf.nn.softmax_cross_entropy_with_logits(z, x),
                   tf.nn.softmax_cross_entropy_with_logits_v2(z, x),
                   tf.nn.sparse_softmax_cross_entropy_with_logits([0, 2], x)]
    grad = tf.gradients(loss, [x])
    with tf.Session() as sess:
        sess.run(x.initializer)
        values = sess.run([loss, grad, by_position])
    return (values, node_defs(tf.get_default_graph()),
            outcome(tf.nn.sigmoid_cross_entropy_with_logits, labels=z[:1], logits=x),
            outcome(tf.nn.sigmoid_cross_entropy_with_logits, logits=x),
            outcome(tf.nn.softmax_cross_entropy_with_logits, labels=z),
            outcome(tf.nn.sparse_softmax_cross_entropy_with_logits, labels=[0, 1]),
            outcome(tf.nn.softmax_cross_entropy_with_logits, labels=z, logits=x, dim=0,
                    axis=0),
            outcome(tf.nn.softmax_cross_entropy_with_logits_v2, z, x, axis=0, dim=0),
            outcome(tf.nn.sigmoid_cross_entropy_with_logits, labels=[[1, 0, 1]] * 2,
                    logits=x))


CASES["sigmoid_cross_entropy"] = sigmoid_cross_entropy


def unary_gradients(tf):
    """The gradients of one-input ops and their second derivatives, TensorFlow's graphs:
    SqrtGrad, RsqrtGrad and ReciprocalGrad ops (0 wherever the incoming gradient is,
    even at 0), products built under a control dependency on the incoming gradient,
    sign's gradient zeros; their values at 0 included."""
    x = tf.placeholder(tf.float32, [4], name="x")
    grads = []
    for f in (tf.square, tf.sqrt, tf.rsqrt, tf.exp, tf.log, tf.log1p, tf.reciprocal,
              tf.sin, tf.cos, tf.sigmoid, tf.tanh, tf.sign, tf.abs, tf.negative):
        (first,) = tf.gradients(f(x), [x])
        grads += [first, *tf.gradients(first, [x])]
    upstream = tf.placeholder(tf.float32, [4], name="upstream")
    at_zero = [tf.gradients(f(x), [x], grad_ys=upstream)[0]
               for f in (tf.sqrt, tf.rsqrt, tf.reciprocal)]
    with tf.Session() as sess:
        values = sess.run(grads, {x: [0.25, 0.5, 2.0, 3.0]})
        zeros = sess.run(at_zero, {x: [0.0, 0.0, 1.0, 4.0], upstream: [0.0, 1.0, 0.0, 2.0]})
    return values, zeros, node_defs(tf.get_default_graph())


CASES["unary_gradients"] = unary_gradients


def a_fed_placeholder_as_control_input(tf):
    """A control dependency on a Placeholder that is fed waits for its feed and does not
    run it (TensorFlow's feed rewrite); unfed, it fails the run as the Placeholder does."""
    p = tf.placeholder(tf.float32, [], name="p")
    with tf.control_dependencies([p]):
        c = tf.constant(3.0) + 1
    with tf.Session() as sess:
        return sess.run(c, {p: 1.0}), outcome(sess.run, c)


CASES["a_fed_placeholder_as_control_input"] = a_fed_placeholder_as_control_input


def transpose_gradient(tf):
    """transpose's gradient transposes by InvertPermutation of the perm, constant or not,
    as TensorFlow's."""
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    perm = tf.placeholder(tf.int32, [3], name="perm")
    grads = tf.gradients([tf.transpose(x, [2, 0, 1]), tf.transpose(x),
                          tf.transpose(x, perm)], [x])
    with tf.Session() as sess:
        value = sess.run(grads, {x: np.arange(24, dtype=np.float32).reshape(2, 3, 4),
                                 perm: [1, 2, 0]})
    return value, node_defs(tf.get_default_graph())


CASES["transpose_gradient"] = transpose_gradient


def binary_and_reshape_gradients(tf):
    """TensorFlow 2.21's gradients of maximum and minimum (SelectV2s, the zeros made
    first), of squared_difference (scalar_mul of 2 under a control dependency on the
    incoming gradient), and of a reshape whose input lacks one dim (a -1 in a constant
    shape, no Shape op); scalar_mul of a tensor and of an IndexedSlices."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [3], name="y")
    outs = [tf.maximum(x, y), tf.minimum(x, 2.0), tf.squared_difference(x, y),
            tf.reshape(x, [-1]), tf.scalar_mul(3, x)]
    grads = tf.gradients(outs, [x, y])
    params = tf.Variable(np.ones((4, 2), np.float32), name="params")
    rows = tf.gradients(tf.gather(params, [0, 2]), params)[0]
    scaled = tf.scalar_mul(0.5, rows)
    feed = {x: [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], y: [2.0, 2.0, 2.0]}
    with tf.Session() as sess:
        sess.run(params.initializer)
        values = sess.run([outs, grads, scaled.values, scaled.indices], feed)
    return (values, type(scaled).__name__, node_defs(tf.get_default_graph()),
            outcome(tf.scalar_mul, [1.0, 2.0], x))


CASES["binary_and_reshape_gradients"] = binary_and_reshape_gradients
