"""Initializers: objects called as `init(shape, dtype=None, partition_info=None)` → Tensor.

TensorFlow 1's classes and their lower-case aliases (`tf.zeros_initializer()`,
`tf.glorot_uniform_initializer()`, …), plus the `tf.initializers.he_normal`
family of variance-scaling presets.
"""

import math

import numpy as np

from dtfnb.base import dtypes
from dtfnb.ops import array_ops, linalg_ops, random_ops, unary_ops
from dtfnb.ops.constant_op import constant


def _assert_float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


class Initializer:
    """Base class: subclasses implement `__call__(shape, dtype=None, partition_info=None)`."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {}

    @classmethod
    def from_config(cls, config):
        """Builds an initializer from the dict `get_config` returned."""
        return cls(**config)


class Zeros(Initializer):
    """Initializer that generates tensors initialized to 0."""
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, dtype or self.dtype)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializer that generates tensors initialized to 1."""
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, dtype or self.dtype)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """A scalar broadcast to the shape, or a value with as many elements as the shape."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value: {type(value).__name__} "
                            "(expected Python scalar, list or tuple of values, or numpy.ndarray).")
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        verify = self._verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=dtype or self.dtype, shape=shape,
                        verify_shape=verify)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Initializer that generates tensors with a uniform distribution in [minval, maxval)."""
    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype or self.dtype,
                                         seed=self.seed)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Initializer that generates tensors with a normal distribution."""
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype or self.dtype,
                                        seed=self.seed)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Initializer that generates a truncated normal distribution: values more than two
    standard deviations from the mean are drawn again.
    """
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype or self.dtype,
                                           seed=self.seed)


def _compute_fans(shape):
    """(fan_in, fan_out) of a weight shape; conv kernels multiply by the receptive field."""
    shape = list(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for dim in shape[:-2]:
        receptive *= dim
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance scale / n, n the fan in, the fan out or their mean.

    "truncated_normal" (also "normal", as TensorFlow 1) divides the stddev by the
    stddev of a standard normal truncated at two, so the variance is as asked.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype or self.dtype
        dims = list(shape.as_list() if hasattr(shape, "as_list") else shape)
        if partition_info is not None:
            dims = list(partition_info.full_shape)
        fan_in, fan_out = _compute_fans(dims)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)) (Xavier)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (Xavier)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    """He's normal initializer: a truncated normal with stddev `sqrt(2 / fan_in)`."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    """He's uniform initializer: uniform in `[-limit, limit]` with `limit = sqrt(6 / fan_in)`."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    """LeCun's normal initializer: a truncated normal with stddev `sqrt(1 / fan_in)`."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    """LeCun's uniform initializer: uniform in `[-limit, limit]` with `limit = sqrt(3 / fan_in)`."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


class Orthogonal(Initializer):
    """An orthogonal matrix times `gain` (for more dimensions, one whose rows are all but
    the last flattened): the Q of a random normal matrix's QR, its columns' signs those
    of R's diagonal, transposed when there are fewer rows than columns."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype or self.dtype
        if len(shape) < 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must "
                             f"be at least two-dimensional. Received shape={shape}")
        rows, cols = int(math.prod(shape[:-1])), int(shape[-1])
        flat = (cols, rows) if rows < cols else (rows, cols)
        q, r = linalg_ops.qr(random_ops.random_normal(flat, dtype=dtype, seed=self.seed))
        q *= unary_ops.sign(linalg_ops.diag_part(r))
        if rows < cols:
            q = linalg_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, shape)

    def get_config(self):
        """The initializer's arguments as a JSON-serializable dict."""
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


# TensorFlow 1's lower-case names are the classes themselves.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
