"""tf.cumsum and tf.cumprod against numpy, every axis of a 3-D array, exclusive and
reversed; tf.setdiff1d's values and indices (the differential tier compares both with
TensorFlow)."""

import numpy as np
import pytest

import dtfnb as tf


def _expected(accumulate, identity, x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = accumulate(x, axis=axis)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("scan, accumulate, identity",
                         [("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)])
def test_scans_match_numpy_along_every_axis(scan, accumulate, identity):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4, 5))
    with tf.Session() as sess:
        for axis in range(-3, 3):
            for exclusive in (False, True):
                for reverse in (False, True):
                    got = sess.run(getattr(tf, scan)(x, axis, exclusive, reverse))
                    want = _expected(accumulate, identity, x, axis % 3, exclusive, reverse)
                    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_setdiff1d_keeps_order_and_duplicates_of_what_is_left():
    with tf.Session() as sess:
        out, idx = sess.run(tf.setdiff1d([5, 1, 5, 2, 3, 1], [1, 7]))
    assert out.tolist() == [5, 5, 2, 3] and idx.tolist() == [0, 2, 3, 4]
