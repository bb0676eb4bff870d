"""Partitioners: how many parts get_variable splits a variable into, along which axis.

A partitioner is called as `partitioner(shape=TensorShape, dtype=DType)` and returns
one count per dimension, at most one of them above 1 (TensorFlow 1's contract). The
parts then go where the device function puts each Variable op: with
replica_device_setter, to the ps tasks in turn.
"""

import math

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape


def _element_size(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype is dtypes.string else dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner that splits `axis` into `num_shards` parts (fewer if it is shorter)."""
    def partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis].value)
        return partitions
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner that splits `axis` into parts of at most `max_shard_bytes` each
    (one slice of the axis per part when a slice alone is larger), at most `max_shards`
    parts. Strings count `bytes_per_string_element` bytes an element."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. "
            f"Currently, max_shard_bytes is {max_shard_bytes} and"
            f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        bytes_per_slice = (shape.num_elements() / shape.dims[axis].value
                           * _element_size(dtype, bytes_per_string_element))
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(shape.dims[axis].value / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * shape.ndims
        partitions[axis] = shards
        return partitions
    return partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner that splits `axis` into parts of at least `min_slice_size` bytes,
    at most `max_partitions` of them."""
    def partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is "
                             f"only {shape}")
        total_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.dims[axis].value, max_partitions,
                                      int(math.ceil(total_bytes / min_slice_size))))
        return partitions
    return partitioner
