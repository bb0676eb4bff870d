"""tf.sets (TensorFlow 1.x's names): re-exports only (see dtfnb/ops/set_ops.py)."""

from dtfnb.ops.set_ops import set_difference, set_intersection, set_size, set_union

# TensorFlow 1 exports each under both names
size, intersection, difference, union = set_size, set_intersection, set_difference, set_union
