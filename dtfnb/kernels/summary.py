"""Summary kernels: each serializes a `Summary` protobuf, on CPU as in TensorFlow."""

import sys

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos.summary_pb2 import HistogramProto, Summary


def _dims(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def _serialized(values):
    return np.array(Summary(value=values).SerializeToString(), dtype=object)


def _invalid(message):
    return InvalidArgumentError(None, None, message)


@register_kernel("ScalarSummary", device="CPU")
def _scalar_summary(ctx, step, tags, values):
    tags, values = np.asarray(tags, dtype=object), np.asarray(values)
    if tags.shape != values.shape:
        single = f" (tag '{tags.reshape(-1)[0].decode()}')" if tags.size == 1 else ""
        raise _invalid(f"tags and values are not the same shape: {_dims(tags.shape)} != "
                       f"{_dims(values.shape)}{single}")
    return _serialized([Summary.Value(tag=tag.decode(), simple_value=float(value))
                        for tag, value in zip(tags.reshape(-1), values.reshape(-1))])


# -- histograms ---------------------------------------------------------------------------


def _default_bucket_limits():
    """TensorFlow's bucket edges: from 1e-12 growing by 10% up to 1e20, then DBL_MAX, both
    signs, and 0. A value falls in the first bucket whose edge is above it."""
    edges, edge = [], 1.0e-12
    while edge < 1.0e20:
        edges.append(edge)
        edge *= 1.1
    edges.append(sys.float_info.max)
    return np.array([-e for e in reversed(edges)] + [0.0] + edges)


_BUCKET_LIMITS = _default_bucket_limits()


def _histogram(values):
    """The HistogramProto of TensorFlow's default histogram of `values` (finite): each run
    of empty buckets is one bucket with the run's last edge. Sums add the values in order,
    as TensorFlow does, so that they are equal to its to the bit."""
    values = np.asarray(values, np.float64).reshape(-1)
    if not values.size:
        return HistogramProto(min=sys.float_info.max, max=-sys.float_info.max,
                              bucket_limit=[sys.float_info.max], bucket=[0.0])
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, values, side="right"),
                         minlength=len(_BUCKET_LIMITS)).astype(np.float64)
    empty = counts == 0
    kept = ~empty | np.append(~empty[1:], True)  # a non-empty bucket, or a run's end
    return HistogramProto(  # the first of equal extremes, as TensorFlow's (0.0 or -0.0)
        min=values[np.argmin(values)], max=values[np.argmax(values)], num=values.size,
        sum=np.cumsum(values)[-1], sum_squares=np.cumsum(values * values)[-1],
        bucket_limit=_BUCKET_LIMITS[kept], bucket=counts[kept])


@register_kernel("HistogramSummary", device="CPU")
def _histogram_summary(ctx, step, tag, values):
    values = np.asarray(values, np.float64).reshape(-1)
    nonfinite = values[~np.isfinite(values)]
    if nonfinite.size:
        raise _invalid(f"Nan in summary histogram for: {ctx.name}" if np.isnan(nonfinite[0])
                       else f"Infinity in Histogram for: {ctx.name}")
    return _serialized([Summary.Value(tag=tag.item().decode(), histo=_histogram(values))])
