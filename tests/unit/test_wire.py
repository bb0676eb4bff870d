"""wire.py: framed messages and tensors round trip, and malformed input is refused by name."""

import os
import threading

import ml_dtypes
import numpy as np
import pytest

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.distributed_runtime.transport import shm, wire
from dtfnb.protos import tensor_pb2, worker_pb2

_E = tensor_pb2.DataType


def send(values, **options):
    """The framed TensorPush carrying `values` ({name: value or None})."""
    out = wire.Outgoing(**options)
    push = worker_pb2.TensorPush(step_id=7)
    for name, value in values.items():
        out.add(push.tensor.add(), name, value)
    return out.frame(push)


def receive(data, writable=False):
    """The values of a message that this process sent itself."""
    push, payload = wire.unframe(data, worker_pb2.TensorPush)
    return wire.Incoming(payload, os.getpid(), writable).values(push.tensor)


def round_trip(values, **options):
    return receive(send(values, **options))


@pytest.mark.parametrize("np_type", [
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.int16, np.int32,
    np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64,
    np.complex128])
def test_every_numeric_dtype_round_trips(np_type):
    value = (np.arange(24).reshape(2, 3, 4) % 5 - 1).astype(np_type)
    if np.dtype(np_type).kind == "c":
        value = value + 1j * value.astype(np_type)
    got = round_trip({"x": value})["x"]
    assert got.dtype == value.dtype and got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, value)


def test_strings_scalars_empty_slices_and_control_entries_round_trip():
    strings = np.array([[b"a", b""], [b"\x00\xff", "é".encode()]], dtype=object)
    grid = np.arange(30, dtype=np.float64).reshape(5, 6)
    values = {"s": strings, "s0": np.array(b"one", dtype=object), "scalar": np.int32(-3),
              "empty": np.zeros((0, 4), np.float32), "slice": grid[::2, 1::3],
              "transposed": grid.T, "control": None, "after": np.array([True, False])}
    got = round_trip(values)
    assert list(got) == list(values)
    assert got["control"] is None
    assert got["s"].dtype == object and got["s"].tolist() == strings.tolist()
    assert got["s0"].shape == () and got["s0"].item() == b"one"
    assert got["scalar"].shape == () and got["scalar"].dtype == np.int32 and got["scalar"] == -3
    assert got["empty"].shape == (0, 4) and got["empty"].dtype == np.float32
    for name in ("slice", "transposed", "after"):
        np.testing.assert_array_equal(got[name], values[name])


def test_inline_tensors_are_read_only_views_unless_writable():
    data = send({"x": np.ones(4, np.float32)})
    assert not receive(data)["x"].flags.writeable
    got = receive(data, writable=True)["x"]
    got[0] = 5  # a copy: the message is untouched
    assert receive(data)["x"][0] == 1


@pytest.mark.skipif(not shm.available, reason="needs Linux memfd and /proc")
def test_a_senders_own_array_arrives_read_only_and_writable_copies_it():
    own = shm.block_pool().empty((100_000,), np.float32)
    own[...] = 1.0
    lent = np.full(100_000, 2.0, np.float32)  # copied into a block: the receiver's to change
    data = send({"own": own, "lent": lent}, receiver=os.getpid())
    got = receive(data)
    assert not got["own"].flags.writeable and got["lent"].flags.writeable
    mine = receive(data, writable=True)["own"]
    mine[0] = 5.0  # a copy: the sender's array is untouched
    assert own[0] == 1.0 and (got["own"] == 1.0).all()


def test_a_release_from_the_garbage_collector_never_waits_for_the_lock():
    # A collection can run a finalizer while its thread is inside Releases.take.
    releases = wire.Releases()
    release = releases.callback(owner=7)

    def release_while_taking():
        with releases._lock:
            release(41)

    thread = threading.Thread(target=release_while_taking, daemon=True)
    thread.start()
    thread.join(5)
    assert not thread.is_alive()
    release(42)
    assert releases.take(7) == [41, 42] and releases.take(7) == ()


def test_float32_is_compressed_on_the_wire_and_restored():
    value = np.array([1.0, 0.5, 3.140625, -(2.0**100), 1.0 + 2**-12], np.float32)
    small = send({"x": value, "i": np.arange(3)}, float_type=dtypes.bfloat16)
    header, payload = wire.unframe(small, worker_pb2.TensorPush)
    assert len(payload) == 2 * value.size + 8 * 3  # 2 bytes a float; the ints untouched
    assert header.tensor[0].wire_dtype == _E.DT_BFLOAT16 and header.tensor[0].dtype == _E.DT_FLOAT
    assert not header.tensor[1].wire_dtype
    got = receive(small)
    assert got["x"].dtype == np.float32
    np.testing.assert_array_equal(got["x"][:4], value[:4])  # exact in bfloat16
    assert got["x"][4] == 1.0  # the low bits are gone
    np.testing.assert_array_equal(got["i"], np.arange(3))
    with pytest.warns(RuntimeWarning, match="overflow"):  # numpy's word on the cast
        half = round_trip({"x": value[:4]}, float_type=dtypes.float16)["x"]
    assert half.dtype == np.float32 and half[3] == -np.inf  # beyond float16's range


# Malformed input, as a broken or hostile peer would send it.

def framed(header, payload=b""):
    return wire.frame(header) + payload


def tensor(**fields):
    return worker_pb2.TensorPush(tensor=[dict(name="t", **fields)])


@pytest.mark.parametrize("data, message", [
    (b"", "0 bytes is too short for a header"),
    (b"\x01\x00", "2 bytes is too short"),
    (b"\xff\x00\x00\x00\x08\x01", "header of 255 bytes in a message of 6 bytes"),
    (b"\x02\x00\x00\x00\x1a\xff", "Malformed TensorPush"),  # a field cut short
    (b"\x03\x00\x00\x00\xff\xff\xff", "Malformed TensorPush"),  # not a protobuf at all
])
def test_a_malformed_frame_is_invalid_argument(data, message):
    with pytest.raises(InvalidArgumentError, match=message):
        wire.unframe(data, worker_pb2.TensorPush)


@pytest.mark.parametrize("fields, payload, message", [
    (dict(dtype=_E.DT_FLOAT, shape=[4], inline_bytes=16), b"\x00" * 8,
     r"Tensor t of shape \[4\] and dtype float32 needs 16 bytes; the message holds 8 more"),
    (dict(dtype=_E.DT_FLOAT, shape=[4], inline_bytes=8), b"\x00" * 16, "needs 16 bytes"),
    (dict(dtype=_E.DT_FLOAT, shape=[2, -2], inline_bytes=16), b"\x00" * 16,
     r"Tensor t has a negative dimension: \[2, -2\]"),
    (dict(dtype=_E.DT_FLOAT, shape=[1] * 65, inline_bytes=4), b"\x00" * 4,
     "65 dimensions; at most 64"),
    # A product that overflows int64 must not wrap round to a small size.
    (dict(dtype=_E.DT_INT8, shape=[2**32, 2**32], inline_bytes=0), b"",
     "needs 18446744073709551616 bytes"),
    (dict(dtype=_E.DT_INT8, shape=[0, 2**62, 2**62], inline_bytes=0), b"", "Tensor t: "),
    (dict(dtype=12345, shape=[1], inline_bytes=4), b"\x00" * 4, "unknown dtype 12345"),
    (dict(shape=[1], inline_bytes=4), b"\x00" * 4, "unknown dtype 0"),
    (dict(dtype=_E.DT_FLOAT, wire_dtype=999, shape=[1], inline_bytes=2), b"\x00" * 2,
     "unknown dtype 999"),
    (dict(dtype=_E.DT_RESOURCE, shape=[1], inline_bytes=8), b"\x00" * 8,
     "dtype resource cannot cross between tasks"),
    (dict(dtype=dtypes.float32._as_ref.as_datatype_enum, shape=[1], inline_bytes=4), b"\x00" * 4,
     "dtype float32_ref cannot cross"),
    (dict(dtype=_E.DT_STRING, shape=[1], inline_bytes=8), b"\x00" * 8,
     "dtype string has no raw bytes"),
    (dict(dtype=_E.DT_FLOAT, wire_dtype=_E.DT_STRING, shape=[1], inline_bytes=8),
     b"\x00" * 8, "dtype string has no raw bytes"),
    (dict(dtype=_E.DT_FLOAT, shape=[4], shared=dict(block_size=8)), b"",
     "Tensor t of 16 bytes does not fit its block of 8"),
    (dict(proto=dict(dtype=_E.DT_RESOURCE)), b"", "dtype resource cannot cross"),
    (dict(proto=dict(dtype=777)), b"", "unknown dtype 777"),
    (dict(proto=dict(dtype=_E.DT_FLOAT, tensor_content=b"\x00" * 4,
                     tensor_shape=dict(dim=[dict(size=2)]))), b"", "needs 8 bytes, got 4"),
    (dict(proto=dict(dtype=_E.DT_STRING, string_val=[b"a", b"b"],
                     tensor_shape=dict(dim=[dict(size=-1)]))), b"", "negative dimension"),
    (dict(proto=dict(dtype=_E.DT_STRING, string_val=[b"a", b"b"],
                     tensor_shape=dict(dim=[dict(size=3)]))), b"", "Tensor t: cannot reshape"),
])
def test_a_malformed_tensor_is_invalid_argument_naming_it(fields, payload, message):
    push, rest = wire.unframe(framed(tensor(**fields), payload), worker_pb2.TensorPush)
    with pytest.raises(InvalidArgumentError, match=message):
        wire.Incoming(rest).values(push.tensor)


def test_tensors_are_read_in_order_and_each_takes_only_its_bytes():
    push = worker_pb2.TensorPush(tensor=[
        dict(name="a", dtype=_E.DT_INT32, shape=[2], inline_bytes=8),
        dict(name="b", dtype=_E.DT_INT32, shape=[2], inline_bytes=8)])
    payload = np.array([1, 2, 3], np.int32).tobytes()  # "b" is cut short
    header, rest = wire.unframe(framed(push, payload), worker_pb2.TensorPush)
    incoming = wire.Incoming(rest)
    np.testing.assert_array_equal(incoming.value(header.tensor[0]), [1, 2])
    with pytest.raises(InvalidArgumentError, match="Tensor b .* needs 8 bytes; the message "
                       "holds 4 more"):
        incoming.value(header.tensor[1])


def test_a_message_over_the_limit_is_refused_naming_the_limit(monkeypatch):
    monkeypatch.setattr(wire, "MAX_MESSAGE_BYTES", 1000)
    assert len(send({"x": np.zeros(200, np.float32)})) < 1000
    with pytest.raises(InvalidArgumentError, match=r"A message of \d+ bytes exceeds the limit "
                       "of 1000 bytes"):
        send({"x": np.zeros(250, np.float32)})


def test_the_limit_can_be_lowered_from_the_environment(monkeypatch):
    assert wire.max_message_bytes() == wire.MAX_MESSAGE_BYTES == 2**31 - 1
    monkeypatch.setenv("DTFNB_MAX_MESSAGE_BYTES", "1000")
    assert wire.max_message_bytes() == 1000
    with pytest.raises(InvalidArgumentError, match="limit of 1000 bytes.*DTFNB_MAX_MESSAGE"):
        send({"x": np.zeros(250, np.float32)})
    for bad in ("0", "-5", "1e6", "lots", str(2**31)):
        monkeypatch.setenv("DTFNB_MAX_MESSAGE_BYTES", bad)
        with pytest.raises(ValueError, match="DTFNB_MAX_MESSAGE_BYTES must be a number of "
                           "bytes from 1 to 2147483647"):
            wire.max_message_bytes()
