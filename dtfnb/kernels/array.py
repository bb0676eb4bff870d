"""Array kernels: shapes, reshaping, joining, splitting, slicing, gathering, filling.

Shape-like inputs (shapes, axes, begin/size, paddings) are read on the host; outputs
are arrays of the device's `xp`, so a GPU op never receives a host array.
Results may be numpy views of an input; no kernel ever writes into an input.
"""

import math
import re

import numpy as np

from dtfnb.base.dtypes import resource
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.base.stacking import stack
from dtfnb.kernels.allocation import check_output
from dtfnb.kernels.math import host
from dtfnb.kernels.registry import register_kernel


def _ints(value):
    return host(value).reshape(-1).tolist()



def _error(message):
    return InvalidArgumentError(None, None, message)


def _out_dtype(ctx, index=0):
    return ctx.output_types[index].as_numpy_dtype


def _axis(value, ndim, what="axis"):
    axis = int(host(value).reshape(-1)[0]) if not isinstance(value, int) else value
    if not -ndim <= axis < max(ndim, 1):
        raise _error(f"Expected {what} in the range [{-ndim}, {ndim}), but got {axis}")
    return axis + ndim if axis < 0 else axis


# -- shapes ---------------------------------------------------------------------------

@register_kernel("Shape")
def _shape(ctx, step, x):
    return ctx.xp.asarray(x.shape, dtype=_out_dtype(ctx))


@register_kernel("ShapeN")
def _shape_n(ctx, step, *xs):
    return tuple(ctx.xp.asarray(x.shape, dtype=_out_dtype(ctx, i)) for i, x in enumerate(xs))


@register_kernel("ConcatOffset")
def _concat_offset(ctx, step, axis, *shapes):
    shapes = [_ints(s) for s in shapes]
    axis = _axis(axis, len(shapes[0]), "concat_dim")
    offsets, at = [], 0
    for i, dims in enumerate(shapes):
        if len(dims) != len(shapes[0]) or any(
                d != d0 for j, (d, d0) in enumerate(zip(dims, shapes[0])) if j != axis):
            raise _error(f"All dimensions except {axis} must match. Input {i} has shape "
                         f"{dims_string(dims)} and doesn't match input 0 with shape "
                         f"{dims_string(shapes[0])}.")
        offset = [0] * len(dims)
        offset[axis] = at
        offsets.append(ctx.xp.asarray(offset, dtype=_out_dtype(ctx, i)))
        at += dims[axis]
    return tuple(offsets)


@register_kernel("DiagPart")
def _diag_part(ctx, step, x):
    half = x.shape[:x.ndim // 2]
    if x.ndim % 2 or x.shape[x.ndim // 2:] != half:
        raise _error(f"Invalid shape {dims_string(x.shape)}: dimensions must pair up")
    n = math.prod(half)
    return ctx.xp.diagonal(x.reshape(n, n)).reshape(half).copy()


@register_kernel("Size")
def _size(ctx, step, x):
    return ctx.xp.asarray(x.size, dtype=_out_dtype(ctx))


@register_kernel("Rank")
def _rank(ctx, step, x):
    return ctx.xp.asarray(x.ndim, dtype=np.int32)


@register_kernel("Reshape")
def _reshape(ctx, step, x, shape):
    dims = _ints(shape)
    if dims.count(-1) > 1:
        raise _error(f"Only one input size may be -1, not both {dims.index(-1)} and "
                     f"{dims.index(-1, dims.index(-1) + 1)}")
    if -1 in dims:
        dims[dims.index(-1)] = _inferred(x, dims)
    size = math.prod(dims)
    if size != x.size:
        raise _error(f"Input to reshape is a tensor with {x.size} values, but the requested "
                     f"shape has {size}")
    return x.reshape(dims)


def _inferred(x, dims):
    """The size TensorFlow gives the -1 of `dims`: x's elements over the other sizes, or,
    where a size is 0, its non-zero dims over the non-zero sizes (so that a (0, 0) tensor
    reshaped to [-1, 0] is [1, 0], and a (3, 0) one to [0, -1] is [0, 3])."""
    zero = 0 in dims
    known = math.prod(d for d in dims if d != -1 and (d or not zero))
    elements = math.prod(n for n in x.shape if n or not zero)
    if elements % known and not (zero and 0 in x.shape):
        raise _error(f"Input to reshape is a tensor with {x.size} values, but the requested "
                     f"shape requires a multiple of {known}")
    return elements // known


@register_kernel("ExpandDims")
def _expand_dims(ctx, step, x, dim):
    axis = int(host(dim).reshape(-1)[0])
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise _error(f"Tried to expand dim index {axis} for tensor with {x.ndim} dimensions.")
    if axis < 0:
        axis += x.ndim + 1
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


@register_kernel("Squeeze")
def _squeeze(ctx, step, x):
    axes = [a + x.ndim if a < 0 else a for a in ctx.attrs.get("squeeze_dims") or []]
    for a in axes:
        if x.shape[a] != 1:
            raise _error(f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                         f"{x.shape[a]}")
    if not axes:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    return x.reshape([d for i, d in enumerate(x.shape) if i not in axes])


@register_kernel("Transpose")
def _transpose(ctx, step, x, perm):
    perm = _ints(perm)
    if len(perm) != x.ndim:
        raise _error(f"transpose expects a vector of size {x.ndim}. But input(1) is a vector "
                     f"of size {len(perm)}")
    if sorted(perm) != list(range(x.ndim)):
        raise _error(f"{perm} is not a valid permutation")
    return ctx.xp.transpose(x, perm)


@register_kernel("InvertPermutation")
def _invert_permutation(ctx, step, x):
    perm = host(x)
    return ctx.xp.asarray(np.argsort(perm).astype(perm.dtype))


@register_kernel("ListDiff")
def _list_diff(ctx, step, x, y):
    for name, v in (("x", x), ("y", y)):
        if v.ndim != 1:
            raise _error(f"{name} should be a 1D vector.")
    keep = ~ctx.xp.isin(x, y)
    idx = ctx.xp.nonzero(keep)[0].astype(ctx.output_types[1].as_numpy_dtype)
    return x[keep], idx


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(ctx, step, s0, s1):
    a, b = _ints(s0), _ints(s1)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    r0, r1 = [], []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise _error(f"Incompatible shapes: {dims_string(host(s0))} vs. "
                         f"{dims_string(host(s1))}")
        if x == 1 and y != 1:
            r0.append(i)
        elif y == 1 and x != 1:
            r1.append(i)
        elif x == 1 and y == 1:  # both 1: either may reduce, as TensorFlow does
            r0.append(i)
            r1.append(i)
    dtype = _out_dtype(ctx)
    return ctx.xp.asarray(r0, dtype), ctx.xp.asarray(r1, dtype)


# -- joining and splitting ------------------------------------------------------------

@register_kernel("Pack")
def _pack(ctx, step, *values):
    if ctx.attrs["T"] == resource:  # a resource handle is the resource itself
        handles = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            handles[i] = value
        return handles
    axis = _axis(ctx.attrs["axis"], values[0].ndim + 1)
    check_output(ctx, (len(values),) + values[0].shape, values[0].dtype)
    try:
        return stack(values) if axis == 0 and ctx.xp is np else ctx.xp.stack(values, axis)
    except ValueError:  # name the input that does not match
        first = values[0].shape
        for i, v in enumerate(values[1:], 1):
            if v.shape != first:
                raise _error(f"Shapes of all inputs must match: values[0].shape = "
                             f"{dims_string(first)} != values[{i}].shape = "
                             f"{dims_string(v.shape)}") from None
        raise


@register_kernel("Unpack")
def _unpack(ctx, step, x):
    axis = _axis(ctx.attrs["axis"], x.ndim)
    num = ctx.attrs["num"]
    if x.shape[axis] != num:
        raise _error(f"Input shape axis {axis} must equal {num}, got shape {dims_string(x.shape)}")
    return tuple(ctx.xp.take(x, i, axis=axis) for i in range(num))


@register_kernel("ConcatV2")
def _concat(ctx, step, *inputs):
    values, axis = inputs[:-1], inputs[-1]
    axis = _axis(axis, values[0].ndim)
    first = values[0].shape
    for i, v in enumerate(values[1:], 1):
        if v.ndim != len(first) or any(d != e for j, (d, e) in enumerate(zip(first, v.shape))
                                       if j != axis):
            raise _error("ConcatOp : Dimensions of inputs should match: shape[0] = "
                         f"{dims_string(first)} vs. shape[{i}] = {dims_string(v.shape)}")
    check_output(ctx, first[:axis] + (sum(v.shape[axis] for v in values),) + first[axis + 1:],
                 values[0].dtype)
    return ctx.xp.concatenate(values, axis=axis)


@register_kernel("DynamicPartition")
def _dynamic_partition(ctx, step, data, partitions):
    count = ctx.attrs["num_partitions"]
    partitions = host(partitions)
    if data.shape[:partitions.ndim] != partitions.shape:
        raise _error("data.shape must start with partitions.shape, got data.shape = "
                     f"{dims_string(data.shape)}, partitions.shape = "
                     f"{dims_string(partitions.shape)}")
    flat = partitions.reshape(-1)
    outside = np.flatnonzero((flat < 0) | (flat >= count))
    if outside.size:
        at = outside[0]
        raise _error(f"partitions{dims_string(np.unravel_index(at, partitions.shape))} = "
                     f"{flat[at]} is not in [0, {count})")
    rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
    return tuple(rows[ctx.xp.asarray(flat == i)] for i in range(count))


def _dynamic_stitch(ctx, step, *args):
    n = ctx.attrs["N"]
    indices, data = [host(i) for i in args[:n]], args[n:]
    for i, (index, values) in enumerate(zip(indices, data)):
        if values.shape[:index.ndim] != index.shape:
            raise _error(f"data[{i}].shape = {dims_string(values.shape)} does not start with "
                         f"indices[{i}].shape = {dims_string(index.shape)}")
    element = data[0].shape[indices[0].ndim:]
    rows = max((int(index.max()) for index in indices if index.size), default=-1) + 1
    merged = ctx.xp.zeros((rows,) + element, data[0].dtype)
    for index, values in zip(indices, data):
        merged[ctx.xp.asarray(index.reshape(-1))] = values.reshape((index.size,) + element)
    return merged


for _op in ("DynamicStitch", "ParallelDynamicStitch"):
    register_kernel(_op)(_dynamic_stitch)


@register_kernel("Unique")
def _unique(ctx, step, x):
    if x.ndim != 1:
        raise _error("unique expects a 1D vector.")
    xp = ctx.xp
    values, first, idx = xp.unique(x, return_index=True, return_inverse=True)
    order = xp.argsort(first)  # TensorFlow lists the values in order of first appearance
    position = xp.empty_like(order)
    position[order] = xp.arange(order.size)
    return values[order], position[idx.reshape(-1)].astype(ctx.attrs["out_idx"].as_numpy_dtype)


@register_kernel("Split")
def _split(ctx, step, axis, x):
    axis = _axis(axis, x.ndim)
    num = ctx.attrs["num_split"]
    if x.shape[axis] % num:
        raise _error("Number of ways to split should evenly divide the split dimension, but "
                     f"got split_dim {axis} (size = {x.shape[axis]}) and num_split {num}")
    return tuple(ctx.xp.split(x, num, axis=axis))


@register_kernel("SplitV")
def _split_v(ctx, step, x, sizes, axis):
    axis = _axis(axis, x.ndim)
    sizes = _ints(sizes)
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    if sum(sizes) != x.shape[axis] or min(sizes) < 0:
        raise _error("Determined shape must either match input shape along split_dim "
                     "exactly if fully specified, or be less than the size of the input "
                     f"along split_dim if not fully specified.  Got: {sum(sizes)}")
    return tuple(ctx.xp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis))


# -- tile, pad, slice ------------------------------------------------------------------

@register_kernel("Tile")
def _tile(ctx, step, x, multiples):
    multiples = _ints(multiples)
    if len(multiples) != x.ndim:
        raise _error(f"Expected multiples argument to be a vector of length {x.ndim} but got "
                     f"length {len(multiples)}")
    if min(multiples, default=0) < 0:
        raise _error(f"Expected multiples[i] >= 0, but got {multiples}")
    check_output(ctx, [d * m for d, m in zip(x.shape, multiples)], x.dtype)
    return ctx.xp.tile(x, multiples)


def _paddings(ctx, x, paddings):
    """The paddings as (before, after) pairs, once the padded output is known to fit."""
    pads = host(paddings).reshape(-1, 2).astype(int)
    if len(pads) != x.ndim:
        raise _error(f"The first dimension of paddings must be the rank of inputs"
                     f"[{len(pads)},2] {dims_string(x.shape)}")
    if (pads < 0).any():
        raise _error(f"Paddings must be non-negative: {pads.min()}")
    pads = [tuple(p) for p in pads.tolist()]
    check_output(ctx, [d + a + b for d, (a, b) in zip(x.shape, pads)], x.dtype)
    return pads


@register_kernel("Pad")
def _pad(ctx, step, x, paddings):
    return ctx.xp.pad(x, _paddings(ctx, x, paddings), mode="constant")


@register_kernel("PadV2")
def _pad_v2(ctx, step, x, paddings, value):
    return ctx.xp.pad(x, _paddings(ctx, x, paddings), mode="constant",
                      constant_values=host(value).reshape(()).item())


@register_kernel("MirrorPad")
def _mirror_pad(ctx, step, x, paddings):
    mode = ctx.attrs["mode"]
    pads = _paddings(ctx, x, paddings)
    limit = 0 if mode == "REFLECT" else 1
    for (a, b), d in zip(pads, x.shape):
        if max(a, b) > d - 1 + limit:
            raise _error(f"paddings must be less than{' or equal to' if limit else ''} the "
                         f"dimension size: {a}, {b} not less than {d}")
    return ctx.xp.pad(x, pads, mode="reflect" if mode == "REFLECT" else "symmetric")


@register_kernel("Slice")
def _slice(ctx, step, x, begin, size):
    begin, size = _ints(begin), _ints(size)
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise _error(f"Expected begin and size arguments to be 1-D tensors of size {x.ndim}, "
                     f"but got shapes [{len(begin)}] and [{len(size)}] instead.")
    index = []
    for i, (b, n, d) in enumerate(zip(begin, size, x.shape)):
        n = d - b if n == -1 else n
        if not 0 <= b <= d:
            raise _error(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if not 0 <= n <= d - b:
            raise _error(f"Expected size[{i}] in [0, {d - b}], but got {n}")
        index.append(slice(b, b + n))
    return x[tuple(index)]


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_index(attrs, begin, end, strides):
    """The numpy index equal to a StridedSlice spec (TensorFlow's follows numpy's)."""
    m = {k: attrs.get(k, 0) for k in _MASKS}
    begin, end, strides = _ints(begin), _ints(end), _ints(strides)
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if m["ellipsis_mask"] & bit:
            index.append(Ellipsis)
        elif m["new_axis_mask"] & bit:
            index.append(None)
        elif m["shrink_axis_mask"] & bit:
            index.append(b)
        else:
            if s == 0:
                raise _error(f"strides[{i}] must be non-zero")
            index.append(slice(None if m["begin_mask"] & bit else b,
                               None if m["end_mask"] & bit else e, s))
    return tuple(index)


def _index_error(err):
    match = re.search(r"index (-?\d+) is out of bounds for axis (\d+)", str(err))
    if match:
        return _error(f"slice index {match.group(1)} of dimension {match.group(2)} out of "
                      "bounds.")
    return _error(str(err))


@register_kernel("StridedSlice")
def _strided_slice(ctx, step, x, begin, end, strides):
    try:
        return x[_strided_index(ctx.attrs, begin, end, strides)]
    except IndexError as err:
        raise _index_error(err) from None


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


@register_kernel("StridedSliceAssign", ref_inputs=True)
def _strided_slice_assign(ctx, step, ref, begin, end, strides, value):
    index = _strided_index(ctx.attrs, begin, end, strides)

    def assigned(old):
        new = old.copy()   # readers of the old array keep it
        try:
            target = new[index]
        except IndexError as err:
            raise _index_error(err) from None
        if not _broadcasts_to(value.shape, target.shape):
            raise _error(f"Cannot broadcast input shape {dims_string(value.shape)} into "
                         f"final shape {dims_string(target.shape)}")
        new[index] = value
        return new

    ref.update(assigned)
    return ref


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(ctx, step, shape, begin, end, strides, dy):
    shape = _ints(shape)
    check_output(ctx, shape, dy.dtype)
    out = ctx.xp.zeros(shape, dtype=dy.dtype)
    out[_strided_index(ctx.attrs, begin, end, strides)] = dy
    return out


# -- gather and segment sums ------------------------------------------------------------

def _first_out_of_range(indices, limit, bad=None):
    """("i,j", value) of the first of `indices` (or of those `bad` marks) outside [0,
    limit), or None."""
    if bad is None:   # one comparison: a negative index read as unsigned is beyond any limit
        unsigned = indices.dtype.str.replace("i", "u") if indices.dtype.kind == "i" else None
        bad = (indices if unsigned is None else indices.view(unsigned)) >= limit
    if not bool(bad.any()):
        return None
    position = np.unravel_index(int(np.argmax(host(bad).reshape(-1))), indices.shape)
    return ",".join(str(p) for p in position), int(host(indices)[position])


@register_kernel("GatherV2")
def _gather(ctx, step, params, indices, axis):
    axis = _axis(axis, params.ndim)
    found = _first_out_of_range(indices, params.shape[axis])
    if found is not None:
        raise _error(f"indices[{found[0]}] = {found[1]} is not in [0, {params.shape[axis]})")
    check_output(ctx, params.shape[:axis] + indices.shape + params.shape[axis + 1:],
                 params.dtype)
    return ctx.xp.take(params, indices, axis=axis)


def _tuple_string(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def _index_tuples(indices, limits, what):
    """The index tuples (rows of a host array) of `indices`, each checked to lie within
    `limits`; TensorFlow's error names the first that does not, by its position."""
    flat = host(indices).reshape(-1, len(limits)).astype(np.int64)
    bad = ((flat < 0) | (flat >= np.asarray(limits, np.int64))).any(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        position = np.unravel_index(first, indices.shape[:-1]) if indices.ndim > 1 else ()
        raise _error(f"indices[{','.join(str(int(p)) for p in position)}] = "
                     f"{_tuple_string(flat[first].tolist())} does not index into {what}")
    return flat


@register_kernel("GatherNd")
def _gather_nd(ctx, step, params, indices):
    if indices.ndim < 1:
        raise _error(f"indices must be at least a vector, got {dims_string(indices.shape)}")
    depth = indices.shape[-1]
    if depth > params.ndim:
        raise _error("index innermost dimension length must be <= params rank; saw: "
                     f"{depth} vs. {params.ndim}")
    flat = _index_tuples(indices, params.shape[:depth],
                         f"param shape {dims_string(params.shape)}, node name: {ctx.name}")
    taken = params[tuple(ctx.xp.asarray(column) for column in flat.T)]
    return taken.reshape(indices.shape[:-1] + params.shape[depth:])


@register_kernel("ScatterNd")
def _scatter_nd(ctx, step, indices, updates, shape):
    dims = tuple(_ints(shape))
    depth = indices.shape[-1] if indices.ndim else 0
    outer = indices.ndim - 1
    if indices.shape[:outer] != updates.shape[:outer]:
        raise _error(f"Dimensions [0,{outer}) of indices[shape={dims_string(indices.shape)}] "
                     f"must match dimensions [0,{outer}) of updates[shape="
                     f"{dims_string(updates.shape)}]")
    flat = _index_tuples(indices, dims[:depth], f"shape {dims_string(dims)}")
    check_output(ctx, dims, updates.dtype)
    out = ctx.xp.zeros(dims, dtype=updates.dtype)
    _add_at(ctx.xp, out, tuple(ctx.xp.asarray(column) for column in flat.T),
            updates.reshape((-1,) + dims[depth:]))
    return out


@register_kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(ctx, step, data, ids, num_segments):
    xp = ctx.xp
    n = int(host(num_segments).reshape(()))
    if data.shape[:ids.ndim] != ids.shape:
        raise _error(f"segment_ids.shape = {dims_string(ids.shape)} is not a prefix of "
                     "data.shape = "
                     f"{dims_string(data.shape)}")
    found = _first_out_of_range(ids, n, ids >= n)
    if found is not None:
        raise _error(f"segment_ids[{found[0]}] = {found[1]} is out of range [0, {n})")
    shape = (n,) + data.shape[ids.ndim:]
    check_output(ctx, shape, data.dtype)
    out = xp.zeros(shape, dtype=data.dtype)
    kept = ids >= 0   # TensorFlow drops the data of a negative id
    if not bool(kept.all()):
        ids, data = ids[kept], data[kept]
    _add_at(xp, out, ids, data)
    return out


def _add_at(xp, out, rows, values):
    """out[rows] += values, a repeated row adding each time."""
    if xp.__name__ == "numpy":
        np.add.at(out, rows, values)
    else:
        import cupyx

        cupyx.scatter_add(out, rows, values)


def _sorted_segments(ids, rows, what="segment_ids"):
    """The number of segments of sorted `ids` (its last id + 1), checking them."""
    ids = host(ids)
    if ids.ndim != 1:
        raise _error(f"{what} should be a vector.")
    if ids.size and (ids[0] < 0 or bool((np.diff(ids) < 0).any())):
        raise _error(f"{what} must be sorted and non-negative")
    if ids.size != rows:
        raise _error(f"{what} should be the same size as dimension 0 of input.")
    return int(ids[-1]) + 1 if ids.size else 0


@register_kernel("SegmentSum")
def _segment_sum(ctx, step, data, ids):
    count = _sorted_segments(ids, data.shape[0] if data.ndim else 0)
    out = ctx.xp.zeros((count,) + data.shape[1:], data.dtype)
    _add_at(ctx.xp, out, ids, data)
    return out


def _segment_scales(xp, norm, ids, count, dtype):
    """Each segment's factor: 1 (sum), 1/size (mean) or 1/sqrt(size) (sqrtn)."""
    sizes = np.bincount(host(ids), minlength=count).astype(np.float64)
    scales = {"sum": np.ones_like(sizes), "mean": 1 / np.maximum(sizes, 1),
              "sqrtn": 1 / np.sqrt(np.maximum(sizes, 1))}[norm]
    return xp.asarray(scales.astype(dtype))


def _sparse_segment(norm):
    def kernel(ctx, step, data, indices, ids):
        xp = ctx.xp
        count = _sorted_segments(ids, indices.size)
        found = _first_out_of_range(indices, data.shape[0])
        if found is not None:
            raise _error(f"Bad: indices[{found[0]}] == {found[1]} out of range "
                         f"[0, {data.shape[0]})")
        out = xp.zeros((count,) + data.shape[1:], data.dtype)
        _add_at(xp, out, ids, data[indices])
        scales = _segment_scales(xp, norm, ids, count, data.dtype)
        return out * scales.reshape((count,) + (1,) * (data.ndim - 1))
    return kernel


def _sparse_segment_grad(norm, sparse):
    def kernel(ctx, step, grad, indices, ids, rows):
        xp = ctx.xp
        rows = int(host(rows).reshape(()))
        count = grad.shape[0]
        scales = _segment_scales(xp, norm, ids, count, grad.dtype)
        contributions = grad[ids] * scales[ids].reshape((-1,) + (1,) * (grad.ndim - 1))
        out = xp.zeros((rows,) + grad.shape[1:], grad.dtype)
        _add_at(xp, out, indices, contributions)
        if not sparse:
            return out
        used = xp.unique(indices)  # sorted, as TensorFlow's sorted_unique_indices
        return out[used], used
    return kernel


for _norm, _op in (("sum", "SparseSegmentSum"), ("mean", "SparseSegmentMean"),
                   ("sqrtn", "SparseSegmentSqrtN")):
    register_kernel(_op)(_sparse_segment(_norm))
    register_kernel(_op + "Grad")(_sparse_segment_grad(_norm, sparse=False))
    register_kernel(_op + "GradV2")(_sparse_segment_grad(_norm, sparse=True))


# -- where, select -----------------------------------------------------------------

@register_kernel("Where")
def _where(ctx, step, cond):
    return ctx.xp.argwhere(cond).astype(np.int64)


@register_kernel("Select")
def _select(ctx, step, cond, x, y):
    if x.shape != y.shape:
        raise _error(f"'then' and 'else' must have the same size.  but received: "
                     f"{dims_string(x.shape)} vs. {dims_string(y.shape)}")
    if cond.shape != x.shape:
        if cond.ndim != 1 or x.ndim < 1 or cond.shape[0] != x.shape[0]:
            raise _error("'cond' must be a vector or have the same shape as 'then': "
                         f"{dims_string(cond.shape)} vs. {dims_string(x.shape)}")
        cond = cond.reshape(cond.shape + (1,) * (x.ndim - 1))
    return ctx.xp.where(cond, x, y)


@register_kernel("SelectV2")
def _select_v2(ctx, step, cond, x, y):
    try:
        return ctx.xp.where(cond, x, y)
    except ValueError:
        raise _error(f"condition {dims_string(cond.shape)}, then {dims_string(x.shape)}, and "
                     f"else {dims_string(y.shape)} must be broadcastable") from None


# -- fill, zeros, ones, one_hot, broadcast_to ------------------------------------------

@register_kernel("Fill")
def _fill(ctx, step, dims, value):
    dims = _ints(dims)
    if min(dims, default=0) < 0:
        raise _error(f"dims must be non-negative: {dims}")
    if value.ndim:
        raise _error(f"value must be a scalar, got shape {dims_string(value.shape)}")
    check_output(ctx, dims, value.dtype)
    return ctx.xp.full(dims, value, dtype=value.dtype)


@register_kernel("ZerosLike")
def _zeros_like(ctx, step, x):
    return ctx.xp.zeros_like(x)


@register_kernel("OnesLike")
def _ones_like(ctx, step, x):
    return ctx.xp.ones_like(x)


@register_kernel("BroadcastTo")
def _broadcast_to(ctx, step, x, shape):
    dims = _ints(shape)
    try:
        view = ctx.xp.broadcast_to(x, dims)
    except ValueError:
        raise _error(f"Incompatible shapes: {dims_string(x.shape)} vs. "
                     f"{dims_string(dims)}") from None
    check_output(ctx, dims, x.dtype)  # the view takes no memory, but TensorFlow's output does
    return view


@register_kernel("OneHot")
def _one_hot(ctx, step, indices, depth, on, off):
    xp = ctx.xp
    depth = int(host(depth).reshape(()))
    if depth < 0:
        raise _error(f"depth must be non-negative, got: {depth}")
    axis = ctx.attrs.get("axis", -1)
    axis = indices.ndim if axis == -1 else axis
    check_output(ctx, indices.shape[:axis] + (depth,) + indices.shape[axis:], _out_dtype(ctx))
    classes = xp.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    hits = xp.expand_dims(indices, axis) == classes  # out-of-range indices hit nothing
    return xp.where(hits, on, off).astype(_out_dtype(ctx))
