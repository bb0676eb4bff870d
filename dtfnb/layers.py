"""tf.layers: re-exports only (the layers live in dtfnb/ops/layers.py)."""

from dtfnb.ops.layers import (  # noqa: F401 - re-exported
    batch_normalization,
    dense,
    dropout,
    flatten,
)
