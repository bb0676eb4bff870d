"""Slicing and gathering: slice, strided_slice and `tensor[...]`, gather, segment sums,
boolean_mask; the ops whose gradients are slices: pad and tile; and transpose.

The highest of the three core op families: these builders and gradients use math_ops
(a transpose of unknown rank reverses a range), which uses array_ops.
"""

import builtins
import warnings

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, unknown_shape
from dtfnb.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import constant_op, math_ops, state_ops
from dtfnb.ops.array_ops import (
    expand_dims,
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    size,
    squeeze,
    where,
    where_v2,
    zeros_like,
)
from dtfnb.ops.building import attr_typed_index, int_tensor, make_op, make_tensor, op_scope
from dtfnb.ops.joining_ops import concat, stack
from dtfnb.ops.shape_util import constant_value, normalize_axis, shape_error, shape_value

# -- transpose -------------------------------------------------------------------------

def _transpose_shape(op):
    x = op.inputs[0].shape
    perm = constant_value(op.inputs[1])
    if perm is None:
        n = op.inputs[1].shape[0].value if op.inputs[1].shape.ndims == 1 else None
        return [unknown_shape(x.ndims if x.ndims is not None else n)]
    perm = [int(p) for p in np.reshape(perm, -1)]
    if x.ndims is None:
        return [unknown_shape(len(perm))]
    if sorted(perm) != list(range(x.ndims)):
        raise shape_error(op, f"Dimension must be {x.ndims} but is {len(perm)}"
                          if len(perm) != x.ndims else f"{perm} is not a valid permutation")
    dims = x.as_list()
    return [TensorShape([dims[p] for p in perm])]


define_op("Transpose", _transpose_shape)
define_op("InvertPermutation", lambda op: [op.inputs[0].shape])
NotDifferentiable("InvertPermutation")


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of `a` by `perm` (reversed if None)."""
    with op_scope("transpose", name, a) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            if a.shape.ndims is not None:
                perm = list(range(a.shape.ndims - 1, -1, -1))
            else:
                r = rank(a)
                perm = math_ops._range(r - 1, -1, -1)
        perm = attr_typed_index(perm, name="perm")
        return make_tensor("Transpose", [a, perm], a.dtype.base_dtype, name=scope,
                           attrs={"T": a.dtype.base_dtype, "Tperm": perm.dtype})


def invert_permutation(x, name=None):
    """The inverse of the permutation `x`: `y[x[i]] = i`."""
    x = int_tensor(x)
    return make_tensor("InvertPermutation", [x], x.dtype, name=name or "InvertPermutation",
                       attrs={"T": x.dtype})


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    return transpose(grad, invert_permutation(op.inputs[1])), None


# -- tile, pad, slice ------------------------------------------------------------------

def _tile_shape(op):
    x = op.inputs[0].shape
    multiples = shape_value(op.inputs[1])
    if multiples is None:
        return [unknown_shape(x.ndims)]
    if x.ndims is None:
        return [unknown_shape(len(multiples))]
    if len(multiples) != x.ndims:
        raise shape_error(op, f"Shape must be rank {x.ndims} but is rank {len(multiples)}")
    return [TensorShape([None if d is None or m is None else d * m
                         for d, m in zip(x.as_list(), multiples)])]


define_op("Tile", _tile_shape)


def tile(input, multiples, name=None):  # noqa: A002 - TensorFlow's name
    """Repeats `input` `multiples[i]` times along each dimension `i`."""
    with op_scope("Tile", name, input, multiples) as scope:
        value = convert_to_tensor(input, name="input")
        multiples = attr_typed_index(multiples, name="multiples")
        return make_tensor("Tile", [value, multiples], value.dtype.base_dtype, name=scope,
                           attrs={"T": value.dtype.base_dtype, "Tmultiples": multiples.dtype})


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    x, multiples = op.inputs
    # Reshape grad to [m0, d0, m1, d1, ...] and sum over the multiples' axes.
    split_shape = reshape(transpose(stack([multiples, shape(x, out_type=multiples.dtype)])),
                          [-1])
    axes = math_ops._range(0, size(split_shape), 2)
    result = math_ops.reduce_sum(reshape(grad, split_shape), axes)
    result.set_shape(x.shape)
    return result, None


def _pad_shape(op):
    x = op.inputs[0].shape
    paddings = constant_value(op.inputs[1])
    n = op.inputs[1].shape[0].value if op.inputs[1].shape.ndims == 2 else None
    ndims = x.ndims if x.ndims is not None else n
    if paddings is None:
        return [unknown_shape(ndims)]
    paddings = np.asarray(paddings).reshape(-1, 2)
    if x.ndims is None:
        return [unknown_shape(len(paddings))]
    if len(paddings) != x.ndims:
        raise shape_error(op, f"Shape must be rank {x.ndims} but is rank {len(paddings)}")
    return [TensorShape([None if d is None else d + int(a) + int(b)
                         for d, (a, b) in zip(x.as_list(), paddings)])]


define_op("Pad", _pad_shape)
define_op("PadV2", _pad_shape)
define_op("MirrorPad", _pad_shape)


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads with `constant_values` (CONSTANT) or mirrored values (REFLECT, SYMMETRIC)."""
    mode = mode.upper()
    if mode == "CONSTANT":
        op_type = "Pad" if not isinstance(constant_values, Tensor) and constant_values == 0 \
            else "PadV2"
    elif mode in ("REFLECT", "SYMMETRIC"):
        op_type = "MirrorPad"
    else:
        raise ValueError(f"Unknown padding mode: {mode}")
    with op_scope(op_type, name, tensor, paddings) as scope:
        tensor = convert_to_tensor(tensor, name="input")
        dtype = tensor.dtype.base_dtype
        inputs = [tensor, attr_typed_index(paddings, name="paddings")]
        attrs = {"T": dtype, "Tpaddings": inputs[1].dtype}
        if op_type == "PadV2":
            inputs.append(convert_to_tensor(constant_values, dtype=dtype,
                                            name="constant_values"))
        elif op_type == "MirrorPad":
            attrs["mode"] = mode
        return make_tensor(op_type, inputs, dtype, name=scope, attrs=attrs)


@RegisterGradient("Pad")
def _pad_grad(op, grad):
    x, paddings = op.inputs[:2]
    before = slice(paddings, [0, 0], stack([rank(x), 1]))
    return slice(grad, reshape(before, [-1]), shape(x)), None


@RegisterGradient("PadV2")
def _pad_v2_grad(op, grad):
    return _pad_grad(op, grad)[0], None, None


def _slice_shape(op):
    x = op.inputs[0].shape
    begin = constant_value(op.inputs[1])
    sizes = shape_value(op.inputs[2])
    ndims = x.ndims if x.ndims is not None else (None if sizes is None else len(sizes))
    if sizes is None or ndims is None:
        return [unknown_shape(ndims)]
    if len(sizes) != ndims:
        raise shape_error(op, f"Shape must be rank {ndims} but is rank {len(sizes)}")
    dims = x.as_list() if x.ndims is not None else [None] * ndims
    out = []
    for i, (d, n) in enumerate(zip(dims, sizes)):
        b = None if begin is None else int(np.reshape(begin, -1)[i])
        if n == -1:
            out.append(None if d is None or b is None else d - b)
            continue
        if n is not None and d is not None and b is not None and b + n > d:
            raise shape_error(op, f"Expected size[{i}] in [0, {d - b}], but got {n}")
        out.append(n)
    return [TensorShape(out)]


define_op("Slice", _slice_shape)


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """Extracts a slice of `size` elements from `input_`, starting at `begin` (-1 in `size`: all the
    rest)."""
    with op_scope("Slice", name, input_, begin, size) as scope:
        input_ = convert_to_tensor(input_, name="input")
        begin = int_tensor(begin, name="begin")
        size_t = int_tensor(size, name="size", dtype=begin.dtype)
        return make_tensor("Slice", [input_, begin, size_t], input_.dtype.base_dtype,
                           name=scope,
                           attrs={"T": input_.dtype.base_dtype, "Index": begin.dtype})


@RegisterGradient("Slice")
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    # Pad the gradient back: `begin` zeros before, the rest after.
    after = math_ops.subtract(math_ops.subtract(shape(x, out_type=begin.dtype),
                                                shape(op.outputs[0], out_type=begin.dtype)),
                              begin)
    paddings = transpose(stack([begin, after]))
    return pad(grad, paddings), None, None


# -- strided_slice and tensor[...] -----------------------------------------------------

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_slice_shape(op):
    x = op.inputs[0].shape
    begin, end, strides = (constant_value(t) for t in op.inputs[1:4])
    spec = op.inputs[1].shape
    n = spec[0].value if spec.ndims == 1 else None
    m = {k: op.get_attr(k) for k in _MASKS}
    if n is None or x.ndims is None:
        return [unknown_shape()]
    kinds = []
    for i in builtins.range(n):
        bit = 1 << i
        kinds.append("..." if m["ellipsis_mask"] & bit else "new" if m["new_axis_mask"] & bit
                     else "shrink" if m["shrink_axis_mask"] & bit else "slice")
    if kinds.count("...") > 1:
        raise shape_error(op, "Multiple ellipses in slice spec not allowed")
    if "..." not in kinds:
        kinds.append("...")  # as numpy: unmentioned trailing dimensions are kept whole
    dims = x.as_list()
    span = len(dims) - sum(k in ("shrink", "slice") for k in kinds)
    if span < 0:
        raise shape_error(op, f"Index out of range using input dim {len(dims)}; input has "
                              f"only {len(dims)} dims")
    out, d = [], 0
    for i, kind in enumerate(kinds):
        if kind == "...":
            out.extend(dims[d:d + span])
            d += span
        elif kind == "new":
            out.append(1)
        elif kind == "shrink":
            dim = dims[d]
            if begin is not None and dim is not None:
                index = int(begin[i])
                if not -dim <= index < dim:
                    raise shape_error(op, f"slice index {index} of dimension {d} out of "
                                          "bounds.")
            d += 1
        else:
            dim = dims[d]
            d += 1
            if strides is not None and int(strides[i]) == 0:
                raise shape_error(op, f"strides[{i}] must be non-zero")
            if dim is None or begin is None or end is None or strides is None:
                out.append(None)
                continue
            lo = None if m["begin_mask"] & (1 << i) else int(begin[i])
            hi = None if m["end_mask"] & (1 << i) else int(end[i])
            out.append(len(builtins.range(*builtins.slice(lo, hi, int(strides[i]))
                                          .indices(dim))))
    return [TensorShape(out)]


define_op("StridedSlice", _strided_slice_shape)
define_op("StridedSliceGrad", lambda op: [TensorShape(shape_value(op.inputs[0]))
                                          if shape_value(op.inputs[0]) is not None
                                          else unknown_shape()])
NotDifferentiable("StridedSliceGrad")


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """Extracts a strided slice of `input_`, as Python's `x[begin:end:strides]` per dimension.

    The masks are bit fields, bit `i` for dimension `i` of the spec, as in TensorFlow: `begin_mask`
    and `end_mask` ignore that begin or end (the full range), `ellipsis_mask` marks an ellipsis,
    `new_axis_mask` a new axis of size 1, and `shrink_axis_mask` an index that removes its
    dimension. With `var` (the variable `input_` reads), the slice gets an `assign(value)`
    that assigns `value` to that slice of the variable (`v[0].assign(x)`).
    """
    if strides is None:
        strides = ones_like(begin)
    masks = dict(zip(_MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                              shrink_axis_mask)))
    with op_scope("StridedSlice", name, input_, begin, end, strides) as scope:
        input_ = convert_to_tensor(input_, name="input")
        begin = int_tensor(begin, name="begin")
        end = int_tensor(end, name="end", dtype=begin.dtype)
        strides = int_tensor(strides, name="strides", dtype=begin.dtype)
        sliced = make_tensor("StridedSlice", [input_, begin, end, strides],
                             input_.dtype.base_dtype, name=scope,
                             attrs={"T": input_.dtype.base_dtype, "Index": begin.dtype,
                                    **{k: int(v) for k, v in masks.items()}})
    if var is not None:
        def assign(value, name=None):
            return state_ops.strided_slice_assign(var, begin, end, strides, value,
                                                  name=name or scope + "_assign", **masks)

        sliced.assign = assign
    return sliced


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    attrs = {"T": grad.dtype.base_dtype, "Index": begin.dtype,
             **{k: op.get_attr(k) for k in _MASKS}}
    dx = make_tensor("StridedSliceGrad", [shape(x, out_type=begin.dtype), begin, end, strides,
                                          grad], grad.dtype.base_dtype,
                     name="StridedSliceGrad", attrs=attrs)
    return dx, None, None, None


def _is_index(value):
    if isinstance(value, Tensor) or hasattr(value, "_variable"):
        return value.dtype.base_dtype in (dtypes.int32, dtypes.int64)
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _slice_helper(tensor, slice_spec, var=None):
    """`tensor[...]`: ints, slices, Ellipsis, tf.newaxis and scalar int tensors; `var`:
    the variable `tensor` reads, whose slice can then be assigned."""
    if not isinstance(slice_spec, builtins.tuple):
        slice_spec = (slice_spec,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, item in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(item, builtins.slice):
            for part, mask, out in ((item.start, "begin_mask", begin),
                                    (item.stop, "end_mask", end)):
                if part is None:
                    out.append(0)
                    masks[mask] |= bit
                else:
                    _check_index(part)
                    out.append(part)
            if item.step is not None:
                _check_index(item.step)
            strides.append(1 if item.step is None else item.step)
        elif item is Ellipsis or item is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if item is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(item)
            begin.append(item)
            end.append(item + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    graph = tensor.graph
    with graph.name_scope("strided_slice") as scope:
        if begin:
            packed = [stack(begin), stack(end), stack(strides)]
        else:
            empty = constant_op.constant([], dtype=dtypes.int32)
            packed = [empty, empty, empty]
        return strided_slice(tensor, *packed, name=scope, var=var, **masks)


def _check_index(item):
    if not _is_index(item):
        raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                        "and scalar tf.int32/tf.int64 tensors are valid indices, got "
                        f"{item!r}")


Tensor._override_operator("__getitem__", lambda t, spec: _slice_helper(t, spec))


# -- gather and segment sums ------------------------------------------------------------

def _gather_shape(op):
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    axis = constant_value(op.inputs[2])
    if params.ndims is None or indices.ndims is None or axis is None:
        return [unknown_shape()]
    axis = normalize_axis(op, int(axis), params.ndims)
    dims = params.as_list()
    return [TensorShape(dims[:axis] + indices.as_list() + dims[axis + 1:])]


define_op("GatherV2", _gather_shape)


def gather(params, indices, validate_indices=None, name=None, axis=0):
    """Gathers slices of `params` along `axis` at the positions `indices` give."""
    with op_scope("GatherV2", name, params, indices) as scope:
        params = convert_to_tensor(params, name="params")
        indices = int_tensor(indices, name="indices")
        axis = int_tensor(axis, name="axis")
        return make_tensor("GatherV2", [params, indices, axis], params.dtype.base_dtype,
                           name=scope,
                           attrs={"Tparams": params.dtype.base_dtype,
                                  "Tindices": indices.dtype.base_dtype, "Taxis": axis.dtype,
                                  "batch_dims": 0})


@RegisterGradient("GatherV2")
def _gather_grad(op, grad):
    """Along axis 0, IndexedSlices: the gradient's rows at the gathered indices, as
    TensorFlow's _GatherV2Grad gives it (only those rows travel and are applied); along
    another axis, a dense scatter-add into params' shape."""
    params, indices, axis_t = op.inputs
    axis = constant_value(axis_t)
    if axis is not None and int(axis) == 0:
        # params can be a large table on another task: its shape is computed beside it.
        with params.graph.colocate_with(params.op):
            params_shape = shape(params)
        indices_size = expand_dims(size(indices), 0)
        values_shape = concat([indices_size, params_shape[1:]], 0)
        values = reshape(_indexed_slices_to_tensor(grad, warn=False)
                         if isinstance(grad, IndexedSlices) else grad, values_shape)
        return IndexedSlices(values, reshape(indices, indices_size), params_shape), None, None
    axis = 0 if axis is None and params.shape.ndims == 1 else axis
    if axis is None:
        raise ValueError(f"The gradient of '{op.name}' needs a constant axis.")
    axis = int(axis) % max(params.shape.ndims or 1, 1) if int(axis) < 0 else int(axis)
    if axis == 0:
        count = shape(params, out_type=indices.dtype.base_dtype)[0]
        return unsorted_segment_sum(grad, indices, count), None, None
    r, q = params.shape.ndims, indices.shape.ndims
    if r is None or q is None:
        raise ValueError(f"The gradient of '{op.name}' along axis {axis} needs static ranks.")
    # Move the indices' dimensions to the front, scatter, then move the result back.
    perm = (list(builtins.range(axis, axis + q)) + list(builtins.range(axis))
            + list(builtins.range(axis + q, r + q - 1)))
    count = shape(params, out_type=indices.dtype.base_dtype)[axis]
    summed = unsorted_segment_sum(transpose(grad, perm), indices, count)
    back = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, r))
    return transpose(summed, back), None, None


def _segment_sum_shape(op):
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    n = constant_value(op.inputs[2])
    if data.ndims is None or ids.ndims is None:
        return [unknown_shape()]
    return [TensorShape([None if n is None else int(n)] + data.as_list()[ids.ndims:])]


define_op("UnsortedSegmentSum", _segment_sum_shape)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the rows of `data` by segment: `output[i]` sums the rows whose `segment_ids` are `i`."""
    with op_scope("UnsortedSegmentSum", name, data, segment_ids, num_segments) as scope:
        data = convert_to_tensor(data, name="data")
        segment_ids = int_tensor(segment_ids, name="segment_ids")
        num_segments = int_tensor(num_segments, name="num_segments")
        return make_tensor("UnsortedSegmentSum", [data, segment_ids, num_segments],
                           data.dtype.base_dtype, name=scope,
                           attrs={"T": data.dtype.base_dtype,
                                  "Tindices": segment_ids.dtype.base_dtype,
                                  "Tnumsegments": num_segments.dtype.base_dtype})


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    return _gather_drop_negatives(grad, op.inputs[1]), None, None


def _gather_drop_negatives(params, ids):
    """The rows `ids` of `params`, zeros where an id is negative (its data was dropped):
    TensorFlow's graph."""
    gathered = gather(params, math_ops.maximum(ids, zeros_like(ids)))
    is_positive = math_ops.greater_equal(ids, 0)
    is_positive_shape = shape(is_positive)
    broadcastable_shape = concat(
        [is_positive_shape, ones([rank(gathered) - rank(is_positive)],
                                 dtype=is_positive_shape.dtype)], axis=0)
    is_positive = reshape(is_positive, broadcastable_shape)
    is_positive = is_positive & ones_like(gathered, dtype=dtypes.bool_)
    return where_v2(is_positive, gathered, zeros_like(gathered))


def _sorted_segments_shape(op):
    data = op.inputs[0].shape
    return [unknown_shape() if data.ndims is None else TensorShape([None]).concatenate(data[1:])]


define_op("SegmentSum", _sorted_segments_shape)


def segment_sum(data, segment_ids, name=None):
    """Sums the rows of `data` by their sorted `segment_ids`: one row per segment up to the
    last id."""
    with op_scope("SegmentSum", name, data, segment_ids) as scope:
        data = convert_to_tensor(data, name="data")
        segment_ids = int_tensor(segment_ids, name="segment_ids")
        return make_tensor("SegmentSum", [data, segment_ids], data.dtype.base_dtype,
                           name=scope, attrs={"T": data.dtype.base_dtype,
                                              "Tindices": segment_ids.dtype.base_dtype})


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return gather(grad, op.inputs[1]), None


# SparseSegment{Sum,Mean,SqrtN}: the rows `indices` of data, reduced by sorted segment ids;
# their gradients scatter back into data's rows, densely (…Grad) or, with the op's
# sparse_gradient attr, as IndexedSlices of the rows used (…GradV2).
_SPARSE_SEGMENT_OPS = {"SparseSegmentSum": "sum", "SparseSegmentMean": "mean",
                       "SparseSegmentSqrtN": "sqrtn"}


def _sparse_segment_grad_shape(op):
    grad = op.inputs[0].shape
    rows = constant_value(op.inputs[3])
    dense = unknown_shape() if grad.ndims is None else \
        TensorShape([None if rows is None else int(rows)]).concatenate(grad[1:])
    if op.type.endswith("V2"):
        return [TensorShape([None]).concatenate(dense[1:]) if dense.ndims else dense,
                TensorShape([None])]
    return [dense]


for _op in _SPARSE_SEGMENT_OPS:
    define_op(_op, _sorted_segments_shape)
    define_op(_op + "Grad", _sparse_segment_grad_shape)
    define_op(_op + "GradV2", _sparse_segment_grad_shape)


def _sparse_segment(op_type, data, indices, segment_ids, name, sparse_gradient):
    data = convert_to_tensor(data)
    indices, segment_ids = int_tensor(indices), int_tensor(segment_ids)
    return make_tensor(op_type, [data, indices, segment_ids], data.dtype.base_dtype,
                       name=name or op_type,
                       attrs={"T": data.dtype.base_dtype, "Tidx": indices.dtype.base_dtype,
                              "Tsegmentids": segment_ids.dtype.base_dtype,
                              "sparse_gradient": bool(sparse_gradient)})


def sparse_segment_sum(data, indices, segment_ids, name=None, *, sparse_gradient=False):
    """Sums the rows `indices` of `data` by their sorted `segment_ids`."""
    return _sparse_segment("SparseSegmentSum", data, indices, segment_ids, name,
                           sparse_gradient)


def sparse_segment_mean(data, indices, segment_ids, name=None, *, sparse_gradient=False):
    """Averages the rows `indices` of `data` by their sorted `segment_ids`."""
    return _sparse_segment("SparseSegmentMean", data, indices, segment_ids, name,
                           sparse_gradient)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, *, sparse_gradient=False):
    """Sums the rows `indices` of `data` by their sorted `segment_ids`, each sum divided by
    the square root of its segment's size."""
    return _sparse_segment("SparseSegmentSqrtN", data, indices, segment_ids, name,
                           sparse_gradient)


@RegisterGradient("SparseSegmentSum")
@RegisterGradient("SparseSegmentMean")
@RegisterGradient("SparseSegmentSqrtN")
def _sparse_segment_grad(op, grad):
    data, indices, segment_ids = op.inputs
    dtype = grad.dtype.base_dtype
    if op.get_attr("sparse_gradient"):
        data_shape = shape(data)
        grad_op = make_op(op.type + "GradV2", [grad, indices, segment_ids, data_shape[0]],
                          [dtype, indices.dtype.base_dtype], name=op.type + "GradV2",
                          attrs={"T": dtype, "Tidx": indices.dtype.base_dtype,
                                 "Tsegmentids": segment_ids.dtype.base_dtype})
        values, rows = grad_op.outputs
        return IndexedSlices(values, rows, data_shape), None, None
    rows = shape(data)[0]
    return make_tensor(op.type + "Grad", [grad, indices, segment_ids, rows], dtype,
                       name=op.type + "Grad",
                       attrs={"T": dtype, "Tidx": indices.dtype.base_dtype,
                              "Tsegmentids": segment_ids.dtype.base_dtype}), None, None


# -- boolean_mask ----------------------------------------------------------------------

def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices along `axis`) of `tensor` where `mask` is true, flattened."""
    with op_scope("boolean_mask", name, tensor, mask):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, dtype=dtypes.bool_, name="mask")
        ndims_mask = mask.shape.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        axis = 0 if axis is None else axis
        static = tensor.shape
        static[axis:axis + ndims_mask].assert_is_compatible_with(mask.shape)
        # (a Shape for each use, as TensorFlow's)
        leading = math_ops.reduce_prod(shape(tensor)[axis:axis + ndims_mask], [0])
        tensor = reshape(tensor, concat([shape(tensor)[:axis], [leading],
                                         shape(tensor)[axis + ndims_mask:]], 0))
        if static.ndims is not None:
            tensor.set_shape(static[:axis].concatenate(
                [static[axis:axis + ndims_mask].num_elements()]).concatenate(
                static[axis + ndims_mask:]))
        mask = reshape(mask, [-1])
        indices = squeeze(where(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


# TensorFlow warns above this many elements (framework/indexed_slices.py).
_LARGE_SPARSE_NUM_ELEMENTS = 100000000


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False, warn=True):
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible tensor conversion requested to `dtype` {dtype.name} "
                         f"for IndexedSlices ({value}) with dtype {value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices for argument `value` "
                         f"without dense_shape: {value!s}")
    dense_shape = constant_value(value.dense_shape)
    if warn and dense_shape is not None:
        elements = int(np.prod(dense_shape))
        if elements >= _LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with {elements} "
                          "elements. This may consume a large amount of memory.", stacklevel=2)
    return unsorted_segment_sum(value.values, value.indices, value.dense_shape[0],
                                name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
