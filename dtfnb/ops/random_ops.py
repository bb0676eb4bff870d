"""Random ops: random_normal, random_uniform (float and int), truncated_normal,
random_shuffle, multinomial (categorical).

Each builder lays out its graph as TensorFlow 1 does (`random_normal/shape`,
`random_normal/RandomStandardNormal`, `random_normal/mul`, `random_normal`) and
takes its `seed`/`seed2` attrs from `random_seed.get_seed`.
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.random_seed import seed_attrs
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import math_ops
from dtfnb.ops.building import make_tensor, one_input_op, op_scope
from dtfnb.ops.constant_op import constant
from dtfnb.ops.shape_util import constant_value, shape_error, shape_value


def shape_from_tensor(tensor):
    """The static shape a 1-D shape tensor describes (known where it is a constant)."""
    dims = shape_value(tensor)
    if dims is None:
        return unknown_shape()
    return TensorShape([None if d is None or d < 0 else d for d in dims])


def _shape_fn(op):
    return [shape_from_tensor(op.inputs[0])]


for _op in ("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal"):
    define_op(_op, _shape_fn, stateful=True)
    NotDifferentiable(_op)
define_op("RandomShuffle", lambda op: [op.inputs[0].shape], stateful=True)
NotDifferentiable("RandomShuffle")


def _multinomial_shape(op):
    """[the logits' rows, num_samples]."""
    logits, samples = op.inputs[0].shape, op.inputs[1].shape
    for tensor_shape, rank in ((logits, 2), (samples, 0)):
        if tensor_shape.ndims is not None and tensor_shape.ndims != rank:
            raise shape_error(op, f"Shape must be rank {rank} but is rank {tensor_shape.ndims}")
    count = constant_value(op.inputs[1])
    rows = logits[0] if logits.ndims is not None else None
    return [TensorShape([rows, None if count is None else int(count)])]


define_op("Multinomial", _multinomial_shape, stateful=True)
NotDifferentiable("Multinomial")

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def shape_tensor(shape):
    """A 1-D integer tensor for `shape` (a list, tuple, TensorShape or tensor)."""
    if isinstance(shape, Tensor) or hasattr(shape, "_variable"):
        return convert_to_tensor(shape)
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and any(
            isinstance(d, Tensor) or hasattr(d, "_variable") for d in shape):
        return convert_to_tensor(shape, dtype=dtypes.int32, name="shape")  # packs the dims
    dims = [int(d) for d in np.asarray(shape, dtype=np.int64).reshape(-1)]
    dtype = dtypes.int64 if any(abs(d) > 2**31 - 1 for d in dims) else dtypes.int32
    return constant(np.asarray(dims, dtype=dtype.as_numpy_dtype), name="shape")


def _check_float(dtype, what):
    if dtype not in _FLOATS:
        raise ValueError(f"Invalid dtype {dtype!r} for {what}: expected a floating point "
                         "type")


def _normal(op_type, op_name, shape, mean, stddev, dtype, seed, name):
    """mean + stddev * (a standard sample drawn by `op_type`), named like TensorFlow."""
    dtype = dtypes.as_dtype(dtype)
    _check_float(dtype, op_name)
    with op_scope(op_name, name, shape, mean, stddev) as scope:
        shape = shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        attrs = {"dtype": dtype, "T": shape.dtype, **seed_attrs(seed)}
        rnd = make_tensor(op_type, [shape], dtype, attrs=attrs)
        return math_ops.add(rnd * stddev, mean, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev**2)."""
    return _normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed,
                   name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev**2), drawing again any value beyond two stddevs."""
    return _normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed,
                   name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples uniformly from [minval, maxval); integer dtypes need an explicit maxval."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with op_scope("random_uniform", name, shape, minval, maxval) as scope:
        shape = shape_tensor(shape)
        # As TensorFlow: the Python ints 0 and 1 of a float range scale nothing, and
        # make no ops.
        from_zero = isinstance(minval, int) and minval == 0
        to_one = isinstance(maxval, int) and maxval == 1
        if not (from_zero and to_one) or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            attrs = {"Tout": dtype, "T": shape.dtype, **seed_attrs(seed)}
            return make_tensor("RandomUniformInt", [shape, minval, maxval], dtype,
                               name=scope, attrs=attrs)
        attrs = {"dtype": dtype, "T": shape.dtype, **seed_attrs(seed)}
        rnd = make_tensor("RandomUniform", [shape], dtype, attrs=attrs)
        if from_zero:
            return rnd if to_one else math_ops.multiply(rnd, maxval)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def random_shuffle(value, seed=None, name=None):
    """Shuffles `value` along its first dimension."""
    return one_input_op("RandomShuffle", value, name, "value", seed_attrs(seed))


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """Draws `num_samples` classes for each row of `logits` (unnormalized log
    probabilities): [rows, num_samples] of `output_dtype` (int64 unless int32)."""
    with op_scope("multinomial", name, logits):
        return _categorical(logits, num_samples, output_dtype, seed)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`multinomial` under TensorFlow 2's name."""
    with op_scope("categorical", name, logits):
        return _categorical(logits, num_samples, dtype, seed)


def _categorical(logits, num_samples, dtype, seed):
    logits = convert_to_tensor(logits, name="logits")
    dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes "
                         "are (tf.int32, tf.int64).")
    attrs = {"T": logits.dtype.base_dtype, "output_dtype": dtype, **seed_attrs(seed)}
    with op_scope("Multinomial", None, logits, num_samples) as scope:
        num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        return make_tensor("Multinomial", [logits, num_samples], dtype, name=scope,
                           attrs=attrs)
