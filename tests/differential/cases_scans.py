"""Scans and set differences: tf.cumsum and tf.cumprod (exclusive, reversed, along any
axis; their graphs, values, gradients and errors) and tf.setdiff1d (TensorFlow 1's
ListDiff)."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


_VALUES = np.array([[1.5, -2.0, 0.0, 4.0], [3.0, 0.5, -1.0, 2.0], [2.0, 2.0, 2.0, 2.0]],
                   np.float32)


def _scan_values(scan):
    def run_case(tf):
        x = tf.constant(_VALUES, name="x")
        outs = [getattr(tf, scan)(x, axis, exclusive=exclusive, reverse=reverse)
                for axis in (0, 1, -1) for exclusive in (False, True)
                for reverse in (False, True)]
        return run(tf, outs)
    return run_case


for _scan in ("cumsum", "cumprod"):
    CASES[f"{_scan}_values"] = _scan_values(_scan)


@case
def scan_graphs(tf):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    a = tf.cumsum(x)
    b = tf.cumprod(x, axis=1, exclusive=True, reverse=True, name="products")
    c = tf.cumsum([1, 2, 3], axis=tf.constant(0, tf.int64))
    return [(t.name, t.shape.as_list()) for t in (a, b, c)], node_defs(
        tf.get_default_graph(), skip=("x",))


@case
def scan_dtypes_and_empty(tf):
    return run(tf, [tf.cumsum(tf.constant([2**30, 2**30, 5], tf.int32)),
                    tf.cumprod(tf.constant([3, 4, 5], tf.int64), exclusive=True),
                    tf.cumsum(tf.constant([0.5, 0.25], tf.float64), reverse=True),
                    tf.cumsum(tf.zeros([0, 3]), axis=0, exclusive=True),
                    tf.cumprod(tf.ones([2, 0]), axis=1, reverse=True)])


@case
def scan_errors(tf):
    x = tf.placeholder(tf.float32, name="x")
    axis = tf.placeholder(tf.int32, name="axis")
    scanned = tf.cumsum(x, axis)
    return [outcome(run, tf, scanned, {x: np.ones((2, 3)), axis: a}) for a in (1, -2, 2, -3)] \
        + [outcome(run, tf, scanned, {x: np.ones((2, 3)), axis: [0]}),
           outcome(run, tf, scanned, {x: 5.0, axis: 0})]


def _scan_gradient(scan, **kwargs):
    def run_case(tf):
        x = tf.constant(_VALUES, name="x")
        y = getattr(tf, scan)(x, 1, **kwargs)
        grad, = tf.gradients(y * np.arange(1.0, 5.0, dtype=np.float32), [x])
        return run(tf, grad)
    return run_case


for _scan in ("cumsum", "cumprod"):
    for _kwargs in ({}, {"exclusive": True}, {"reverse": True},
                    {"exclusive": True, "reverse": True}):
        _suffix = "_".join(sorted(_kwargs)) or "plain"
        CASES[f"{_scan}_gradient_{_suffix}"] = _scan_gradient(_scan, **_kwargs)


@case
def setdiff1d_values(tf):
    out = [tf.setdiff1d([1, 2, 3, 4, 5, 2], [2, 4]),
           tf.setdiff1d(tf.constant([1.5, 2.5]), [1.5], index_dtype=tf.int64),
           tf.setdiff1d(tf.constant(["a", "b", "c"]), ["c", "z"]),
           tf.setdiff1d(tf.constant([], tf.int32), [1]),
           tf.setdiff1d([7, 8], tf.constant([], tf.int32))]
    return [(type(r).__name__, r.out.name, r.idx.dtype) for r in out], run(tf, out)


@case
def setdiff1d_errors(tf):
    x = tf.placeholder(tf.int32, name="x")
    out = tf.setdiff1d(x, [1])
    return [outcome(tf.setdiff1d, [[1, 2]], [1]), outcome(tf.setdiff1d, [1], [[1]]),
            outcome(run, tf, out.out, {x: [[1, 2]]}), out.out.shape.as_list()]
