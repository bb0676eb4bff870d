"""Parsing kernels: DecodeCSV, DecodeRaw, StringToNumber (CPU; strings are bytes objects).

Numbers parse as TensorFlow 2.21's do (checked against it): surrounding whitespace is
allowed, a whitespace-only or partly numeric field is not; ints take a sign; floats also
take inf, infinity, nan and hex floats, and overflow to inf.
"""

import math
import re
import sys

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import register_kernel

_INT = re.compile(rb"\s*[+-]?\d+\s*")
_FLOAT = re.compile(rb"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf(?:inity)?|nan)\s*",
                    re.IGNORECASE)
_HEX_FLOAT = re.compile(rb"\s*[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?\s*",
                        re.IGNORECASE)
_INT_RANGE = {np.int32: (-2**31, 2**31 - 1), np.int64: (-2**63, 2**63 - 1),
              np.uint32: (0, 2**32 - 1), np.uint64: (0, 2**64 - 1)}
_QUOTE = ord('"')
_CRLF = b"\r\n"


def _error(message):
    return InvalidArgumentError(None, None, message)


def _as_bytes(value):
    """A string element as bytes (a fed Python str arrives as str)."""
    return value.encode() if isinstance(value, str) else value


def _parser(np_type):
    """A function giving a bytes field as a Python number fit for `np_type`, or None where
    TensorFlow would reject it. Values are collected per column and converted at once:
    per-value numpy scalars and error states cost more than the parsing."""
    if np_type in _INT_RANGE:
        low, high = _INT_RANGE[np_type]

        def parse_int(text):
            if _INT.fullmatch(text):
                value = int(text)
                if low <= value <= high:
                    return value
            return None
        return parse_int

    def parse_float(text):
        if _FLOAT.fullmatch(text):
            return float(text)
        if not _HEX_FLOAT.fullmatch(text):
            return None
        try:
            return float.fromhex(text.decode())
        except OverflowError:
            return -math.inf if text.lstrip().startswith(b"-") else math.inf
    return parse_float


def _columns(columns, types, shape):
    """Python values per column as arrays of `shape`; out of float32's range is inf."""
    np_types = [object if t is dtypes.string else t.as_numpy_dtype for t in types]
    with np.errstate(over="ignore"):
        if shape == ():  # one record (a map function's): no reshapes
            return [np.array(values[0], t) for values, t in zip(columns, np_types)]
        return [np.array(values, t).reshape(shape) for values, t in zip(columns, np_types)]


def _split_fields(record, delim, use_quote, cols):
    """TensorFlow's ExtractFields: quoted fields, "" escapes, CR/LF between fields, select_cols."""
    if not (use_quote and b'"' in record) and not any(c in record for c in _CRLF):
        fields = record.split(bytes([delim])) if record else []
        return fields if cols is None else [fields[c] for c in cols if c < len(fields)]
    fields, i, n, parsed = [], 0, len(record), 0
    while i < n:
        if record[i] in _CRLF:
            i += 1
            continue
        include = cols is None or cols[len(fields)] == parsed
        if use_quote and record[i] == _QUOTE:
            i += 1
            chunks = []
            while i < n - 1 and (record[i] != _QUOTE or record[i + 1] != delim):
                if record[i] != _QUOTE:
                    chunks.append(record[i:i + 1])
                    i += 1
                elif record[i + 1] == _QUOTE:
                    chunks.append(b'"')
                    i += 2
                else:
                    raise _error("Quote inside a string has to be escaped by another quote")
            if not (i < n and record[i] == _QUOTE and (i == n - 1 or record[i + 1] == delim)):
                raise _error("Quoted field has to end with quote followed by delim or end")
            field = b"".join(chunks)
            i += 2
        else:
            start = i
            while i < n and record[i] != delim:
                if (use_quote and record[i] == _QUOTE) or record[i] in _CRLF:
                    raise _error("Unquoted fields cannot have quotes/CRLFs inside")
                i += 1
            field = record[start:i]
            i += 1
        parsed += 1
        if include:
            fields.append(field)
            if cols is not None and len(fields) == len(cols):
                return fields
    if record[-1:] == bytes([delim]) and (cols is None or cols[len(fields)] == parsed):
        fields.append(b"")  # a trailing delimiter ends with an empty field
    return fields


def _csv_options(attrs):
    """What a DecodeCSV node needs from its attrs, worked out once per plan."""
    types = attrs["OUT_TYPE"]
    delim = attrs["field_delim"].encode("utf-8", "surrogateescape")
    if len(delim) != 1:
        raise _error("field_delim should be only 1 char")
    parsers = [(lambda text: text) if t is dtypes.string else _parser(t.as_numpy_dtype)
               for t in types]
    return (types, delim[0], attrs["na_value"].encode("utf-8", "surrogateescape"),
            attrs.get("select_cols") or None, bool(attrs["use_quote_delim"]), parsers)


@register_kernel("DecodeCSV", device="CPU")
def _decode_csv(ctx, step, records, *defaults):
    options = ctx.state.get("options")
    if options is None:
        options = ctx.state["options"] = _csv_options(ctx.attrs)
    types, delim, na_value, cols, use_quote, parsers = options
    for f, default in enumerate(defaults):
        if default.ndim > 1:
            raise _error("Each record default should be at most rank 1")
        if default.size > 1:
            raise _error(f"There should only be 1 default per field but field {f} has "
                         f"{default.size}")
    columns = [[] for _ in types]
    for r, record in enumerate(records.reshape(-1)):
        fields = _split_fields(_as_bytes(record), delim, use_quote, cols)
        if len(fields) != len(types):
            raise _error(f"Expect {len(types)} fields but have {len(fields)} in record {r}")
        for f, field in enumerate(fields):
            if not field or field == na_value:
                if not defaults[f].size:
                    raise _error(f"Field {f} is required but missing in record {r}!")
                value = _as_bytes(defaults[f].reshape(-1)[0])
            else:
                value = parsers[f](field)
                if value is None:
                    raise _error(f"Field {f} in record {r} is not a valid "
                                 f"{dtypes.c_type_name(types[f])}: {_text(field)}")
            columns[f].append(value)
    outputs = _columns(columns, types, records.shape)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _text(field):
    return field.decode("utf-8", "replace")


@register_kernel("StringToNumber", device="CPU")
def _string_to_number(ctx, step, strings):
    dtype = ctx.attrs["out_type"]
    parse = _parser(dtype.as_numpy_dtype)
    values = []
    for text in strings.reshape(-1):
        text = _as_bytes(text)
        value = parse(text)
        if value is None:
            raise _error(f"StringToNumberOp could not correctly convert string: {_text(text)}")
        values.append(value)
    return _columns([values], [dtype], strings.shape)[0]


@register_kernel("DecodeRaw", device="CPU")
def _decode_raw(ctx, step, strings):
    dtype = ctx.attrs["out_type"]
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    flat = [_as_bytes(item) for item in strings.reshape(-1)]
    size = len(flat[0]) if flat else 0
    for i, item in enumerate(flat):
        if len(item) != size:
            raise _error(f"DecodeRaw requires input strings to all be the same size, but "
                         f"element {i} has size {size} != {len(item)}")  # sic
    if size % np_dtype.itemsize:
        raise _error(f"Input to DecodeRaw has length {size} that is not a multiple of "
                     f"{np_dtype.itemsize}, the size of {dtypes.c_type_name(dtype)}")
    values = np.frombuffer(b"".join(flat), np_dtype)
    if bool(ctx.attrs["little_endian"]) != (sys.byteorder == "little"):
        values = values.byteswap()
    return values.reshape(strings.shape + (size // np_dtype.itemsize,))
