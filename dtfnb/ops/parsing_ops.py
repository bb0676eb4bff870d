"""Parsing ops: decode_csv, decode_raw, string_to_number, and parse_example of
tf.train.Example records. Kernels in kernels/parsing.py."""

import collections
import re

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, as_shape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, constant_op, math_ops
from dtfnb.ops.building import check_type, graph_of, make_op, make_tensor
from dtfnb.ops.check_ops import Assert
from dtfnb.ops.control_flow_ops import with_dependencies
from dtfnb.ops.shape_util import shape_error

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_RAW_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint16,
              dtypes.uint8, dtypes.int16, dtypes.int8, dtypes.int64, dtypes.complex64,
              dtypes.complex128, dtypes.bool_, dtypes.bfloat16)
_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.uint32,
                 dtypes.uint64)


def _decode_csv_shape(op):
    for default in op.inputs[1:]:
        rank = default.shape.ndims
        if rank is not None and rank > 1:
            raise shape_error(op, f"Shape must be at most rank 1 but is rank {rank}")
        if rank == 1 and (default.shape[0].value or 0) > 1:
            raise shape_error(op, "Shape of a default must be a length-0 or length-1 vector, "
                                  "or a scalar.")
    return [op.inputs[0].shape] * (len(op.inputs) - 1)


def _decode_raw_shape(op):
    shape = op.inputs[0].shape
    return [unknown_shape() if shape.ndims is None else shape.concatenate(TensorShape([None]))]


define_op("DecodeCSV", _decode_csv_shape)
define_op("DecodeRaw", _decode_raw_shape)
define_op("StringToNumber", lambda op: [op.inputs[0].shape])
for _op in ("DecodeCSV", "DecodeRaw", "StringToNumber"):
    NotDifferentiable(_op)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Splits CSV lines into one tensor per column, typed by each column's default.

    A default is a scalar or a 1-element vector (used for empty fields), or an empty
    vector (the field is required). Returns a list of tensors shaped like `records`.
    """
    if not isinstance(record_defaults, (list, tuple)):
        raise TypeError(f"Expected list for 'record_defaults' argument to 'DecodeCSV' Op, "
                        f"not {record_defaults}.")
    if select_cols is not None:
        if any(a >= b for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    with graph_of(records, record_defaults).name_scope(name or "DecodeCSV") as scope:
        records = convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = [convert_to_tensor(d, name=f"record_defaults_{i}")
                    for i, d in enumerate(record_defaults)]
        types = [check_type(d.dtype, _CSV_TYPES, "record_defaults") for d in defaults]
        attrs = {"OUT_TYPE": types, "field_delim": field_delim,
                 "use_quote_delim": use_quote_delim, "na_value": na_value,
                 "select_cols": list(select_cols or [])}
        return list(make_op("DecodeCSV", [records, *defaults], types, name=scope,
                            attrs=attrs).outputs)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None,
               bytes=None):  # noqa: A002 - TensorFlow 1's older name for input_bytes
    """Reinterprets each string's bytes as a vector of `out_type`: shape `input.shape + [n]`."""
    if bytes is not None:
        input_bytes = bytes
    with graph_of(input_bytes).name_scope(name or "DecodeRaw") as scope:
        value = convert_to_tensor(input_bytes, dtype=dtypes.string, name="bytes")
        dtype = check_type(out_type, _RAW_TYPES, "out_type")
        return make_tensor("DecodeRaw", [value], dtype, name=scope,
                           attrs={"out_type": dtype, "little_endian": bool(little_endian)})


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    """Parses each string as a number of `out_type`."""
    value = convert_to_tensor(string_tensor, dtype=dtypes.string)
    dtype = check_type(out_type, _NUMBER_TYPES, "out_type")
    return make_tensor("StringToNumber", [value], dtype, name=name or "StringToNumber",
                       attrs={"out_type": dtype})


# -- tf.train.Example records -----------------------------------------------------------

class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values: parsed into a SparseTensor."""


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of exactly `shape` values (`default_value` where it is missing): parsed
    into a tensor of that shape."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


def _parse_example_shapes(op):
    """Per sparse key: indices [?, rank + 1], values [?], dense_shape [rank + 1]; per
    dense key: the batch's shape followed by its own."""
    batch = op.inputs[0].shape
    num_sparse = op.get_attr("num_sparse")
    if batch.ndims is None:
        return [unknown_shape()] * len(op.outputs)
    rank = batch.ndims + 1
    sparse = ([TensorShape([None, rank])] * num_sparse + [TensorShape([None])] * num_sparse
              + [TensorShape([rank])] * num_sparse)
    dense = [batch.concatenate(shape) for shape in op.get_attr("dense_shapes")]
    return sparse + dense


define_op("ParseExampleV2", _parse_example_shapes)
NotDifferentiable("ParseExampleV2")

_EXAMPLE_TYPES = (dtypes.float32, dtypes.int64, dtypes.string)


def _feature_spec(features):
    """(sparse keys and types, dense keys, types, shapes and defaults) of a feature dict,
    keys sorted, with TensorFlow's checks."""
    sparse_keys, sparse_types = [], []
    dense_keys, dense_types, dense_shapes, defaults = [], [], [], {}
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            if not feature.dtype:
                raise ValueError(f"Missing type for feature {key}. Received "
                                 f"feature={feature}")
            sparse_keys.append(key)
            sparse_types.append(dtypes.as_dtype(feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            if not feature.dtype:
                raise ValueError(f"Missing type for feature {key}. Received "
                                 f"feature={feature}.")
            if feature.shape is None:
                raise ValueError(f"Missing shape for feature {key}. Received "
                                 f"feature={feature}.")
            shape = as_shape(feature.shape)
            if feature.shape and shape.ndims and shape[0].value is None:
                raise ValueError(f"First dimension of shape for feature {key} unknown. "
                                 f"Consider using FixedLenSequenceFeature. Received "
                                 f"feature={feature}.")
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known "
                                 f"but received {feature.shape!s}.")
            dense_keys.append(key)
            dense_types.append(dtypes.as_dtype(feature.dtype))
            dense_shapes.append(shape)
            if feature.default_value is not None:
                defaults[key] = feature.default_value
        else:
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'"
                             + (" (dtfnb parses VarLenFeature and FixedLenFeature)"
                                if type(feature).__name__.endswith("Feature") else ""))
    return sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes, defaults


def _dense_default(key, shape, dtype, default):
    """The default tensor ParseExampleV2 takes for a dense key (an empty one: required)."""
    if default is None:
        return constant_op.constant([], dtype=dtype)
    if isinstance(default, Tensor):
        return default
    name = "key_" + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
    return array_ops.reshape(convert_to_tensor(default, dtype=dtype, name=name), shape)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a vector of serialized tf.train.Example records into a dict: a
    SparseTensor (rows: the records) for each VarLenFeature, a tensor of shape
    [batch] + shape for each FixedLenFeature. A record that lacks a feature with no
    default, or holds values of another type or count, fails the step, naming it."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    (sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes,
     defaults) = _feature_spec(features)
    for attr, types in (("sparse_types", sparse_types), ("Tdense", dense_types)):
        for dtype in types:
            check_type(dtype, _EXAMPLE_TYPES, attr)
    graph = graph_of(serialized)
    with graph.as_default(), graph.name_scope(name or "ParseExample"):
        names = [] if example_names is None else example_names
        serialized = convert_to_tensor(serialized, name="serialized")
        dense_defaults = [_dense_default(k, s, t, defaults.get(k))
                          for k, s, t in zip(dense_keys, dense_shapes, dense_types)]
        with graph.name_scope(name or "ParseExampleV2") as scope:
            inputs = [serialized,
                      convert_to_tensor(names, dtype=dtypes.string, name="names"),
                      convert_to_tensor(sparse_keys, dtype=dtypes.string, name="sparse_keys"),
                      convert_to_tensor(dense_keys, dtype=dtypes.string, name="dense_keys"),
                      convert_to_tensor([], dtype=dtypes.string, name="ragged_keys"),
                      *dense_defaults]
            n = len(sparse_keys)
            outputs = make_op(
                "ParseExampleV2", inputs,
                [dtypes.int64] * n + sparse_types + [dtypes.int64] * n + dense_types,
                name=scope, attrs={
                    "Tdense": dense_types, "num_sparse": n, "sparse_types": sparse_types,
                    "ragged_value_types": [], "ragged_split_types": [],
                    "dense_shapes": dense_shapes}).outputs
        sparse = [SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
                  for i in range(n)]
        return dict(zip(sparse_keys + dense_keys, sparse + list(outputs[3 * n:])))


def parse_single_example(serialized, features, name=None, example_names=None):
    """parse_example of one serialized record (a scalar): no batch dimension."""
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    graph = graph_of(serialized)
    with graph.as_default(), graph.name_scope(name or "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, name="serialized")
        rank = serialized.shape.ndims
        if rank is None:
            check = Assert(math_ops.equal(array_ops.rank(serialized), 0),
                           ["Input serialized must be a scalar"], name="SerializedIsScalar")
            serialized = with_dependencies([check], serialized, name="SerializedDependencies")
            serialized.set_shape([])
        elif rank != 0:
            raise ValueError("Input serialized must be a scalar")
        return parse_example(serialized, features, name, example_names)
