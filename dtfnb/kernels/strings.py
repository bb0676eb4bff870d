"""String kernels: ReduceJoin."""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError, OutOfRangeError
from dtfnb.base.object_arrays import object_vector
from dtfnb.kernels.math import host
from dtfnb.kernels.registry import register_kernel


@register_kernel("ReduceJoin", device="CPU")
def _reduce_join(ctx, step, inputs, reduction_indices):
    strings = np.asarray(inputs, dtype=object)
    rank = strings.ndim
    reduced = []
    for axis in host(reduction_indices).reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise OutOfRangeError(None, None, f"Invalid reduction dimension {axis} for input "
                                              f"with {rank} dimension(s)")
        if axis % rank in reduced:
            raise InvalidArgumentError(None, None, f"Duplicate reduction dimension {axis}")
        reduced.append(axis % rank)
    kept = [i for i in range(rank) if i not in reduced]
    # the reduced axes last, the first listed innermost: it varies fastest
    rows = np.transpose(strings, kept + reduced[::-1]).reshape(
        int(np.prod([strings.shape[i] for i in kept])), -1 if strings.size else 0)
    separator = ctx.attrs.get("separator", b"")
    separator = separator.encode() if isinstance(separator, str) else separator
    out = object_vector([separator.join(row) for row in rows])
    shape = ([1 if i in reduced else n for i, n in enumerate(strings.shape)]
             if ctx.attrs.get("keep_dims", False) else [strings.shape[i] for i in kept])
    return out.reshape(shape)
