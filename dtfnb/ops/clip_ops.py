"""Clipping: by value, by norm, and of a list of tensors by their global norm."""

import collections.abc

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.ops import array_ops, joining_ops, math_ops, unary_ops
from dtfnb.ops.building import graph_of


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Elementwise min(max(t, clip_value_min), clip_value_max); bounds that would broadcast
    `t` to another shape raise ValueError, as TensorFlow's."""
    with graph_of(t, clip_value_min, clip_value_max).name_scope(name or "clip_by_value") \
            as scope:
        t = convert_to_tensor(t, name="t")
        t_min = math_ops.minimum(t, clip_value_max)
        t.shape.assert_is_compatible_with(t_min.shape)
        t_max = math_ops.maximum(t_min, clip_value_min, name=scope)
        t.shape.assert_is_compatible_with(t_max.shape)
        return t_max


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t * clip_norm / max(l2norm(t), clip_norm)`; the norm is over `axes` (all if None)."""
    with graph_of(t, clip_norm).name_scope(name or "clip_by_norm") as scope:
        t = convert_to_tensor(t, name="t")
        l2sum = math_ops.reduce_sum(t * t, axes, keepdims=True)
        # sqrt's gradient at 0 is inf: take the root only where the sum is positive.
        positive = math_ops.greater(l2sum, 0)
        safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(positive, unary_ops.sqrt(safe), l2sum)
        intermediate = t * clip_norm
        t.shape.assert_is_compatible_with(intermediate.shape)
        return array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm),
                                  name=scope)


def global_norm(t_list, name=None):
    """sqrt(sum of the squared elements of every tensor in `t_list`); None entries skipped."""
    if isinstance(t_list, str) or not isinstance(t_list, collections.abc.Sequence):
        raise TypeError("t_list should be a sequence")
    values = [convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t)
              for t in t_list if t is not None]
    with graph_of(values).name_scope(name or "global_norm") as scope:
        squares = [math_ops.reduce_sum(unary_ops.square(v)) for v in values]
        total = math_ops.reduce_sum(joining_ops.stack(squares))
        return unary_ops.sqrt(total, name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by clip_norm / max(global_norm, clip_norm) (of an
    IndexedSlices, its rows).

    Returns:
      (list of clipped tensors, None where the input was None; the global norm).
    """
    if isinstance(t_list, str) or not isinstance(t_list, collections.abc.Sequence):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    graph = graph_of(use_norm)
    with graph.name_scope(name or "clip_by_global_norm"):
        dtype = use_norm.dtype.base_dtype
        clip_norm = convert_to_tensor(clip_norm, dtype=dtype, name="clip_norm")
        one = convert_to_tensor(1.0, dtype=dtype)
        # A zero norm gives 1/0 = inf, and min(inf, 1/clip_norm) keeps the scale at 1.
        scale = clip_norm * math_ops.minimum(one / use_norm, one / clip_norm)
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            # An IndexedSlices stays sparse: only its rows are scaled.
            values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t)
            values = array_ops.identity(values * math_ops.cast(scale, values.dtype),
                                        name=f"_{i}")
            clipped.append(IndexedSlices(values, t.indices, t.dense_shape)
                           if isinstance(t, IndexedSlices) else values)
    return clipped, use_norm
