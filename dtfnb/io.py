"""tf.io (TensorFlow 1.x's names for parsing records): re-exports only (see
dtfnb/ops/parsing_ops.py)."""

from dtfnb.ops.parsing_ops import (  # noqa: F401 - re-exported
    FixedLenFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
