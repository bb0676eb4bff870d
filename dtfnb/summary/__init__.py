"""tf.summary (TensorFlow 1.x's graph summaries): the ops (dtfnb/ops/summary_ops.py) and
the writing side (writer.py), re-exported."""

from dtfnb.ops.summary_ops import (  # noqa: F401 - re-exported
    audio,
    histogram,
    image,
    scalar,
    tensor_summary,
    text,
)
from dtfnb.protos.summary_pb2 import Summary  # noqa: F401 - re-exported
