"""tf.summary (TensorFlow 1.x's graph summaries): re-exports only (see
dtfnb/ops/summary_ops.py)."""

from dtfnb.ops.summary_ops import scalar  # noqa: F401 - re-exported
from dtfnb.protos.summary_pb2 import Summary  # noqa: F401 - re-exported
