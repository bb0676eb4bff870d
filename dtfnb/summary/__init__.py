"""tf.summary (TensorFlow 1.x's graph summaries): the ops (dtfnb/ops/summary_ops.py) and
the writing side (writer.py), re-exported."""

from dtfnb.ops.summary_ops import scalar  # noqa: F401 - re-exported
from dtfnb.protos.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from dtfnb.protos.summary_pb2 import Summary  # noqa: F401 - re-exported
from dtfnb.summary.writer import FileWriter, FileWriterCache  # noqa: F401 - re-exported
