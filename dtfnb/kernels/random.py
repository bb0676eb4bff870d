"""Random kernels: normal, uniform (float and int), truncated normal, shuffle, multinomial.

They draw as TensorFlow's do (base/philox.py), so a seeded graph gives TensorFlow's
values, on a CPU or a GPU. Each node keeps its generator in `ctx.state`, which lives as
long as the session: repeated runs continue one sequence, a new session starts it
again. A node with seed == seed2 == 0 is seeded from OS entropy.
"""

import math
import threading

import numpy as np

from dtfnb.base import philox
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.kernels.allocation import check_output
from dtfnb.kernels.math import host
from dtfnb.kernels.registry import register_kernel

_CREATE_LOCK = threading.Lock()


def _generator(ctx):
    generator = ctx.state.get("generator")
    if generator is None:
        with _CREATE_LOCK:
            generator = ctx.state.get("generator")
            if generator is None:
                generator = ctx.state["generator"] = philox.Generator(
                    ctx.attrs.get("seed", 0) or 0, ctx.attrs.get("seed2", 0) or 0)
    return generator


def _shape(ctx, value, dtype):
    """The output's shape, once it is known to fit."""
    dims = [int(d) for d in value.tolist()] if getattr(value, "ndim", 0) else None
    if dims is None or any(d < 0 for d in dims):
        raise InvalidArgumentError(None, None, f"shape must be a vector of non-negative "
                                   f"dimensions, got {value}")
    check_output(ctx, dims, dtype)
    return tuple(dims)


def _dtype(ctx, attr="dtype"):
    return np.dtype(ctx.attrs[attr].as_numpy_dtype)


def _draw(ctx, shape, distribution, *args, dtype=None):
    """`distribution`'s numbers in the output's shape, from this run's draws."""
    dtype = dtype or _dtype(ctx)
    dims = _shape(ctx, shape, dtype)
    size = math.prod(dims)
    generator = _generator(ctx)
    counter = generator.reserve_outputs(size)
    return distribution(ctx.xp, generator.key, counter, size, *args, dtype).reshape(dims)


@register_kernel("RandomStandardNormal")
def _random_normal(ctx, step, shape):
    return _draw(ctx, shape, philox.normal)


@register_kernel("RandomUniform")
def _random_uniform(ctx, step, shape):
    return _draw(ctx, shape, philox.uniform)


@register_kernel("TruncatedNormal")
def _truncated_normal(ctx, step, shape):
    return _draw(ctx, shape, philox.truncated_normal)


@register_kernel("RandomUniformInt")
def _random_uniform_int(ctx, step, shape, minval, maxval):
    for name, value in (("minval", minval), ("maxval", maxval)):
        if value.ndim:
            raise InvalidArgumentError(None, None, f"{name} must be 0-D, got shape "
                                       f"{dims_string(value.shape)}")
    low, high = int(minval), int(maxval)
    if not low < high:
        raise InvalidArgumentError(None, None, f"Need minval < maxval, got {low} >= {high}")
    return _draw(ctx, shape, philox.uniform_int, low, high, dtype=_dtype(ctx, "Tout"))


@register_kernel("RandomShuffle")
def _random_shuffle(ctx, step, value):
    if value.size <= 1 or value.shape[0] <= 1:
        return value
    rows = value.shape[0]
    generator = _generator(ctx)
    counter = generator.reserve(philox.shuffle_draws(rows))
    order = philox.permutation(generator.key, counter, rows)
    return value[ctx.xp.asarray(order)]


@register_kernel("Multinomial")
def _multinomial(ctx, step, logits, num_samples):
    if logits.ndim != 2:
        raise InvalidArgumentError(None, None, "logits should be a matrix, got shape "
                                   f"{dims_string(logits.shape)}")
    if num_samples.ndim:
        raise InvalidArgumentError(None, None, "num_samples should be a scalar, got shape "
                                   f"{dims_string(num_samples.shape)}")
    samples = int(num_samples)
    if samples < 0:
        raise InvalidArgumentError(None, None,
                                   f"num_samples should be non-negative, got {samples}")
    rows, classes = logits.shape
    if not classes:
        raise InvalidArgumentError(None, None, "num_classes should be positive, got 0")
    dtype = _dtype(ctx, "output_dtype")
    if rows * samples == 0:
        return ctx.xp.zeros((rows, samples), dtype)
    generator = _generator(ctx)
    counter = generator.reserve_outputs(philox.multinomial_outputs(rows, samples))
    drawn = philox.categorical(host(logits), generator.key, counter, samples)
    return ctx.xp.asarray(drawn.astype(dtype))
