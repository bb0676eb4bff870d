"""ndarray ⇄ TensorProto and Python value ⇄ AttrValue: the only encoding on the wire.

Numeric tensors travel as dtype + shape + raw bytes; strings as a list of bytes.
Nothing is pickled, so a peer can send only data, never code. Byte order is the
host's: every platform dtfnb runs on is little-endian.
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.object_arrays import object_vector
from dtfnb.base.shapes import TensorShape
from dtfnb.protos import graph_pb2, tensor_pb2


def to_numpy(value):
    """Converts a fetched or fed value to a host ndarray (strings become object arrays)."""
    if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):
        value = value.get()
    return np.asarray(value)


def tensor_to_proto(value, dtype=None):
    """Encodes `value` (anything numpy can take) as a TensorProto of `dtype` (default: the array's).
    """
    array = to_numpy(value)
    dtype = dtypes.as_dtype(dtype if dtype is not None else array.dtype)
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum,
                                   tensor_shape=TensorShape(array.shape).as_proto())
    if dtype.base_dtype is dtypes.string:
        proto.string_val.extend(
            v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array, dtype=dtype.as_numpy_dtype).tobytes()
    return proto


def proto_to_tensor(proto):
    """Decodes a TensorProto into a host ndarray (strings become an object array of bytes)."""
    dtype = dtypes.as_dtype(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if dtype.base_dtype is dtypes.string:
        return object_vector(list(proto.string_val)).reshape(shape)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if len(proto.tensor_content) != count * np_dtype.itemsize:
        raise ValueError(
            f"TensorProto of shape {list(shape)} and dtype {dtype.name} needs "
            f"{count * np_dtype.itemsize} bytes, got {len(proto.tensor_content)}")
    return np.frombuffer(proto.tensor_content, dtype=np_dtype).reshape(shape)


def _scalar_field(value):
    if isinstance(value, bool):
        return "b", value
    if isinstance(value, (int, np.integer)):
        return "i", int(value)
    if isinstance(value, (float, np.floating)):
        return "f", float(value)
    if isinstance(value, str):
        return "s", value.encode()
    if isinstance(value, bytes):
        return "s", value
    if isinstance(value, dtypes.DType):
        return "type", value.as_datatype_enum
    if isinstance(value, TensorShape):
        return "shape", value.as_proto()
    if isinstance(value, np.ndarray):
        return "tensor", tensor_to_proto(value)
    raise TypeError(f"Cannot encode attribute value {value!r}")


def attr_to_proto(value):
    """Encodes an op attribute (int, float, bool, str, DType, TensorShape, ndarray, or a list of one
    kind) as an AttrValue."""
    attr = graph_pb2.AttrValue()
    if isinstance(value, (list, tuple)):
        attr.list.SetInParent()
        for item in value:
            field, encoded = _scalar_field(item)
            target = getattr(attr.list, field)
            if field in ("shape", "tensor"):
                target.add().CopyFrom(encoded)
            else:
                target.append(encoded)
        return attr
    field, encoded = _scalar_field(value)
    if field in ("shape", "tensor"):
        getattr(attr, field).CopyFrom(encoded)
    else:
        setattr(attr, field, encoded)
    return attr


_DECODE = {
    "s": lambda v: v.decode("utf-8", "surrogateescape"),
    "i": int,
    "f": float,
    "b": bool,
    "type": dtypes.as_dtype,
    "shape": TensorShape,
    "tensor": proto_to_tensor,
}


def attr_from_proto(attr):
    """Decodes an AttrValue into the Python value `attr_to_proto` took (None if unset)."""
    field = attr.WhichOneof("value")
    if field is None:
        return None
    if field == "list":
        for name in ("s", "i", "f", "b", "type", "shape", "tensor"):
            items = getattr(attr.list, name)
            if len(items):
                return [_DECODE[name](v) for v in items]
        return []
    return _DECODE[field](getattr(attr, field))
