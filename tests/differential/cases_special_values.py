"""Values where the arithmetic is at its edges: NaN and infinities, integers divided as
floats. (Denormal floats are left out: TensorFlow's CPU kernels flush them to zero,
numpy's do not; differences.md says so.)"""

import numpy as np
from observe import outcome, run

CASES = {}

NAN, INF, BIG = np.nan, np.inf, np.finfo(np.float32).max


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def arg_max_and_min_of_nan_and_infinities(tf):
    """ArgMax and ArgMin as TensorFlow's: a NaN never wins, nor -inf (ArgMax) or inf
    (ArgMin), and with nothing else index 0 does; ties go to the first."""
    rows = [[NAN, 1, 2], [1, NAN, 0], [NAN, NAN], [3, NAN, 2], [-INF, NAN], [NAN, -INF],
            [-INF, -BIG], [INF, BIG], [BIG, INF], [5, NAN] + [1] * 40]
    built = []
    for row in rows:
        x = np.array(row, np.float32)
        built += [tf.argmax(x, 0), tf.argmin(x, 0)]
    m = np.array([[NAN, 1, 2], [3, NAN, -INF], [NAN, NAN, NAN]])
    built += [tf.argmax(m, 1), tf.argmin(m, 1), tf.argmax(m, 0),
              tf.argmin(m, 0, output_type=tf.int32)]
    return run(tf, built)


@case
def true_divisions_of_integers(tf):
    """truediv and div_no_nan divide integers as floats (float32 up to 16 bits, float64
    above) and refuse other dtypes, as TensorFlow's _TRUEDIV_TABLE says."""
    built = []
    for dtype in (tf.int8, tf.uint8, tf.int16, tf.int32, tf.uint32, tf.int64):
        x, y = tf.constant([7, 0, 5], dtype), tf.constant([2, 0, 0], dtype)
        built += [tf.truediv(x, y), tf.div_no_nan(x, y)]
    built.append(tf.div_no_nan(tf.constant([1.0, -2.0], tf.float16), [0.0, 4.0]))
    flags = tf.constant([True, False])
    return (run(tf, built), [t.dtype.name for t in built],
            outcome(tf.truediv, flags, flags), outcome(tf.div_no_nan, flags, flags),
            outcome(tf.div_no_nan, tf.constant([1]), tf.constant([1.0])))
