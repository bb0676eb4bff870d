"""One helper for op tests: forward values against numpy, gradients against finite differences.

Modelled on JAX's `check_grads`: rather than building a whole Jacobian, it compares
u . J . v for a few random directions v (inputs) and cotangents u (outputs), where
J . v comes from central differences of the forward graph in float64 and u . J from
`tf.gradients(..., grad_ys=u)`. Two forward runs per direction check every
gradient entry at once with overwhelming probability.
"""

import numpy as np

import dtfnb as tf


def check_op(build_fn, inputs, reference=None, *, grad=True, wrt=None, dynamic=False,
             shapes=None, rtol=1e-6, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-6, eps=1e-6,
             directions=3, seed=0, expect_dtype=None):
    """Builds `build_fn(*tensors)` over placeholders fed with `inputs`, and checks it.

    Args:
      build_fn: takes one Tensor per input, returns a Tensor.
      inputs: numpy arrays (floats should be float64 so finite differences are exact
        enough); each becomes a placeholder.
      reference: numpy function of the same inputs; the forward value must match it.
      grad: whether to check gradients (w.r.t. the float inputs, or those in `wrt`).
      wrt: indices of the inputs to differentiate with respect to.
      dynamic: give the placeholders unknown dimensions, so shape-dependent code
        (broadcast gradients, reductions) takes its dynamic path.
      shapes: the placeholders' static shapes, where they should be partly known.
      expect_dtype: the dtype the output must have.

    Returns:
      The forward value, as fetched.
    """
    inputs = [np.asarray(x) for x in inputs]
    graph = tf.Graph()
    with graph.as_default():
        if shapes is None:
            shapes = [[None] * x.ndim if dynamic else x.shape for x in inputs]
        placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape, name=f"input_{i}")
                        for i, (x, shape) in enumerate(zip(inputs, shapes))]
        out = build_fn(*placeholders)
        feed = dict(zip(placeholders, inputs))
        if wrt is None:
            wrt = [i for i, x in enumerate(inputs) if x.dtype.kind in "fc"] if grad else []
        xs = [placeholders[i] for i in wrt]
        cotangent = tf.placeholder(out.dtype, name="cotangent")
        grads = tf.gradients(out, xs, grad_ys=cotangent) if wrt else []
        # A sparse gradient (tf.gather's) is checked as the dense tensor it stands for.
        grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]

    with tf.Session(graph=graph) as sess:
        value = sess.run(out, feed)
        if expect_dtype is not None:
            assert out.dtype == expect_dtype, f"{out.dtype} != {expect_dtype}"
        assert out.shape.is_compatible_with(np.shape(value)), (
            f"static shape {out.shape} does not describe the value's shape {np.shape(value)}")
        if reference is not None:
            expected = reference(*inputs)
            np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol)
            assert np.shape(value) == np.shape(expected), (np.shape(value), np.shape(expected))
        if not wrt:
            return value
        for i, g in zip(wrt, grads):
            assert g is not None, f"no gradient for input {i}"
            assert g.shape.is_compatible_with(inputs[i].shape), (g.shape, inputs[i].shape)
        rng = np.random.default_rng(seed)
        for _ in range(directions):
            u = rng.standard_normal(np.shape(value)).astype(np.asarray(value).dtype)
            vs = [rng.standard_normal(inputs[i].shape).astype(inputs[i].dtype) for i in wrt]
            analytic = sess.run(grads, {**feed, cotangent: u})
            for i, g in zip(wrt, analytic):
                assert np.shape(g) == inputs[i].shape, (i, np.shape(g), inputs[i].shape)
            backward = sum(float(np.sum(g * v)) for g, v in zip(analytic, vs))
            forward = _directional(sess, out, feed, placeholders, wrt, vs, eps)
            numeric = float(np.sum(forward * u))
            assert np.isclose(backward, numeric, rtol=grad_rtol, atol=grad_atol), (
                f"gradient mismatch: tf.gradients gives {backward}, finite differences "
                f"{numeric}")
    return value


def _directional(sess, out, feed, placeholders, wrt, vs, eps):
    """(f(x + eps v) - f(x - eps v)) / (2 eps): the Jacobian times v."""
    def run(sign):
        moved = dict(feed)
        for i, v in zip(wrt, vs):
            moved[placeholders[i]] = feed[placeholders[i]] + sign * eps * v
        return np.asarray(sess.run(out, moved), dtype=np.float64)

    return (run(1) - run(-1)) / (2 * eps)
