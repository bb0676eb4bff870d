"""Checkpoint kernels and the file format they write (docs/checkpoints.md).

A checkpoint `<prefix>` is data files `<prefix>.data-00000-of-0000N`, one per shard,
written by the task holding that shard's variables, and `<prefix>.index`, written
last, that says where each tensor lies. Every file is written to a temporary name,
fsynced and renamed, so a reader sees either a whole file or none.

- SaveShard writes one data file and returns its part of the index (a serialized
  CheckpointIndex), so the bytes never travel: only names, offsets and checksums do.
- WriteCheckpointIndex joins the shards' parts into `<prefix>.index`.
- RestoreV2 reads tensors back, checking length and crc32 (DataLossError if not).

A partitioned variable is saved as slices, its parts, of one entry (TensorFlow's
shape_and_slices specs, "5 3 0,2:0,3"): RestoreV2 cuts any slice asked for from the
slices saved, so a checkpoint restores into another partitioning.
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
from dtfnb.base.shapes import TensorShape, dims_string
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos import checkpoint_pb2
from dtfnb.resources.variable import value_of

FORMAT_VERSION = 2
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

def write_shard(prefix, shard, num_shards, names, specs, values, value_dtypes):
    """Writes one data file; returns the CheckpointIndex of its tensors. A tensor with a
    slice spec ("5 3 0,2:0,3") is a slice of the full tensor `name`."""
    index = checkpoint_pb2.CheckpointIndex(version=FORMAT_VERSION, num_shards=num_shards)
    chunks, offset = [], 0
    for name, spec, value, dtype in zip(names, specs, values, value_dtypes):
        array, dtype = to_numpy(value), dtype.base_dtype
        data = _encode(array, dtype)
        where = dict(shard=shard, offset=offset, length=len(data), crc32=zlib.crc32(data))
        entry = index.entries[name]
        entry.dtype = dtype.as_datatype_enum
        if spec:
            full_shape, start, size = _parse_spec(name, spec)
            if list(array.shape) != size:
                raise InvalidArgumentError(None, None, f"tensor_name = {name}; the slice "
                                           f"{spec} is {dims_string(size)} but the tensor is "
                                           f"{dims_string(array.shape)}")
            entry.shape.CopyFrom(TensorShape(full_shape).as_proto())
            entry.slices.add(start=start, size=size, **where)
        else:
            entry.shape.CopyFrom(TensorShape(array.shape).as_proto())
            entry.MergeFrom(checkpoint_pb2.CheckpointEntry(**where))
        chunks.append(data)
        offset += len(data)
    with _os_errors_as_op_errors():
        # An old index of the same prefix must not describe the new data.
        with contextlib.suppress(FileNotFoundError):
            os.remove(index_filename(prefix))
        write_atomically(data_filename(prefix, shard, num_shards), chunks)
    return index


def write_index(prefix, shard_indexes):
    """Joins the shards' indexes into `<prefix>.index`, the file that completes a save:
    the slices of one tensor, saved by several shards, into one entry."""
    index = checkpoint_pb2.CheckpointIndex(version=FORMAT_VERSION)
    for part in shard_indexes:
        index.num_shards = part.num_shards
        for name, entry in part.entries.items():
            if entry.slices and name in index.entries:
                index.entries[name].slices.extend(entry.slices)
            else:
                index.entries[name].CopyFrom(entry)
    body = index.SerializeToString(deterministic=True)
    with _os_errors_as_op_errors():
        write_atomically(index_filename(prefix), [body, _FOOTER.pack(len(body), zlib.crc32(body),
                                                                 _MAGIC)])


def _parse_spec(name, spec):
    """(full shape, start, size) of a slice spec "5 3 0,2:-": the full shape, then one
    `start,size` per dimension ("-" for all of it)."""
    try:
        *full, extents = spec.split(" ")
        full_shape = [int(d) for d in full]
        start, size = [], []
        for dim, extent in zip(full_shape, extents.split(":"), strict=True):
            first, count = (0, dim) if extent == "-" else (int(v) for v in extent.split(","))
            start.append(first)
            size.append(count)
    except ValueError:
        raise InvalidArgumentError(None, None, f"tensor_name = {name}; bad shape and slice "
                                   f"spec {spec!r}") from None
    return full_shape, start, size


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
    if index.version not in (1, FORMAT_VERSION):  # version 1 is version 2 without slices
        raise DataLossError(None, None, f"Checkpoint index {path} has format version "
                            f"{index.version}; this dtfnb reads versions 1 and "
                            f"{FORMAT_VERSION}")
    return index


def read_tensors(prefix, index, names, specs, expected_dtypes):
    """The tensors `names` of the checkpoint, each whole or the slice its spec asks for,
    checked against their lengths and crc32. As TensorFlow's RestoreV2 does, a slice may
    be cut from a tensor saved whole or assembled from saved slices however they were
    cut, so a variable restores into another partitioning."""
    out, read = [], {}  # read: (name, shard, offset) → the saved piece there
    for name, spec, expected in zip(names, specs, expected_dtypes):
        if name not in index.entries:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint")
        entry = index.entries[name]
        dtype = dtypes.as_dtype(entry.dtype)
        if expected is not None and dtype is not expected.base_dtype:
            raise InvalidArgumentError(
                None, None, f"tensor_name = {name}; expected dtype "
                f"{dtypes.c_type_name(expected)} does not equal original dtype "
                f"{dtypes.c_type_name(dtype)}")
        shape = [d.size for d in entry.shape.dim]
        box, box_text = ([0] * len(shape), shape), ":".join("-" * len(shape))
        if spec:
            full_shape, *box = _parse_spec(name, spec)
            box_text = spec.rsplit(" ", 1)[-1]
            if full_shape != shape:
                raise InvalidArgumentError(
                    None, None, f"tensor_name = {name}; shape in shape_and_slice spec "
                    f"{dims_string(full_shape)} does not match the shape stored in checkpoint: "
                    f"{dims_string(shape)}")
        saved = entry.slices or [checkpoint_pb2.SavedSlice(
            start=[0] * len(shape), size=shape, shard=entry.shard, offset=entry.offset,
            length=entry.length, crc32=entry.crc32)]
        overlaps = [(piece, _overlap(box, piece)) for piece in saved]
        overlaps = [(piece, common) for piece, common in overlaps if common is not None]
        if sum(int(np.prod(common[1])) for _, common in overlaps) != int(np.prod(box[1])):
            raise InvalidArgumentError(
                None, None, f"Does not have sufficient slices for partitioned tensor {name} "
                f"to restore in slice_spec: {box_text}")
        tensor = np.empty(box[1], dtype=dtype.as_numpy_dtype)
        for piece, (start, size) in overlaps:
            key = (name, piece.shard, piece.offset)
            if key not in read:
                read[key] = _read_piece(prefix, index.num_shards, name, dtype, piece)
            tensor[_box_index(start, size, box[0])] = read[key][
                _box_index(start, size, piece.start)]
        out.append(tensor)
    return out


def _read_piece(prefix, num_shards, name, dtype, piece):
    """The array a SavedSlice's bytes hold, checked against their length and crc32."""
    path = data_filename(prefix, piece.shard, num_shards)
    with _os_errors_as_op_errors(), open(path, "rb") as f:
        f.seek(piece.offset)
        data = f.read(piece.length)
    if len(data) != piece.length:
        raise DataLossError(None, None, f"Checkpoint data file {path} is truncated: tensor "
                            f"{name} needs bytes {piece.offset}..{piece.offset + piece.length}")
    if zlib.crc32(data) != piece.crc32:
        raise DataLossError(None, None, f"Checksum mismatch for tensor {name} in checkpoint "
                            f"data file {path}")
    return _decode(data, dtype, tuple(piece.size))


def _overlap(box, piece):
    """(start, size) of the part of `box` (start, size) that a SavedSlice holds; None if
    it holds none of it (an empty box overlaps a piece at its start)."""
    start = [max(a, b) for a, b in zip(box[0], piece.start)]
    end = [min(a + n, b + m) for a, n, b, m in zip(box[0], box[1], piece.start, piece.size)]
    if any(e < s for s, e in zip(start, end)) or (
            any(e == s for s, e in zip(start, end)) and all(box[1])):
        return None
    return start, [e - s for s, e in zip(start, end)]


def _box_index(start, size, origin):
    """The numpy index of box (start, size) in an array whose [0, ...] is at `origin`."""
    return tuple(slice(s - o, s - o + n) for s, n, o in zip(start, size, origin))



# -- kernels --------------------------------------------------------------------------

def _text(value):
    value = to_numpy(value).reshape(()).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values):
    return [_text(v) for v in to_numpy(values).reshape(-1)]


@register_kernel("SaveShard", device="CPU", blocking=True)
def _save_shard(ctx, step, prefix, tensor_names, shape_and_slices, *tensors):
    index = write_shard(_text(prefix), ctx.attrs["shard"], ctx.attrs["num_shards"],
                        _texts(tensor_names), _texts(shape_and_slices),
                        [value_of(t) for t in tensors], ctx.attrs["dtypes"])
    return np.array(index.SerializeToString(), dtype=object)


@register_kernel("WriteCheckpointIndex", device="CPU", blocking=True)
def _write_checkpoint_index(ctx, step, prefix, *shard_indexes):
    write_index(_text(prefix), [checkpoint_pb2.CheckpointIndex.FromString(to_numpy(i).item())
                                for i in shard_indexes])
    return prefix


@register_kernel("RestoreV2", device="CPU", blocking=True)
def _restore(ctx, step, prefix, tensor_names, shape_and_slices):
    prefix = _text(prefix)
    tensors = read_tensors(prefix, read_index(prefix), _texts(tensor_names),
                           _texts(shape_and_slices), ctx.attrs["dtypes"])
    tensors = [ctx.xp.asarray(t) if t.dtype != object else t for t in tensors]
    return tensors[0] if len(tensors) == 1 else tensors
