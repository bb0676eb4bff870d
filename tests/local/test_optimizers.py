"""tf.train optimizers: updates against numpy re-implementations, slots, global step, training."""

import numpy as np
import pytest

import dtfnb as tf

TARGET = np.array([1.0, -2.0, 3.0])
SCALE = np.array([0.5, 2.0, 1.0])
START = np.array([0.3, 0.1, -0.4])


def f32(x):
    """A hyperparameter as TensorFlow holds it: a float32 constant, cast to the variable's type."""
    return float(np.float32(x))


def _run_steps(optimizer, steps=4, dtype=tf.float64, config=None):
    """Minimises 0.5 * sum(SCALE * (w - TARGET)^2); returns w after each step."""
    w = tf.Variable(START, dtype=dtype, name="w")
    loss = 0.5 * tf.reduce_sum(SCALE * tf.square(w - TARGET))
    train = optimizer.minimize(loss)
    values = []
    with tf.Session(config=tf.ConfigProto(**(config or {}))) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
            values.append(sess.run(w))
    return w, values


def _grad(w):
    return SCALE * (w - TARGET)


def _reference(update, steps=4):
    w, state, out = START.copy(), {}, []
    for t in range(1, steps + 1):
        w = update(w, _grad(w), state, t)
        out.append(w.copy())
    return out


def _assert_steps(got, expected):
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_gradient_descent_matches_numpy():
    lr = f32(0.1)
    _, got = _run_steps(tf.train.GradientDescentOptimizer(0.1))
    _assert_steps(got, _reference(lambda w, g, s, t: w - lr * g))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_numpy(nesterov):
    lr, mu = f32(0.05), f32(0.9)

    def update(w, g, s, t):
        a = s["a"] = s.get("a", 0.0) * mu + g
        return w - (g * lr + a * mu * lr if nesterov else lr * a)

    _, got = _run_steps(tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov))
    _assert_steps(got, _reference(update))


def test_adam_matches_numpy():
    lr, b1, b2, eps = f32(0.01), f32(0.9), f32(0.999), f32(1e-8)

    def update(w, g, s, t):
        # beta powers live in float32 variables multiplied by float32 betas
        s["p1"] = np.float32(np.float32(s.get("p1", np.float32(b1))) *
                             (np.float32(b1) if t > 1 else 1))
        s["p2"] = np.float32(np.float32(s.get("p2", np.float32(b2))) *
                             (np.float32(b2) if t > 1 else 1))
        p1, p2 = float(s["p1"]), float(s["p2"])
        m = s["m"] = s.get("m", 0.0) + (g - s.get("m", 0.0)) * (1 - b1)
        v = s["v"] = s.get("v", 0.0) + (g * g - s.get("v", 0.0)) * (1 - b2)
        alpha = lr * np.sqrt(1 - p2) / (1 - p1)
        return w - alpha * m / (np.sqrt(v) + eps)

    _, got = _run_steps(tf.train.AdamOptimizer(0.01))
    _assert_steps(got, _reference(update))


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_matches_numpy(centered):
    lr, rho, mu, eps = f32(0.01), f32(0.9), f32(0.5), f32(1e-10)

    def update(w, g, s, t):
        ms = s["ms"] = s.get("ms", 1.0) + (g * g - s.get("ms", 1.0)) * (1 - rho)
        denom = ms + eps
        if centered:
            mg = s["mg"] = s.get("mg", 0.0) + (g - s.get("mg", 0.0)) * (1 - rho)
            denom = ms - mg * mg + eps
        mom = s["mom"] = s.get("mom", 0.0) * mu + lr * g / np.sqrt(denom)
        return w - mom

    _, got = _run_steps(tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=centered))
    _assert_steps(got, _reference(update))


def test_adagrad_matches_numpy():
    lr, init = f32(0.2), 0.1

    def update(w, g, s, t):
        acc = s["acc"] = s.get("acc", init) + g * g
        return w - lr * g / np.sqrt(acc)

    _, got = _run_steps(tf.train.AdagradOptimizer(0.2))
    _assert_steps(got, _reference(update))
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_float32_variables_and_tensor_or_callable_learning_rates():
    rate = tf.placeholder(tf.float32, [])
    w = tf.Variable(START.astype(np.float32), name="w")
    loss = 0.5 * tf.reduce_sum(SCALE.astype(np.float32) * tf.square(w - TARGET.astype(
        np.float32)))
    by_tensor = tf.train.GradientDescentOptimizer(rate).minimize(loss)
    by_callable = tf.train.GradientDescentOptimizer(lambda: tf.constant(0.5)).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(by_tensor, {rate: 0.0})
        np.testing.assert_allclose(sess.run(w), START, rtol=1e-6)
        sess.run(by_callable)
        np.testing.assert_allclose(sess.run(w), START - 0.5 * _grad(START), rtol=1e-6)


# -- slots, names, placement -------------------------------------------------------------

def test_slot_names_like_tensorflow():
    w = tf.Variable(np.zeros(2, np.float32), name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_sum(w * w) + b * b
    opts = {
        "Momentum": tf.train.MomentumOptimizer(0.1, 0.9),
        "Adam": tf.train.AdamOptimizer(),
        "RMSProp": tf.train.RMSPropOptimizer(0.1, centered=True),
        "Adagrad": tf.train.AdagradOptimizer(0.1),
    }
    for opt in opts.values():
        opt.minimize(loss)
    names = [v.op.name for v in tf.global_variables()]
    assert names == [
        "w", "b", "w/Momentum", "b/Momentum", "beta1_power", "beta2_power", "w/Adam",
        "w/Adam_1", "b/Adam", "b/Adam_1", "w/RMSProp", "w/RMSProp_1", "w/RMSProp_2",
        "b/RMSProp", "b/RMSProp_1", "b/RMSProp_2", "w/Adagrad", "b/Adagrad"]
    assert tf.trainable_variables() == [w, b]
    adam = opts["Adam"]
    assert adam.get_slot_names() == ["m", "v"]
    assert adam.get_slot(w, "m").op.name == "w/Adam"
    assert adam.get_slot(w, "v").shape.as_list() == [2]
    assert adam.get_slot(w, "nope") is None
    assert [v.op.name for v in adam.variables()] == [
        "b/Adam", "b/Adam_1", "beta1_power", "beta2_power", "w/Adam", "w/Adam_1"]
    rms = opts["RMSProp"]
    assert rms.get_slot(w, "rms").op.name == "w/RMSProp"
    assert rms.get_slot(w, "mg").op.name == "w/RMSProp_1"
    assert rms.get_slot(w, "momentum").op.name == "w/RMSProp_2"
    # beta1_power sits with the first variable by name ("b")
    assert adam._get_beta_accumulators()[0].op.get_attr("_class") == [b"loc:@b"]


def test_slots_and_updates_are_colocated_with_their_variable():
    with tf.device("/cpu:0"):
        w = tf.Variable([1.0, 2.0], name="w")
    loss = tf.reduce_sum(w * w)
    with tf.device("/job:elsewhere"):
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    slot = tf.get_default_graph().get_operation_by_name("w/Momentum")
    assert slot.device == w.device == "/device:CPU:0"
    assert slot.get_attr("_class") == [b"loc:@w"]
    apply = tf.get_default_graph().get_operation_by_name("Momentum/update_w/ApplyMomentum")
    assert apply.type == "ApplyMomentum" and apply.device == w.device
    assert train.name == "Momentum" and train.type == "NoOp"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)


def test_minimize_increments_the_global_step_colocated_with_it():
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step
    assert step.op.name == "global_step" and step.dtype.base_dtype == tf.int64
    assert step.shape.as_list() == []
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert step in tf.global_variables() and step not in tf.trainable_variables()
    with pytest.raises(ValueError, match='"global_step" already exists.'):
        tf.train.create_global_step()
    w = tf.Variable(5.0, name="w")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=step)
    assert train.type == "AssignAdd" and train.name == "GradientDescent"
    assert train.get_attr("_class") == [b"loc:@global_step"]
    # the increment runs after the updates (through its constant, by TensorFlow's rule),
    # and after dtfnb's staleness record, which waits on the updates themselves
    deps = train.control_inputs + [c for t in train.inputs for c in t.op.control_inputs]
    assert [op.name for op in deps] == ["GradientDescent/record_staleness"]
    assert [op.name for op in deps[0].control_inputs] == [
        "GradientDescent/update_w/ApplyGradientDescent"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert tf.train.global_step(sess, step) == 3
        assert sess.run(w) == pytest.approx(5.0 * 0.8 ** 3)


def test_none_gradients_are_skipped_and_all_none_is_an_error():
    w = tf.Variable(1.0, name="w")
    unused = tf.Variable(2.0, name="unused")
    loss = tf.square(w)
    opt = tf.train.GradientDescentOptimizer(0.5)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w, unused]
    assert grads_and_vars[1][0] is None
    train = opt.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([w, unused]) == [0.0, 2.0]
    with pytest.raises(ValueError, match=r"No gradients provided for any variable: "
                                         r"\[\"<tf.Variable 'unused:0'"):
        opt.apply_gradients([(None, unused)])
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your "
                                         "graph for ops that do not support gradients"):
        opt.minimize(tf.constant(1.0) * 2.0, var_list=[unused])
    with pytest.raises(ValueError, match="No variables provided."):
        opt.apply_gradients([])


def test_compute_gradients_checks_dtypes_and_var_list():
    n = tf.Variable(3, name="n")
    with pytest.raises(ValueError, match=r"Invalid type tf.int32 for"):
        tf.train.GradientDescentOptimizer(0.1).compute_gradients(tf.cast(n, tf.int32))
    with pytest.raises(ValueError, match="No variables to optimize."):
        tf.train.GradientDescentOptimizer(0.1).compute_gradients(tf.constant(1.0), var_list=[])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        tf.train.GradientDescentOptimizer(0.1).compute_gradients(tf.constant(1.0),
                                                                 gate_gradients=5)


def test_update_of_uninitialized_variable_fails_like_tensorflow():
    w = tf.Variable(1.0, name="w")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value w"):
            sess.run(train)


# -- training that converges ------------------------------------------------------------

def _blobs(n=300, classes=3, dims=4, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, dims)) * 3
    labels = rng.integers(0, classes, n)
    return (centers[labels] + rng.standard_normal((n, dims))).astype(np.float32), labels


@pytest.mark.parametrize("optimizer", [tf.train.GradientDescentOptimizer(0.5),
                                       tf.train.AdamOptimizer(0.05)])
def test_softmax_regression_converges(optimizer):
    data, labels = _blobs()
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.int64, [None])
    w = tf.Variable(tf.zeros([4, 3]))
    b = tf.Variable(tf.zeros([3]))
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32))
    step = tf.train.get_or_create_global_step()
    train = optimizer.minimize(loss, global_step=step)
    feed = {x: data, y: labels}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(100):
            sess.run(train, feed)
        last, acc, steps = sess.run([loss, accuracy, step], feed)
    assert first == pytest.approx(np.log(3), rel=1e-5)
    assert last < 0.2 * first and acc > 0.9 and steps == 100


def test_mlp_with_dense_layers_converges_with_adam():
    rng = np.random.default_rng(1)
    data = rng.uniform(-1, 1, (256, 2)).astype(np.float32)
    labels = (data[:, 0] * data[:, 1] > 0).astype(np.int32)  # XOR of the signs: not linear
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int32, [None])
    hidden = tf.layers.dense(x, 32, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, 2)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.one_hot(y, 2), logits=logits))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    feed = {x: data, y: labels}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(300):
            sess.run(train, feed)
        last, out = sess.run([loss, logits], feed)
    assert last < 0.3 * first
    assert (out.argmax(axis=1) == labels).mean() > 0.9


# -- the same kernels on a real GPU (CuPy) -------------------------------------------------

def _cuda_device_count():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no CuPy, no driver or no device
        return 0


_REAL_GPU = pytest.mark.skipif(_cuda_device_count() == 0, reason="needs CuPy and a CUDA device")
# Emulated GPUs run numpy under GPU placement rules; a real one runs the kernels on CuPy.
GPU_CONFIGS = [pytest.param({"emulated_gpus": 1}, id="emulated"),
               pytest.param({}, id="cuda", marks=[pytest.mark.gpu, _REAL_GPU])]


@pytest.mark.parametrize("config", GPU_CONFIGS)
def test_nn_random_and_optimizer_kernels_on_a_gpu(config):
    data, labels = _blobs()
    with tf.device("/gpu:0"):
        x = tf.constant(data)
        y = tf.constant(labels)
        hidden = tf.layers.dense(tf.nn.dropout(x, 0.9, seed=1), 16, activation=tf.nn.elu)
        logits = tf.layers.dense(hidden, 3)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32))
        noise = [tf.random_normal([5], seed=2), tf.truncated_normal([5], seed=3),
                 tf.random_uniform([5], 0, 10, dtype=tf.int32, seed=4),
                 tf.random_shuffle(tf.range(5), seed=5)]
        opts = [tf.train.AdamOptimizer(0.01), tf.train.MomentumOptimizer(0.05, 0.9, True),
                tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
                tf.train.AdagradOptimizer(0.1)]
        trains = [opt.minimize(loss) for opt in opts]
    draws = []
    for _ in range(2):
        with tf.Session(config=tf.ConfigProto(**config)) as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(50):
                sess.run(trains)
            last, acc = sess.run([loss, accuracy])
            draws.append(sess.run(noise))
    assert last < 0.5 * first and acc > 0.8
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)
    assert sorted(draws[0][3].tolist()) == [0, 1, 2, 3, 4]
    assert np.abs(draws[0][1]).max() <= 2.0


def _adagrad_update(w, g, s, t):
    s["acc"] = s.get("acc", 0.1) + g * g
    return w - f32(0.2) * g / np.sqrt(s["acc"])


@pytest.mark.parametrize("config", GPU_CONFIGS)
@pytest.mark.parametrize("make, update", [
    (lambda: tf.train.GradientDescentOptimizer(0.1), lambda w, g, s, t: w - f32(0.1) * g),
    (lambda: tf.train.AdagradOptimizer(0.2), _adagrad_update),
])
def test_updates_on_a_gpu_match_numpy(config, make, update):
    with tf.device("/gpu:0"):
        _, got = _run_steps(make(), config=config)
    _assert_steps(got, _reference(update))
