"""TensorFlow's DType: one object per element type (and per reference type)."""

import ml_dtypes
import numpy as np

from dtfnb.protos import tensor_pb2

_REF_OFFSET = 100


class DType:
    """An element type: `tf.float32`, `tf.int32`, …; `float32_ref` for ref variables."""

    __slots__ = ("_enum", "_np", "_name")

    def __init__(self, enum, np_type, name):
        self._enum = enum
        self._np = np_type
        self._name = name

    @property
    def name(self):
        """The name of the dtype ("float32", "float32_ref")."""
        return self._name

    @property
    def as_datatype_enum(self):
        """The `types_pb2.DataType` enum value of this dtype."""
        return self._enum

    @property
    def as_numpy_dtype(self):
        """The numpy type this dtype's values have (`object` for strings)."""
        return self._np

    @property
    def is_ref_dtype(self):
        """Whether this is a reference dtype, the dtype of a variable's output."""
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self):
        """The non-reference dtype of this dtype (itself if it is not a reference)."""
        return _BY_ENUM[self._enum - _REF_OFFSET] if self.is_ref_dtype else self

    @property
    def _as_ref(self):
        return self if self.is_ref_dtype else _BY_ENUM[self._enum + _REF_OFFSET]

    @property
    def is_floating(self):
        """Whether this is a (non-quantized) floating point dtype."""
        return self.base_dtype._name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self):
        """Whether this is a (non-quantized) integer dtype."""
        return self.base_dtype._name in _INTEGER_NAMES

    @property
    def is_unsigned(self):
        """Whether this is an unsigned integer dtype."""
        return self.base_dtype._name.startswith("uint")

    @property
    def is_bool(self):
        """Whether this is the bool dtype."""
        return self.base_dtype is bool_

    @property
    def is_complex(self):
        """Whether this is a complex floating point dtype."""
        return self.base_dtype._name.startswith("complex")

    @property
    def is_numpy_compatible(self):
        """Whether values of this dtype are numpy arrays (not resource or variant handles)."""
        return self.base_dtype not in (resource, variant)

    @property
    def real_dtype(self):
        """The dtype of the real part of this dtype: float32 for complex64, else itself."""
        return {"complex64": float32, "complex128": float64}.get(self.base_dtype._name, self)

    @property
    def size(self):
        """The size of one element in bytes (0 for strings)."""
        return np.dtype(self._np).itemsize if self._np is not object else 0

    @property
    def min(self):
        """The smallest value representable in this dtype."""
        info = np.finfo(self._np) if self.is_floating else np.iinfo(self._np)
        return info.min

    @property
    def max(self):
        """The largest value representable in this dtype."""
        info = np.finfo(self._np) if self.is_floating else np.iinfo(self._np)
        return info.max

    def is_compatible_with(self, other):
        """Whether a value of dtype `other` can be given where this dtype is expected."""
        return self.base_dtype is as_dtype(other).base_dtype

    def __repr__(self):
        return f"tf.{self._name}"

    def __str__(self):
        return f"<dtype: '{self._name}'>"

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._enum

    def __reduce__(self):
        return as_dtype, (self._name,)


_INTEGER_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
_E = tensor_pb2.DataType
_SPECS = [
    (_E.DT_HALF, np.float16, "float16"),
    (_E.DT_BFLOAT16, ml_dtypes.bfloat16, "bfloat16"),
    (_E.DT_FLOAT, np.float32, "float32"),
    (_E.DT_DOUBLE, np.float64, "float64"),
    (_E.DT_INT8, np.int8, "int8"),
    (_E.DT_INT16, np.int16, "int16"),
    (_E.DT_INT32, np.int32, "int32"),
    (_E.DT_INT64, np.int64, "int64"),
    (_E.DT_UINT8, np.uint8, "uint8"),
    (_E.DT_UINT16, np.uint16, "uint16"),
    (_E.DT_UINT32, np.uint32, "uint32"),
    (_E.DT_UINT64, np.uint64, "uint64"),
    (_E.DT_BOOL, np.bool_, "bool"),
    (_E.DT_STRING, object, "string"),
    (_E.DT_COMPLEX64, np.complex64, "complex64"),
    (_E.DT_COMPLEX128, np.complex128, "complex128"),
    (_E.DT_RESOURCE, object, "resource"),
    (_E.DT_VARIANT, object, "variant"),
]
_BY_ENUM = {}
_BY_NAME = {}
for _enum, _np_type, _name in _SPECS:
    for _dtype in (DType(_enum, _np_type, _name),
                   DType(_enum + _REF_OFFSET, _np_type, _name + "_ref")):
        _BY_ENUM[_dtype.as_datatype_enum] = _dtype
        _BY_NAME[_dtype.name] = _dtype

float16 = half = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
float32 = _BY_NAME["float32"]
float64 = double = _BY_NAME["float64"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
bool_ = _BY_NAME["bool"]
string = _BY_NAME["string"]
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]
resource = _BY_NAME["resource"]
variant = _BY_NAME["variant"]

_BY_NUMPY = {np.dtype(np_type): _BY_NAME[name]
             for _, np_type, name in _SPECS if np_type is not object}
_BY_PYTHON = {float: float32, int: int32, bool: bool_, str: string, bytes: string,
              complex: complex128}


def as_dtype(type_value):
    """Converts a DType, a name, an enum value, a numpy dtype or a Python type to a DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        if type_value in _BY_NAME:
            return _BY_NAME[type_value]
    elif isinstance(type_value, int) and not isinstance(type_value, bool):
        if type_value in _BY_ENUM:
            return _BY_ENUM[type_value]
    elif type_value in _BY_PYTHON:
        return _BY_PYTHON[type_value]
    else:
        try:
            np_type = np.dtype(type_value)
        except TypeError:
            np_type = None
        if np_type is not None:
            if np_type in _BY_NUMPY:
                return _BY_NUMPY[np_type]
            if np_type.kind in "SUO":
                return string
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


def c_type_name(dtype):
    """The name TensorFlow's runtime messages use: 'float' for float32, 'double', 'half'…"""
    name = as_dtype(dtype).base_dtype.name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)
