"""A node in one line, as TensorFlow's errors show it (its SummarizeNodeDef):

    {{node add}} = AddV2[T=DT_FLOAT](a, b, ^c)

the name, the op type, the attrs sorted by name with their values as TensorFlow prints
AttrValues, the device as a last `_device` attr when there is one, then the inputs.
"""

import numpy as np

from dtfnb.base import codec
from dtfnb.protos import tensor_pb2

_MAX_STRING = 80  # longer strings keep their first and last 10 characters


def summarize_node(op):
    """TensorFlow's one-line summary of a node for error messages:
    `{{node name}} = Op[attr=value, ...](inputs)`.
    """
    node = op.node_def
    # dtfnb's own `_` attrs are bookkeeping; TensorFlow's builders add theirs (colocation)
    # only after the shape function ran, so a graph-construction error never shows any.
    attrs = ", ".join(f"{name}={summarize_attr_value(node.attr[name])}"
                      for name in sorted(node.attr) if not name.startswith("_"))
    if node.device:
        attrs += (", " if attrs else "") + f'_device="{node.device}"'
    return f"{{{{node {node.name}}}}} = {node.op}[{attrs}]({', '.join(node.input)})"


def summarize_attr_value(attr):
    """An attr value as TensorFlow's SummarizeAttrValue writes it in node summaries."""
    kind = attr.WhichOneof("value")
    if kind == "list":
        for field in ("s", "i", "f", "b", "type", "shape", "tensor"):
            items = getattr(attr.list, field)
            if items:
                return "[" + ", ".join(_summarize(field, v) for v in items) + "]"
        return "[]"
    if kind is None:
        return "<Unknown AttrValue type>"
    return _summarize(kind, getattr(attr, kind))


def _summarize(kind, value):
    if kind == "s":
        return _summarize_string(value)
    if kind == "f":
        return format_float(value)
    if kind == "b":
        return "true" if value else "false"
    if kind == "type":
        return _type_name(value)
    if kind == "shape":
        return _shape([d.size for d in value.dim], value.unknown_rank)
    if kind == "tensor":
        return _summarize_tensor(value)
    return str(value)


def _summarize_string(value):
    escaped = "".join(_escape(b) for b in value)
    if len(escaped) >= _MAX_STRING:
        escaped = escaped[:10] + "..." + escaped[-10:]
    return f'"{escaped}"'


_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
            ord("'"): "\\'", ord("\\"): "\\\\"}


def _escape(byte):
    """One byte as absl's CEscape writes it: C escapes, octal outside printable ASCII."""
    if byte in _ESCAPES:
        return _ESCAPES[byte]
    return chr(byte) if 0x20 <= byte < 0x7f else f"\\{byte:03o}"


def format_float(value):
    """A float32 as TensorFlow's StrCat writes it: 6 significant digits, 9 if 6 lose it."""
    short = f"{value:.6g}"
    return short if np.float32(short) == np.float32(value) else f"{value:.9g}"


def _type_name(enum):
    if enum > 100:  # a reference type
        return tensor_pb2.DataType.Name(enum - 100) + "_REF"
    return tensor_pb2.DataType.Name(enum)


def _shape(dims, unknown_rank):
    if unknown_rank:
        return "<unknown>"
    return "[" + ",".join("?" if d < 0 else str(d) for d in dims) + "]"


def _summarize_tensor(proto):
    """Tensor::DebugString: the dtype, the shape and the first three values."""
    value = codec.proto_to_tensor(proto)
    items = [_tensor_item(v) for v in value.ravel()[:3].tolist()]
    more = "..." if value.size > 3 else ""
    return (f"Tensor<type: {_type_name(proto.dtype)[3:].lower()} shape: "
            f"{_shape(list(value.shape), False)} values: {' '.join(items)}{more}>")


def _tensor_item(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return str(v).lower()
    return format_float(v) if isinstance(v, float) else str(v)
