"""Parsing kernels: DecodeCSV, DecodeRaw, StringToNumber (CPU; strings are bytes objects).

Numbers parse as TensorFlow 2.21's do (checked against it): surrounding whitespace is
allowed, a whitespace-only or partly numeric field is not; ints take a sign; floats also
take inf, infinity, nan and hex floats, and overflow to inf.
"""

import math
import operator
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


def _np_type(dtype):
    return object if dtype is dtypes.string else dtype.as_numpy_dtype


def _columns(columns, types, shape):
    """Python values per column as arrays of `shape`; out of float32's range is inf (the
    executor's errstate keeps numpy quiet about it)."""
    np_types = [_np_type(t) for t in types]
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


class _CsvDecoder:
    """What a DecodeCSV node needs from its attrs, worked out once per plan, and its
    per-record fast path.

    Most records are plain: no quotes, CR/LF, underscores or non-ASCII bytes, and no
    empty fields. Python's float() and int() read such a field exactly as TensorFlow
    does, and say no (ValueError) where it does, so plain records skip the per-field
    pattern matching. Anything else, and any failure, takes the full path, which gives
    TensorFlow's values and messages.
    """

    def __init__(self, attrs):
        self.types = attrs["OUT_TYPE"]
        delim = attrs["field_delim"].encode("utf-8", "surrogateescape")
        if len(delim) != 1:
            raise _error("field_delim should be only 1 char")
        self.delim, self._separator = delim[0], delim
        self.na_value = attrs["na_value"].encode("utf-8", "surrogateescape")
        self.cols = attrs.get("select_cols") or None
        self.use_quote = bool(attrs["use_quote_delim"])
        self.parsers = [_unchanged if t is dtypes.string else _parser(t.as_numpy_dtype)
                        for t in self.types]
        self._dtypes = [np.dtype(_np_type(t)) for t in self.types]
        self._plain = self.cols is None and not self.na_value
        self._unsafe = re.compile(rb'[_\r\n\x80-\xff"]' if self.use_quote else rb"[_\r\n\x80-\xff]")
        self._fast = [_unchanged if t is dtypes.string else _fast_parser(t.as_numpy_dtype)
                      for t in self.types]
        self._checked = ()

    def decode(self, records, defaults):
        if len(defaults) != len(self._checked) or not all(map(operator.is_, defaults,
                                                              self._checked)):
            _check_defaults(defaults)
            self._checked = defaults  # the same arrays every run when they are constants
        if records.shape == ():  # one record (a map function's, a reader's line)
            record = _as_bytes(records[()])
            values = self._plain_record(record)
            if values is not None:
                return [np.array(v, t) for v, t in zip(values, self._dtypes)]
            return _columns([[v] for v in self._record(record, 0, defaults)], self.types, ())
        columns = [[] for _ in self.types]
        for r, record in enumerate(records.reshape(-1)):
            record = _as_bytes(record)
            values = self._plain_record(record) or self._record(record, r, defaults)
            for column, value in zip(columns, values):
                column.append(value)
        return _columns(columns, self.types, records.shape)

    def _plain_record(self, record):
        """The record's values if it is plain and valid, else None (take the full path)."""
        if not self._plain or self._unsafe.search(record):
            return None
        fields = record.split(self._separator)
        if len(fields) != len(self._fast) or not all(fields):
            return None
        try:
            return [parse(field) for parse, field in zip(self._fast, fields)]
        except ValueError:
            return None

    def _record(self, record, r, defaults):
        fields = _split_fields(record, self.delim, self.use_quote, self.cols)
        if len(fields) != len(self.types):
            raise _error(f"Expect {len(self.types)} fields but have {len(fields)} in record {r}")
        for f, field in enumerate(fields):
            if not field or field == self.na_value:
                if not defaults[f].size:
                    raise _error(f"Field {f} is required but missing in record {r}!")
                yield _as_bytes(defaults[f].reshape(-1)[0])
                continue
            value = self.parsers[f](field)
            if value is None:
                raise _error(f"Field {f} in record {r} is not a valid "
                             f"{dtypes.c_type_name(self.types[f])}: {_text(field)}")
            yield value


def _unchanged(text):
    return text


def _fast_parser(np_type):
    """float() or int() for plain fields, with int ranges checked."""
    if np_type in _INT_RANGE:
        low, high = _INT_RANGE[np_type]

        def parse_int(text):
            value = int(text)
            if not low <= value <= high:
                raise ValueError(text)
            return value
        return parse_int
    return float


def _check_defaults(defaults):
    for f, default in enumerate(defaults):
        if default.ndim > 1:
            raise _error("Each record default should be at most rank 1")
        if default.size > 1:
            raise _error(f"There should only be 1 default per field but field {f} has "
                         f"{default.size}")


@register_kernel("DecodeCSV", device="CPU")
def _decode_csv(ctx, step, records, *defaults):
    decoder = ctx.state.get("decoder")
    if decoder is None:
        decoder = ctx.state["decoder"] = _CsvDecoder(ctx.attrs)
    outputs = decoder.decode(records, defaults)
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
