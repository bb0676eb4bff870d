"""Readers: TextLineReader, FixedLengthRecordReader, TFRecordReader, WholeFileReader,
IdentityReader.

A reader is a stateful handle op (`TextLineReaderV2`, …; dtype resource) whose state
lives in the task that runs it, shared by `shared_name` within a container; `read`,
`read_up_to`, the counters and `reset` are ops on that handle and on the handle of
the queue of filenames, so the placer keeps all three together.
"""

import collections

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_op, make_tensor
from dtfnb.ops.shape_util import shape_error

_HANDLES = ("TextLineReaderV2", "FixedLengthRecordReaderV2", "TFRecordReaderV2",
            "WholeFileReaderV2", "IdentityReaderV2")
for _op in _HANDLES:
    define_op(_op, lambda op: [scalar()], stateful=True)
define_op("ReaderReadV2", lambda op: [scalar(), scalar()], stateful=True)
define_op("ReaderReadUpToV2", lambda op: [TensorShape([None])] * 2, stateful=True)
define_op("ReaderNumRecordsProducedV2", lambda op: [scalar()], stateful=True)
define_op("ReaderNumWorkUnitsCompletedV2", lambda op: [scalar()], stateful=True)
define_op("ReaderSerializeStateV2", lambda op: [scalar()], stateful=True)


def _restore_state_shape(op):
    rank = op.inputs[1].shape.ndims
    if rank not in (None, 0):
        raise shape_error(op, f"Shape must be rank 0 but is rank {rank}")
    return []


define_op("ReaderRestoreStateV2", _restore_state_shape, stateful=True)
define_op("ReaderResetV2", lambda op: [], stateful=True)
for _op in _HANDLES + ("ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                       "ReaderNumWorkUnitsCompletedV2", "ReaderSerializeStateV2",
                       "ReaderRestoreStateV2", "ReaderResetV2"):
    NotDifferentiable(_op)

# What read and read_up_to return, named as TensorFlow's generated ops name them.
ReaderReadV2 = collections.namedtuple("ReaderReadV2", ["key", "value"])
ReaderReadUpToV2 = collections.namedtuple("ReaderReadUpToV2", ["keys", "values"])


def _matching_files_shape(op):
    rank = op.inputs[0].shape.ndims
    if rank is not None and rank > 1:
        raise shape_error(op, f"Shape must be at most rank 1 but is rank {rank}")
    return [TensorShape([None])]


define_op("MatchingFiles", _matching_files_shape)
NotDifferentiable("MatchingFiles")


def matching_files(pattern, name=None):
    """The sorted paths that match `pattern`, a glob or a vector of them, on the
    filesystem of the task that runs it."""
    return make_tensor("MatchingFiles", [convert_to_tensor(pattern, dtypes.string)],
                       dtypes.string, name=name)


class ReaderBase:
    """Produces (key, value) records from the work units (filenames) of a queue."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        """The reader's resource handle: the tensor the reader's ops take as their first input."""
        return self._reader_ref

    @property
    def supports_serialize(self):
        """Whether the reader's state can be saved and restored."""
        return self._supports_serialize

    def read(self, queue, name=None):
        """The next (key, value) record; takes a filename from `queue` when it needs one."""
        op = make_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)],
                     [dtypes.string, dtypes.string], name=name or "ReaderReadV2")
        return ReaderReadV2(*op.outputs)

    def read_up_to(self, queue, num_records, name=None):
        """Up to `num_records` records as (keys, values) vectors; fewer when a file ends."""
        with self._reader_ref.graph.name_scope(name or "ReaderReadUpToV2") as scope:
            num_records = convert_to_tensor(num_records, dtype=dtypes.int64,
                                            name="num_records")
            op = make_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue), num_records],
                         [dtypes.string, dtypes.string], name=scope)
        return ReaderReadUpToV2(*op.outputs)

    def num_records_produced(self, name=None):
        """An int64 tensor: the number of records the reader has produced so far."""
        return make_tensor("ReaderNumRecordsProducedV2", [self._reader_ref], dtypes.int64,
                           name=name or "ReaderNumRecordsProducedV2")

    def num_work_units_completed(self, name=None):
        """An int64 tensor: the number of work units (files) the reader has finished."""
        return make_tensor("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], dtypes.int64,
                           name=name or "ReaderNumWorkUnitsCompletedV2")

    def serialize_state(self, name=None):
        """The reader's state as a string, where the reader supports it (else the op fails
        as unimplemented)."""
        return make_tensor("ReaderSerializeStateV2", [self._reader_ref], dtypes.string,
                           name=name or "ReaderSerializeStateV2")

    def restore_state(self, state, name=None):
        """An op restoring a state from serialize_state; a state refused resets the reader."""
        with self._reader_ref.graph.name_scope(name or "ReaderRestoreStateV2") as scope:
            state = convert_to_tensor(state, dtype=dtypes.string, name="state")
            return make_op("ReaderRestoreStateV2", [self._reader_ref, state], [], name=scope)

    def reset(self, name=None):
        """An op that zeroes the counters and drops the current file."""
        return make_op("ReaderResetV2", [self._reader_ref], [], name=name or "ReaderResetV2")


def _queue_ref(queue):
    return getattr(queue, "queue_ref", queue)


def _reader_ref(op_type, name, **attrs):
    return make_tensor(op_type, [], dtypes.resource, name=name or op_type,
                       attrs={"container": "", "shared_name": "", **attrs})


class TextLineReader(ReaderBase):
    """One record per line; keys `<path>:<line number>`."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_reader_ref("TextLineReaderV2", name,
                                     skip_header_lines=int(skip_header_lines or 0)))


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes; keys `<path>:<record number>`. `encoding` "ZLIB"
    or "GZIP" reads compressed files."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(_reader_ref(
            "FixedLengthRecordReaderV2", name, record_bytes=int(record_bytes),
            header_bytes=int(header_bytes or 0), footer_bytes=int(footer_bytes or 0),
            hop_bytes=int(hop_bytes or 0), encoding=encoding or ""))


class TFRecordReader(ReaderBase):
    """The records of TFRecord files; keys `<path>:<byte offset>`."""

    def __init__(self, name=None, options=None):
        # options: a tf.python_io.TFRecordOptions (a module above ops, hence no import)
        compression = options.get_compression_type_string(options) if options else ""
        super().__init__(_reader_ref("TFRecordReaderV2", name, compression_type=compression))


class WholeFileReader(ReaderBase):
    """One record per file: (path, contents)."""

    def __init__(self, name=None):
        super().__init__(_reader_ref("WholeFileReaderV2", name), supports_serialize=True)


class IdentityReader(ReaderBase):
    """One record per work unit of the queue: (work, work)."""

    def __init__(self, name=None):
        super().__init__(_reader_ref("IdentityReaderV2", name), supports_serialize=True)
