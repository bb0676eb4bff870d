"""Clipping: by value, by norm, and of a list of tensors by their global norm."""

import collections.abc

from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.ops import array_ops, constant_op, joining_ops, math_ops, nn_ops, unary_ops
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


def _sequence(t_list):
    if isinstance(t_list, str) or not isinstance(t_list, collections.abc.Sequence):
        raise TypeError("`t_list` should be a sequence of tensors. Received "
                        f"{type(t_list)}.")
    return list(t_list)


def _values(t_list):
    """The tensors of `t_list` (an IndexedSlices' values), converted as "t_<i>"; None kept."""
    return [None if t is None else
            convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=f"t_{i}")
            for i, t in enumerate(t_list)]


def global_norm(t_list, name=None):
    """sqrt(sum of the squared elements of every tensor in `t_list`); None entries skipped.
    As TensorFlow builds it: twice the sum of each tensor's L2Loss (computed beside it)."""
    t_list = _sequence(t_list)
    with graph_of(*t_list).name_scope(name or "global_norm"):
        halves = []
        for v in _values(t_list):
            if v is not None:
                with v.graph.colocate_with(v):
                    halves.append(nn_ops.l2_loss(v))
        half = math_ops.reduce_sum(joining_ops.stack(halves))
        return unary_ops.sqrt(half * constant_op.constant(2.0, dtype=half.dtype),
                              name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by clip_norm / max(global_norm, clip_norm) (of an
    IndexedSlices, its rows).

    Returns:
      (list of clipped tensors, None where the input was None; the global norm).
    """
    t_list = _sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with graph_of(*t_list, use_norm).name_scope(name or "clip_by_global_norm") as scope:
        scale = clip_norm * math_ops.minimum(
            1.0 / use_norm, constant_op.constant(1.0, dtype=use_norm.dtype) / clip_norm)
        scale = scale + (use_norm - use_norm)   # NaN where the norm is not finite
        clipped = []
        for i, (t, v) in enumerate(zip(t_list, _values(t_list))):
            if v is None:
                clipped.append(None)
                continue
            with v.graph.colocate_with(v):
                # (TensorFlow names it after the scope, inside the scope)
                v = array_ops.identity(v * math_ops.cast(scale, v.dtype),
                                       name=f"{scope}_{i}")
            # An IndexedSlices stays sparse: only its rows are scaled.
            clipped.append(IndexedSlices(v, t.indices, t.dense_shape)
                           if isinstance(t, IndexedSlices) else v)
    return clipped, use_norm
