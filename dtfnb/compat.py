"""`tf.compat`: text/bytes conversions as TensorFlow's (UTF-8 unless told otherwise)."""

import numbers
import os

import numpy as np

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """Converts `bytes_or_text` to bytes, encoding text with `encoding`."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """Converts `bytes_or_text` to a str, decoding bytes with `encoding`."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """Converts `value` to a str: bytes are decoded, anything else goes through `str()`."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """Converts a PathLike to its str path; anything else is returned as it is."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def __getattr__(name):
    """`tf.compat.v1` is dtfnb itself: TensorFlow 1's API is the one dtfnb has."""
    if name == "v1":
        import dtfnb
        return dtfnb
    raise AttributeError(f"module 'dtfnb.compat' has no attribute {name!r}")
