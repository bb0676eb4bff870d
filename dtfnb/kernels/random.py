"""Random kernels: normal, uniform (float and int), truncated normal, shuffle.

Each node keeps its generator in `ctx.state`, which lives as long as the session:
repeated runs continue one sequence, a new session starts it again. A node with
seed == seed2 == 0 draws from fresh OS entropy; otherwise it is seeded from both,
so a seeded graph gives the same values in every session. CuPy devices draw on
the GPU with CuPy's generator (its stream differs from numpy's).
"""

import threading

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.allocation import check_output
from dtfnb.kernels.registry import register_kernel

_CREATE_LOCK = threading.Lock()


class _Rng:
    """One node's generator; the lock keeps concurrent steps from sharing draws."""

    def __init__(self, xp, seed, seed2):
        self.xp = xp
        self.lock = threading.Lock()
        entropy = [seed, seed2] if seed or seed2 else None
        sequence = np.random.SeedSequence(entropy)
        if xp.__name__ == "numpy":
            self.gen = np.random.Generator(np.random.PCG64(sequence))
        else:
            self.gen = xp.random.RandomState(int(sequence.generate_state(1, np.uint32)[0]))

    def _float_type(self, dtype):
        # Both generators draw only float32/float64; half types are drawn as float32.
        return dtype if np.dtype(dtype) in (np.float32, np.float64) else np.float32

    def normal(self, shape, dtype):
        with self.lock:
            out = self.gen.standard_normal(shape, dtype=self._float_type(dtype))
        return out.astype(dtype, copy=False)

    def uniform(self, shape, dtype):
        with self.lock:
            if self.xp.__name__ == "numpy":
                out = self.gen.random(shape, dtype=self._float_type(dtype))
            else:
                out = self.gen.random_sample(shape, dtype=self._float_type(dtype))
        return out.astype(dtype, copy=False)

    def integers(self, low, high, shape, dtype):
        with self.lock:
            if self.xp.__name__ == "numpy":
                return self.gen.integers(low, high, size=shape, dtype=dtype)
            return self.gen.randint(low, high, size=shape, dtype=dtype)

    def permutation(self, n):
        with self.lock:
            return self.gen.permutation(n)


def _rng(ctx):
    rng = ctx.state.get("rng")
    if rng is None:
        with _CREATE_LOCK:
            rng = ctx.state.get("rng")
            if rng is None:
                rng = ctx.state["rng"] = _Rng(ctx.xp, ctx.attrs.get("seed", 0) or 0,
                                              ctx.attrs.get("seed2", 0) or 0)
    return rng


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


@register_kernel("RandomStandardNormal")
def _random_normal(ctx, step, shape):
    dtype = _dtype(ctx)
    return _rng(ctx).normal(_shape(ctx, shape, dtype), dtype)


@register_kernel("RandomUniform")
def _random_uniform(ctx, step, shape):
    dtype = _dtype(ctx)
    return _rng(ctx).uniform(_shape(ctx, shape, dtype), dtype)


@register_kernel("RandomUniformInt")
def _random_uniform_int(ctx, step, shape, minval, maxval):
    low, high = int(minval), int(maxval)
    if not low < high:
        raise InvalidArgumentError(None, None, f"Need minval < maxval: {low} >= {high}")
    dtype = _dtype(ctx, "Tout")
    return _rng(ctx).integers(low, high, _shape(ctx, shape, dtype), dtype)


@register_kernel("TruncatedNormal")
def _truncated_normal(ctx, step, shape):
    rng = _rng(ctx)
    dtype = _dtype(ctx)
    out = rng.normal(_shape(ctx, shape, dtype), np.float32 if dtype.itemsize < 4 else dtype)
    # Values more than two standard deviations out are drawn again, as TensorFlow does.
    bad = abs(out) > 2
    while bool(bad.any()):
        out[bad] = rng.normal((int(bad.sum()),), out.dtype)
        bad = abs(out) > 2
    return out.astype(dtype, copy=False)


@register_kernel("RandomShuffle")
def _random_shuffle(ctx, step, value):
    if value.ndim == 0 or value.shape[0] <= 1:
        return value
    return value[_rng(ctx).permutation(value.shape[0])]
