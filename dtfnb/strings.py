"""tf.strings (TensorFlow 1.x's names): re-exports only (see dtfnb/ops/string_ops.py)."""

from dtfnb.ops.string_ops import reduce_join  # noqa: F401 - re-exported
