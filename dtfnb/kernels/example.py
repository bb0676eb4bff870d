"""ParseExampleV2: serialized tf.train.Example records into the values of their features,
with TensorFlow's checks and messages (CPU; strings are bytes objects)."""

import numpy as np
from google.protobuf.message import DecodeError

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.object_arrays import object_vector
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos.example_pb2 import Example

# A feature's kind, the dtype it holds, and how TensorFlow's counts name its values.
_KINDS = {"float_list": (dtypes.float32, "float"), "int64_list": (dtypes.int64, "int64"),
          "bytes_list": (dtypes.string, "bytes")}


def _error(message):
    return InvalidArgumentError(None, None, message)


def _text(value):
    return value.decode(errors="backslashreplace") if isinstance(value, bytes) else str(value)


def _records(serialized):
    """Each record as an Example, TensorFlow's error for one that does not parse."""
    examples = []
    for record in serialized.reshape(-1):
        example = Example()
        try:
            example.ParseFromString(record)
        except DecodeError:
            raise _error(f"Could not parse example input, value: '{_text(record)}'") from None
        examples.append(example)
    return examples


def _values(feature):
    """(kind, values) of a feature, or None for one with no kind (as if missing)."""
    kind = feature.WhichOneof("kind")
    return None if kind is None else (kind, list(getattr(feature, kind).value))


@register_kernel("ParseExampleV2", device="CPU")
def _parse_example(ctx, step, serialized, names, sparse_keys, dense_keys, ragged_keys,
                   *dense_defaults):
    serialized = np.asarray(serialized, dtype=object)
    examples = _records(serialized)
    names = [_text(n) for n in np.asarray(names, dtype=object).reshape(-1)]

    def found(i, key):
        feature = examples[i].features.feature.get(key)
        return None if feature is None else _values(feature)

    def where(i, key=None):
        """How a message names record `i` (and `key`): TensorFlow's single-record parser
        names neither record nor index."""
        if serialized.ndim == 0:
            return f"Key: {key}." if key is not None else ""
        name = names[i] if names else "<unknown>"
        return f"Name: {name}, Key: {key}, Index: {i}." if key is not None else f"Name: {name}, "

    sparse_types = ctx.attrs["sparse_types"]
    sparse = [_sparse(serialized.shape, len(examples), _text(key), dtype, found, where)
              for key, dtype in zip(np.asarray(sparse_keys).reshape(-1), sparse_types)]
    dense = [_dense(serialized.shape, len(examples), _text(key), dtype, shape, default,
                    found, where)
             for key, dtype, shape, default in zip(
                 np.asarray(dense_keys).reshape(-1), ctx.attrs["Tdense"],
                 ctx.attrs["dense_shapes"], dense_defaults)]
    indices, values, shapes = zip(*sparse) if sparse else ((), (), ())
    outputs = (*indices, *values, *shapes, *dense)
    return outputs[0] if len(outputs) == 1 else outputs


def _sparse(batch_shape, count, key, dtype, found, where):
    """A VarLenFeature's indices, values and dense_shape over the records."""
    rows = []
    for i in range(count):
        values = found(i, key)
        if values is None:
            rows.append([])
            continue
        kind, items = values
        if _KINDS[kind][0] != dtype:
            raise _error(f"{where(i, key)}  Data types don't match. Expected type: "
                         f"{dtypes.c_type_name(dtype)}, Actual type: "
                         f"{dtypes.c_type_name(_KINDS[kind][0])}")
        rows.append(items)
    longest = max((len(r) for r in rows), default=0)
    positions = [(i, j) for i, row in enumerate(rows) for j in range(len(row))]
    indices = np.array(positions, dtype=np.int64).reshape(-1, 2)
    if not batch_shape:   # one record: no row index
        indices = indices[:, 1:]
    values = _array([v for row in rows for v in row], dtype)
    return indices, values, np.array([*batch_shape, longest], dtype=np.int64)


def _dense(batch_shape, count, key, dtype, shape, default, found, where):
    """A FixedLenFeature's values over the records, each `shape`, `default` where one is
    missing (an empty default: the feature is required)."""
    shape = [int(d) for d in shape]
    size = int(np.prod(shape))
    out = []
    for i in range(count):
        values = found(i, key)
        if values is None:
            if np.size(default) == 0:
                raise _error(f"{where(i)}Feature: {key} (data type: "
                             f"{dtypes.c_type_name(dtype)}) is required but could not be "
                             f"found.")
            out.append(np.asarray(default).reshape(shape))
            continue
        kind, items = values
        if _KINDS[kind][0] != dtype:
            raise _error(f"{where(i, key)}  Data types don't match. Data type: "
                         f"{dtypes.c_type_name(_KINDS[kind][0])} but expected type: "
                         f"{dtypes.c_type_name(dtype)}")
        if len(items) != size:
            raise _error(f"{where(i, key)}  " + _count_message(kind, len(items), shape, size,
                                                                single=not batch_shape))
        out.append(_array(items, dtype).reshape(shape))
    stacked = np.stack(out) if out else _array([], dtype).reshape([0, *shape])
    return stacked.reshape([*batch_shape, *shape])


def _array(items, dtype):
    """A feature's values as an array of `dtype` (strings: bytes objects)."""
    if dtype == dtypes.string:
        return object_vector(items)
    return np.array(items, dtype=dtype.as_numpy_dtype)


def _count_message(kind, count, shape, size, single):
    """TensorFlow's words for a FixedLenFeature of another count of values: its
    single-record parser reports the list it could not read whole."""
    if not single:
        return (f"Number of {_KINDS[kind][1]} values != expected.  Values size: {count} but "
                f"output shape: [{','.join(map(str, shape))}]")
    if kind == "bytes_list" and count > size:
        return "Can't parse serialized Example: Parsing bytes_list failed."
    return f"Can't parse serialized Example: Some {kind} slice was not parsed."
