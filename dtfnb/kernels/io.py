"""Reader kernels: the handle ops find or create the reader; the others use it.

Readers live on CPU, as in TensorFlow. Without a shared_name a reader is private to
its session's kernel, named `_<process counter>_<node name>`; with one it lives in
the device's ResourceMgr, shared by every session and client of the task.
"""

import glob

import numpy as np

from dtfnb.base.object_arrays import object_vector
from dtfnb.kernels.handles import resource_of
from dtfnb.kernels.registry import register_kernel
from dtfnb.resources import readers

# op type → (reader class, the attrs its constructor takes)
_KINDS = {
    "TextLineReaderV2": (readers.TextLineReader, ("skip_header_lines",)),
    "FixedLengthRecordReaderV2": (readers.FixedLengthRecordReader,
                                  ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes",
                                   "encoding")),
    "TFRecordReaderV2": (readers.TFRecordReader, ("compression_type",)),
    "WholeFileReaderV2": (readers.WholeFileReader, ()),
    "IdentityReaderV2": (readers.IdentityReader, ()),
}


def _create(ctx, name):
    """A reader is named in messages by its kind and node, as TensorFlow's are."""
    cls, options = _KINDS[ctx.op]
    return cls(f"{cls.__name__} '{ctx.name}'", **{option: ctx.attrs[option]
                                                  for option in options})


@register_kernel("TextLineReaderV2", device="CPU")
@register_kernel("FixedLengthRecordReaderV2", device="CPU")
@register_kernel("TFRecordReaderV2", device="CPU")
@register_kernel("WholeFileReaderV2", device="CPU")
@register_kernel("IdentityReaderV2", device="CPU")
def _reader_handle(ctx, step):
    return resource_of(ctx, _create, _KINDS[ctx.op][0], ctx.op[:-2])


@register_kernel("ReaderReadV2", device="CPU", blocking=True)
def _read(ctx, step, reader, queue):
    key, value = reader.read(step, queue)
    return np.array(key, dtype=object), np.array(value, dtype=object)


@register_kernel("ReaderReadUpToV2", device="CPU", blocking=True)
def _read_up_to(ctx, step, reader, queue, num_records):
    records = reader.read_up_to(step, queue, int(num_records))
    return object_vector([k for k, _ in records]), object_vector([v for _, v in records])


@register_kernel("ReaderNumRecordsProducedV2", device="CPU")
def _num_records_produced(ctx, step, reader):
    return np.asarray(reader.records_produced, dtype=np.int64)


@register_kernel("ReaderNumWorkUnitsCompletedV2", device="CPU")
def _num_work_units_completed(ctx, step, reader):
    return np.asarray(reader.work_units_completed, dtype=np.int64)


@register_kernel("ReaderResetV2", device="CPU", blocking=True)
def _reset(ctx, step, reader):
    reader.reset(step)


@register_kernel("ReaderSerializeStateV2", device="CPU", blocking=True)
def _serialize_state(ctx, step, reader):
    return np.array(reader.serialize_state(step), dtype=object)


@register_kernel("ReaderRestoreStateV2", device="CPU", blocking=True)
def _restore_state(ctx, step, reader, state):
    state = np.asarray(state, dtype=object).reshape(()).item()
    reader.restore_state(step, state.encode() if isinstance(state, str) else state)


@register_kernel("MatchingFiles", device="CPU")
def _matching_files(ctx, step, pattern):
    patterns = np.asarray(pattern, dtype=object).reshape(-1)
    paths = sorted(path for p in patterns for path in glob.glob(p.decode()))
    return np.array([path.encode() for path in paths], dtype=object).reshape(-1)
