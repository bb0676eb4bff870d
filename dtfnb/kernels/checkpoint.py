"""Checkpoint kernels and the file format they write (docs/checkpoints.md).

A checkpoint `<prefix>` is data files `<prefix>.data-00000-of-0000N`, one per shard,
written by the task holding that shard's variables, and `<prefix>.index`, written
last, that says where each tensor lies. Every file is written to a temporary name,
fsynced and renamed, so a reader sees either a whole file or none.

- SaveShard writes one data file and returns its part of the index (a serialized
  CheckpointIndex), so the bytes never travel: only names, offsets and checksums do.
- WriteCheckpointIndex joins the shards' parts into `<prefix>.index`.
- RestoreV2 reads tensors back, checking length and crc32 (DataLossError if not).
"""

import contextlib
import os
import struct
import zlib

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.atomic_file import write_atomically
from dtfnb.base.codec import to_numpy
from dtfnb.base.errors import (
    DataLossError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    UnknownError,
)
from dtfnb.base.shapes import TensorShape
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos import checkpoint_pb2
from dtfnb.resources.variable import value_of

FORMAT_VERSION = 1
# The index file ends with: body length (uint64), crc32 of the body (uint32), magic.
_FOOTER = struct.Struct("<QI8s")
_MAGIC = b"dtfnbck1"


def data_filename(prefix, shard, num_shards):
    """The name of a V2 checkpoint's data file for one shard: `prefix.data-00000-of-00001`."""
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_filename(prefix):
    """The name of a V2 checkpoint's index file: `prefix.index`."""
    return f"{prefix}.index"


# -- files ----------------------------------------------------------------------------

@contextlib.contextmanager
def _os_errors_as_op_errors():
    try:
        yield
    except FileNotFoundError as e:
        raise NotFoundError(None, None, f"{e.strerror}: {e.filename}") from None
    except PermissionError as e:
        raise PermissionDeniedError(None, None, f"{e.strerror}: {e.filename}") from None
    except OSError as e:
        raise UnknownError(None, None, f"{e.strerror}: {e.filename}") from None


# -- tensors as bytes -----------------------------------------------------------------

def _encode(array, dtype):
    """Numeric tensors: row-major little-endian bytes. Strings: one uint64 length per
    element, then the elements' bytes."""
    if dtype is dtypes.string:
        items = [v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1)]
        lengths = np.array([len(v) for v in items], dtype="<u8")
        return lengths.tobytes() + b"".join(items)
    return np.ascontiguousarray(array, dtype=dtype.as_numpy_dtype).tobytes()


def _decode(data, dtype, shape):
    count = int(np.prod(shape, dtype=np.int64))
    if dtype is dtypes.string:
        lengths = np.frombuffer(data, dtype="<u8", count=count)
        out, pos = np.empty(count, dtype=object), 8 * count
        for i, length in enumerate(lengths.tolist()):
            out[i] = bytes(data[pos:pos + length])
            pos += length
        return out.reshape(shape)
    return np.frombuffer(data, dtype=dtype.as_numpy_dtype, count=count).reshape(shape).copy()


# -- writing --------------------------------------------------------------------------

def write_shard(prefix, shard, num_shards, names, values, value_dtypes):
    """Writes one data file; returns the CheckpointIndex of its tensors."""
    index = checkpoint_pb2.CheckpointIndex(version=FORMAT_VERSION, num_shards=num_shards)
    chunks, offset = [], 0
    for name, value, dtype in zip(names, values, value_dtypes):
        array, dtype = to_numpy(value), dtype.base_dtype
        data = _encode(array, dtype)
        index.entries[name].CopyFrom(checkpoint_pb2.CheckpointEntry(
            dtype=dtype.as_datatype_enum, shape=TensorShape(array.shape).as_proto(),
            shard=shard, offset=offset, length=len(data), crc32=zlib.crc32(data)))
        chunks.append(data)
        offset += len(data)
    with _os_errors_as_op_errors():
        # An old index of the same prefix must not describe the new data.
        with contextlib.suppress(FileNotFoundError):
            os.remove(index_filename(prefix))
        write_atomically(data_filename(prefix, shard, num_shards), chunks)
    return index


def write_index(prefix, shard_indexes):
    """Joins the shards' indexes into `<prefix>.index`, the file that completes a save."""
    index = checkpoint_pb2.CheckpointIndex(version=FORMAT_VERSION)
    for part in shard_indexes:
        index.num_shards = part.num_shards
        for name, entry in part.entries.items():
            index.entries[name].CopyFrom(entry)
    body = index.SerializeToString(deterministic=True)
    with _os_errors_as_op_errors():
        write_atomically(index_filename(prefix), [body, _FOOTER.pack(len(body), zlib.crc32(body),
                                                                 _MAGIC)])


# -- reading --------------------------------------------------------------------------

def read_index(prefix):
    """The CheckpointIndex of `<prefix>.index`; DataLossError if it is torn or corrupt."""
    path = index_filename(prefix)
    with _os_errors_as_op_errors():
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise NotFoundError(None, None, "Unsuccessful TensorSliceReader constructor: Failed "
                                f"to find any matching files for {prefix}") from None
    if len(raw) < _FOOTER.size:
        raise DataLossError(None, None, f"Checkpoint index {path} is truncated")
    length, crc, magic = _FOOTER.unpack(raw[-_FOOTER.size:])
    body = raw[:-_FOOTER.size]
    if magic != _MAGIC or length != len(body):
        raise DataLossError(None, None, f"Checkpoint index {path} is truncated or not a "
                            "dtfnb checkpoint index")
    if zlib.crc32(body) != crc:
        raise DataLossError(None, None, f"Checksum mismatch in checkpoint index {path}")
    index = checkpoint_pb2.CheckpointIndex.FromString(body)
    if index.version != FORMAT_VERSION:
        raise DataLossError(None, None, f"Checkpoint index {path} has format version "
                            f"{index.version}; this dtfnb reads version {FORMAT_VERSION}")
    return index


def read_tensors(prefix, index, names, expected_dtypes):
    """The tensors `names` of the checkpoint, checked against their lengths and crc32."""
    by_shard = {}
    for name, expected in zip(names, expected_dtypes):
        if name not in index.entries:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint")
        entry = index.entries[name]
        dtype = dtypes.as_dtype(entry.dtype)
        if expected is not None and dtype is not expected.base_dtype:
            raise InvalidArgumentError(
                None, None, f"tensor_name = {name}; expected dtype {expected.base_dtype.name} "
                f"does not equal original dtype {dtype.name}")
        by_shard.setdefault(entry.shard, []).append((name, entry, dtype))
    out = {}
    for shard, items in sorted(by_shard.items()):
        path = data_filename(prefix, shard, index.num_shards)
        with _os_errors_as_op_errors(), open(path, "rb") as f:
            for name, entry, dtype in items:
                f.seek(entry.offset)
                data = f.read(entry.length)
                if len(data) != entry.length:
                    raise DataLossError(None, None, f"Checkpoint data file {path} is truncated: "
                                        f"tensor {name} needs bytes {entry.offset}.."
                                        f"{entry.offset + entry.length}")
                if zlib.crc32(data) != entry.crc32:
                    raise DataLossError(None, None, f"Checksum mismatch for tensor {name} in "
                                        f"checkpoint data file {path}")
                shape = tuple(d.size for d in entry.shape.dim)
                out[name] = _decode(data, dtype, shape)
    return [out[name] for name in names]


# -- kernels --------------------------------------------------------------------------

def _text(value):
    value = to_numpy(value).reshape(()).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values):
    return [_text(v) for v in to_numpy(values).reshape(-1)]


@register_kernel("SaveShard", device="CPU", blocking=True)
def _save_shard(ctx, step, prefix, tensor_names, *tensors):
    index = write_shard(_text(prefix), ctx.attrs["shard"], ctx.attrs["num_shards"],
                        _texts(tensor_names), [value_of(t) for t in tensors],
                        ctx.attrs["dtypes"])
    return np.array(index.SerializeToString(), dtype=object)


@register_kernel("WriteCheckpointIndex", device="CPU", blocking=True)
def _write_checkpoint_index(ctx, step, prefix, *shard_indexes):
    write_index(_text(prefix), [checkpoint_pb2.CheckpointIndex.FromString(to_numpy(i).item())
                                for i in shard_indexes])
    return prefix


@register_kernel("RestoreV2", device="CPU", blocking=True)
def _restore(ctx, step, prefix, tensor_names, shape_and_slices):
    if any(_texts(shape_and_slices)):
        raise InvalidArgumentError(None, None, "RestoreV2 restores whole tensors only: "
                                   "shape_and_slices must be empty strings")
    prefix = _text(prefix)
    tensors = read_tensors(prefix, read_index(prefix), _texts(tensor_names),
                           ctx.attrs["dtypes"])
    tensors = [ctx.xp.asarray(t) if t.dtype != object else t for t in tensors]
    return tensors[0] if len(tensors) == 1 else tensors
