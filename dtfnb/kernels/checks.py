"""Run-time checks: Assert, whose message shows its data as TensorFlow summarizes tensors."""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.math import host
from dtfnb.kernels.registry import register_kernel

_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"',
            ord("'"): b"\\'", ord("\\"): b"\\\\"}


def _c_escape(raw):
    """absl's Utf8SafeCEscape: control bytes escaped, UTF-8 kept."""
    out = bytearray()
    for byte in raw:
        out += _ESCAPES.get(byte) or (b"\\%03o" % byte if byte < 32 or byte == 127
                                      else bytes([byte]))
    return out.decode("utf-8", "backslashreplace")


def _element_text(x):
    """One element as TensorFlow's StrCat writes it: shortest of %g and full precision."""
    if isinstance(x, bytes):
        return _c_escape(x)
    kind = x.dtype.kind
    if kind in "iu":
        return str(int(x))
    if kind == "b":
        return "1" if x else "0"
    if kind == "c":
        return "?"
    x = x if x.dtype == np.float64 else np.float32(x)
    short, full = (15, 17) if x.dtype == np.float64 else (6, 9)
    text = f"{float(x):.{short}g}"
    return text if x.dtype.type(text) == x else f"{float(x):.{full}g}"


def _nest(texts, shape):
    """The texts in nested brackets, as TensorFlow's PrintOneDim lays out a partial tensor."""
    out, taken = [], 0

    def dim(d):
        nonlocal taken
        if d == len(shape) - 1:
            for i in range(shape[d]):
                if taken == len(texts):
                    if d:
                        out.append("...")
                    return
                out.append(f" {texts[taken]}" if i else texts[taken])
                taken += 1
            return
        for _ in range(shape[d]):
            if taken == len(texts):
                return
            out.append("[")
            dim(d + 1)
            out.append("]")

    dim(0)
    return "".join(out)


def summarize_value(array, max_entries):
    """TensorFlow's Tensor::SummarizeValue: the first `max_entries` elements (all if < 0)."""
    flat = array.reshape(-1)
    limit = flat.size if max_entries < 0 else min(max_entries, flat.size)
    texts = [_element_text(x) for x in flat[:limit]]
    text = " ".join(texts) if array.ndim == 0 else _nest(texts, array.shape)
    return text + ("..." if flat.size > limit else "")


@register_kernel("Assert")
def _assert(ctx, step, condition, *data):
    condition = host(condition)
    if condition.ndim:
        raise InvalidArgumentError(
            None, None, f"In[0] should be a scalar: [{','.join(map(str, condition.shape))}]")
    if not condition:
        summarize = ctx.attrs["summarize"]
        raise InvalidArgumentError(None, None, "assertion failed: " + " ".join(
            f"[{summarize_value(host(x), summarize)}]" for x in data))
