"""Parsing ops: decode_csv, decode_raw, string_to_number. Kernels in kernels/parsing.py."""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import check_type, graph_of, make_op, make_tensor
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
