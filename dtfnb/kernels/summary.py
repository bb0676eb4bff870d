"""Summary kernels: serialize a `Summary` protobuf, on CPU as in TensorFlow."""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos.summary_pb2 import Summary


def _dims(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


@register_kernel("ScalarSummary", device="CPU")
def _scalar_summary(ctx, step, tags, values):
    tags, values = np.asarray(tags, dtype=object), np.asarray(values)
    if tags.shape != values.shape:
        single = f" (tag '{tags.reshape(-1)[0].decode()}')" if tags.size == 1 else ""
        raise InvalidArgumentError(
            None, None, f"tags and values are not the same shape: {_dims(tags.shape)} != "
                        f"{_dims(values.shape)}{single}")
    summary = Summary(value=[Summary.Value(tag=tag.decode(), simple_value=float(value))
                             for tag, value in zip(tags.reshape(-1), values.reshape(-1))])
    return np.array(summary.SerializeToString(), dtype=object)
