"""Object arrays: how tf.string tensors hold bytes and variant tensors hold values."""

import numpy as np


def object_vector(values):
    """A 1-d object array of `values` (bytes, or objects numpy does not look inside):
    np.array would make a 2-d array of equal-length sequences."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def object_scalar(value):
    """A 0-d object array holding `value`: a tf.string scalar (bytes) or a variant one."""
    array = np.empty((), dtype=object)
    array[()] = value
    return array
