"""tf.summary (TensorFlow 1.x's graph summaries): the ops (dtfnb/ops/summary_ops.py) and
the writing side (writer.py), re-exported."""

from dtfnb.ops.summary_ops import (  # noqa: F401 - re-exported
    audio,
    get_summary_description,
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from dtfnb.protos.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from dtfnb.protos.summary_pb2 import Summary, SummaryDescription  # noqa: F401 - re-exported
from dtfnb.summary.writer import FileWriter, FileWriterCache  # noqa: F401 - re-exported
