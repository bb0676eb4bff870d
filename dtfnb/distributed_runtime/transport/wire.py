"""Framed messages and tensors on the wire; pure code, no sockets (see protos/.../wire.proto).

A message is a 4-byte length, a protobuf header, then the raw bytes of the inline
tensors the header lists, in order. Large tensors between tasks on one host go
through the sender's shared-memory blocks instead; the receiver uses them in place
and gives each lease back with a later message to the owner. A block's owner is
(pid, instance): the pid the kernel gave for the connection that brought the slice.
"""

import collections
import math
import os
import struct
import threading

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.codec import proto_to_tensor, tensor_to_proto, to_numpy
from dtfnb.base.errors import InvalidArgumentError, ResourceExhaustedError
from dtfnb.distributed_runtime.transport import shm, streams
from dtfnb.protos import master_pb2, worker_pb2
from dtfnb.runtime.frames import DEAD
from dtfnb.runtime.step import tensor_bytes

_LENGTH = struct.Struct("<I")

# gRPC's own ceiling: a message length is a signed 32-bit integer.
MAX_MESSAGE_BYTES = 2**31 - 1
LIMIT_VARIABLE = "DTFNB_MAX_MESSAGE_BYTES"
# numpy's limit; a peer's shape with more dimensions is made up.
_MAX_DIMS = 64

_FLOAT32 = np.dtype(np.float32)

# Every method of the master and worker services: name -> (service, MethodDescriptor).
METHODS = {method.name: (service, method)
           for module, service in ((master_pb2, "MasterService"), (worker_pb2, "WorkerService"))
           for method in module.DESCRIPTOR.services_by_name[service].methods}
METHOD_NAMES = list(METHODS)
METHOD_INDEX = {name: index for index, name in enumerate(METHOD_NAMES)}


def max_message_bytes():
    """The largest message a task sends or accepts: $DTFNB_MAX_MESSAGE_BYTES, else gRPC's."""
    value = os.environ.get(LIMIT_VARIABLE)
    if not value:
        return MAX_MESSAGE_BYTES
    limit = int(value) if value.strip().isdigit() else 0
    if not 0 < limit <= MAX_MESSAGE_BYTES:
        raise ValueError(f"{LIMIT_VARIABLE} must be a number of bytes from 1 to "
                         f"{MAX_MESSAGE_BYTES}, not {value!r}")
    return limit


def frame(header, payloads=()):
    """Serializes `header` followed by the inline payloads; one copy of each payload."""
    head = header.SerializeToString()
    size = _LENGTH.size + len(head) + sum(p.nbytes for p in payloads)
    limit = max_message_bytes()
    if size > limit:
        raise InvalidArgumentError(
            None, None, f"A message of {size} bytes exceeds the limit of {limit} bytes "
            f"(gRPC's, or {LIMIT_VARIABLE}). Tasks on one host pass large tensors through "
            "shared memory; between hosts, split the tensor.")
    return b"".join([_LENGTH.pack(len(head)), head, *payloads])


def unframe(data, header_type):
    """Parses a framed message into (header, payload). Malformed input: InvalidArgumentError."""
    view = memoryview(data)
    if len(view) < _LENGTH.size:
        raise InvalidArgumentError(None, None, f"Malformed message: {len(view)} bytes is too "
                                   "short for a header")
    (length,) = _LENGTH.unpack_from(view)
    end = _LENGTH.size + length
    if end > len(view):
        raise InvalidArgumentError(None, None, f"Malformed message: header of {length} bytes "
                                   f"in a message of {len(view)} bytes")
    header = header_type()
    try:
        header.ParseFromString(view[_LENGTH.size:end])
    except Exception as err:  # protobuf's DecodeError and friends
        raise InvalidArgumentError(None, None, f"Malformed {header_type.__name__}: {err}") \
            from None
    return header, view[end:]


def tensor_nbytes(value, float_type=None):
    """The bytes of `value` that `Outgoing.add` counts, without writing it: its data after
    `float_type` (runtime.step.tensor_bytes), or a string tensor's TensorProto."""
    if getattr(value, "dtype", None) is not None and value.dtype.kind in "OSU":
        return tensor_to_proto(to_numpy(value), dtypes.string).ByteSize()
    return tensor_bytes(value, float_type)


class Outgoing:
    """Writes tensors into WireTensor entries and collects the inline bytes behind them.

    `receiver`: the pid of the receiving process, as the kernel names it, if it can map
    this process's blocks (else None). `float_type`: a narrower DType for float32
    tensors (the transfer compression of the session's config). `tickets`: large
    tensors of a reply wait there for the receiver to stream them. `nbytes`: the
    tensors' bytes as on a wire, wherever they go.
    """

    def __init__(self, receiver=None, float_type=None, tickets=None):
        self.payloads = []
        self.nbytes = 0
        self._receiver = receiver
        self._float_type = float_type
        self._tickets = tickets

    def add(self, wire, name, value):
        """Writes `value` into the WireTensor `wire` under `name`: inline, as a shared block, or
        behind a stream ticket."""
        wire.name = name
        if value is None:  # a control edge: no data, only "it happened"
            return
        if value is DEAD:  # the untaken side of a cond: no data, only "it did not"
            wire.is_dead = True
            return
        array = to_numpy(value)
        dtype = dtypes.as_dtype(array.dtype)
        wire.dtype = dtype.as_datatype_enum
        wire.shape[:] = array.shape
        if dtype is dtypes.string:
            wire.proto.CopyFrom(tensor_to_proto(array, dtypes.string))
            self.nbytes += wire.proto.ByteSize()
            return
        if self._float_type is not None and array.dtype == _FLOAT32:
            array = array.astype(self._float_type.as_numpy_dtype)
            wire.wire_dtype = self._float_type.as_datatype_enum
        self.nbytes += array.nbytes
        if self._receiver is not None and array.nbytes >= shm.nbytes_threshold:
            lease = shm.block_pool().lend(array, self._receiver)
            if lease is not None:
                wire.shared.CopyFrom(lease)
                return
        if self._tickets is not None and array.nbytes >= streams.STREAM_THRESHOLD:
            wire.stream_ticket = self._tickets.put(array)
            return
        wire.inline_bytes = array.nbytes
        self.payloads.append(np.ascontiguousarray(array).reshape(-1).view(np.uint8))

    def frame(self, header):
        """The message: `header` serialized, followed by the inline payloads."""
        return frame(header, self.payloads)


class Incoming:
    """Reads the tensors of one received message, in the order its header lists them.

    Inline tensors are views of the message (read-only) unless `writable`, which
    copies them; shared ones are writable views of the sender's block, except read-only
    ones (the sender's own arrays), which `writable` copies too. `sender`: the pid of the
    process that sent the message, as the kernel names it (None over gRPC): shared ones
    must be its own blocks. Only a `reply` (to a call of ours) may hold streamed ones:
    zeroed arrays listed in `streams` as (ticket, array), for the caller to fill; a
    request naming one is refused, since nothing would ever fill it. `nbytes`: the bytes
    of the tensors read so far, as on a wire, wherever they came.
    """

    def __init__(self, payload, sender=None, writable=False, reply=False):
        self._payload = payload
        self.nbytes = 0
        self._sender = sender
        self._offset = 0
        self._writable = writable
        self._reply = reply
        self.streams = []

    def value(self, wire):
        """The array `wire` describes; InvalidArgumentError or ResourceExhaustedError for one that
        cannot be made."""
        try:
            return self._value(wire)
        except ValueError as err:  # numpy's word on a shape or dtype the peer made up
            raise InvalidArgumentError(None, None, f"Tensor {wire.name}: {err}") from None
        except MemoryError:
            raise ResourceExhaustedError(None, None, f"Tensor {wire.name} of shape "
                                         f"{list(wire.shape)} does not fit in memory") from None

    def _value(self, wire):
        location = wire.WhichOneof("location")
        if location is None:
            return DEAD if wire.is_dead else None
        if location == "proto":
            _dtype(wire.proto.dtype, wire.name, fixed_size=False)
            _shape([dim.size for dim in wire.proto.tensor_shape.dim], wire.name)
            self.nbytes += wire.proto.ByteSize()
            return proto_to_tensor(wire.proto)
        dtype = _dtype(wire.dtype, wire.name)
        sent = _dtype(wire.wire_dtype, wire.name) if wire.wire_dtype else dtype
        np_dtype = np.dtype(sent.as_numpy_dtype)
        shape = _shape(wire.shape, wire.name)
        nbytes = math.prod(shape) * np_dtype.itemsize  # Python ints: no overflow
        self.nbytes += nbytes
        if location == "shared":
            if wire.shared.block_size < nbytes:
                raise InvalidArgumentError(None, None, f"Tensor {wire.name} of {nbytes} bytes "
                                           f"does not fit its block of {wire.shared.block_size}")
            array = shm.mappings().view(wire.shared, self._sender, np_dtype, shape,
                                        released.callback((self._sender, wire.shared.owner)))
            if wire.shared.read_only:  # the sender's own array: never written to
                array = array.copy() if self._writable else _read_only(array)
        elif location == "stream_ticket":
            if not self._reply:
                raise InvalidArgumentError(None, None, f"Tensor {wire.name} names a stream "
                                           "ticket, which only a reply may hold")
            array = np.zeros(shape, np_dtype)
            self.streams.append((wire.stream_ticket, array))
            return array
        else:
            if wire.inline_bytes != nbytes or self._offset + nbytes > len(self._payload):
                raise InvalidArgumentError(
                    None, None, f"Tensor {wire.name} of shape {list(shape)} and dtype "
                    f"{sent.name} needs {nbytes} bytes; the message holds "
                    f"{len(self._payload) - self._offset} more")
            array = np.frombuffer(self._payload, np_dtype, nbytes // np_dtype.itemsize,
                                  self._offset).reshape(shape)
            self._offset += nbytes
            if self._writable:
                array = array.copy()
        if wire.wire_dtype:
            array = array.astype(dtype.as_numpy_dtype)
        return array

    def values(self, wires):
        """The arrays of `wires`, by name."""
        return {wire.name: self.value(wire) for wire in wires}


def _read_only(array):
    array.flags.writeable = False
    return array


def _dtype(enum, name, fixed_size=True):
    """The DType of a received tensor; one that cannot cross between tasks is refused."""
    try:
        dtype = dtypes.as_dtype(enum)
    except TypeError:
        raise InvalidArgumentError(None, None, f"Tensor {name} has an unknown dtype {enum}") \
            from None
    if dtype is dtypes.resource or dtype.is_ref_dtype:
        raise InvalidArgumentError(None, None, f"Tensor {name} of dtype {dtype.name} cannot "
                                   "cross between tasks")
    if fixed_size and dtype is dtypes.string:  # its bytes travel in a TensorProto
        raise InvalidArgumentError(None, None, f"Tensor {name} of dtype string has no raw "
                                   "bytes on the wire")
    return dtype


def _shape(dims, name):
    shape = tuple(dims)
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(None, None, f"Tensor {name} has a negative dimension: "
                                   f"{list(shape)}")
    if len(shape) > _MAX_DIMS:
        raise InvalidArgumentError(None, None, f"Tensor {name} has {len(shape)} dimensions; "
                                   f"at most {_MAX_DIMS} are supported")
    return shape


class Releases:
    """Leases of other processes' blocks that this process no longer uses, by owner
    ((pid, instance): a peer that only claims another's instance takes none of its).

    The garbage collector fills it (an array over a block died); since that may happen
    anywhere, even inside `take` on the same thread, it only appends to a deque, never
    taking the lock. The transport empties it into the next message it sends to that
    owner.
    """

    def __init__(self):
        self._dead = collections.deque()   # (owner, block id), appended by finalizers
        self._by_owner = {}                # owner -> [block ids]
        self._lock = threading.Lock()

    def callback(self, owner):
        """A finalizer that records `owner`'s block as no longer used (it only appends: see the
        class)."""
        return lambda block_id: self._dead.append((owner, block_id))

    def take(self, owner):
        """The ids of `owner`'s blocks no longer used, to send it; they are forgotten here."""
        with self._lock:
            while self._dead:
                dead_owner, block_id = self._dead.popleft()
                self._by_owner.setdefault(dead_owner, []).append(block_id)
            return self._by_owner.pop(owner, ())


released = Releases()
