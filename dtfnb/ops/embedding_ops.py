"""tf.nn.embedding_lookup and embedding_lookup_sparse: rows of a table that may be split
into parts (a list of tensors or variables, or a PartitionedVariable, which iterates into
its variables), placed where the parts are.

Each part is read by a gather colocated with it, so that only the rows looked up leave
its task, and its gradient is an IndexedSlices of those rows (slicing_ops' gather
gradient), which an optimizer applies sparsely on the part's task.
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import Dimension
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import (
    array_ops,
    clip_ops,
    data_flow_ops,
    joining_ops,
    math_ops,
    slicing_ops,
    unary_ops,
)
from dtfnb.ops.building import op_scope
from dtfnb.ops.slicing_ops import gather
from dtfnb.ops.variables import Variable


def _parts(params):
    """params as a list of parts: a list as it is, another iterable of variables (a
    PartitionedVariable) as its items, anything else as the one part."""
    if params is None:
        raise ValueError("params must be specified")
    if not isinstance(params, (list, tuple, np.ndarray, str, Tensor, Variable)) \
            and hasattr(params, "__iter__"):
        params = list(params)
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    return params if isinstance(params, list) else [params]


def _clip(rows, ids, max_norm):
    """rows clipped to an l2-norm of max_norm over their embedding dimensions."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = convert_to_tensor(ids).shape.ndims, rows.shape.ndims
    axes = list(range(ids_rank, rows_rank)) if ids_rank and rows_rank else \
        math_ops.range(array_ops.rank(ids), array_ops.rank(rows))
    return clip_ops.clip_by_norm(rows, max_norm, axes=axes)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows `ids` of the table `params`: one tensor or variable, or a list of parts
    (or a PartitionedVariable) whose rows are the table's, dealt out by
    `partition_strategy`: "mod" (row i in part i % n) or "div" (contiguous ranges, the
    first parts one row longer when n does not divide the size). `max_norm` clips each
    embedding to that l2-norm. `validate_indices` is ignored, as in TensorFlow: the
    gather always checks its indices.

    Returns:
      A tensor of shape `ids.shape + params[0].shape[1:]`.
    """
    params = _parts(params)
    graph = get_default_graph()
    with op_scope("embedding_lookup", name, *params, ids) as scope:
        n = len(params)
        params = [convert_to_tensor(p, name=f"params_{i}") for i, p in enumerate(params)]
        ids = convert_to_tensor(ids, name="ids")
        if n == 1:
            with graph.colocate_with(params[0].op):
                result = _clip(gather(params[0], ids, name=scope), ids, max_norm)
            return array_ops.identity(result)
        flat_ids = array_ops.reshape(ids, [-1])
        original_indices = math_ops.range(array_ops.size(flat_ids, out_type=dtypes.int32))
        if partition_strategy == "mod":
            assignments = flat_ids % n
            new_ids = flat_ids // n
        elif partition_strategy == "div":
            total = sum((Dimension(p.shape[0].value) for p in params[1:]),
                        Dimension(params[0].shape[0].value))
            if total.value:
                total = convert_to_tensor(total.value, flat_ids.dtype)
            else:
                sizes = []
                for p in params:
                    if p.shape[0].value is not None:
                        sizes.append(p.shape[0].value)
                    else:
                        with graph.colocate_with(p.op):
                            sizes.append(array_ops.shape(p)[0])
                total = math_ops.reduce_sum(math_ops.cast(joining_ops.stack(sizes),
                                                          flat_ids.dtype))
            per_part = total // n
            extras = total % n
            assignments = math_ops.maximum(flat_ids // (per_part + 1),
                                           (flat_ids - extras) // per_part)
            new_ids = array_ops.where(assignments < extras, flat_ids % (per_part + 1),
                                      (flat_ids - extras) % per_part)
        else:
            raise ValueError(f"Unrecognized partition strategy: {partition_strategy}."
                             "Must be one of either `mod` or `div`.")
        assignments = math_ops.cast(assignments, dtypes.int32)
        gather_ids = data_flow_ops.dynamic_partition(new_ids, assignments, n)
        part_indices = data_flow_ops.dynamic_partition(original_indices, assignments, n)
        rows = []
        for p, part_ids in zip(params, gather_ids):
            with graph.device(None), graph.colocate_with(p.op):
                rows.append(gather(p, part_ids))
        result = data_flow_ops.parallel_dynamic_stitch(part_indices, rows, name=scope)
        element = params[0].shape[1:]
        for p in params[1:]:
            element = element.merge_with(p.shape[1:])
        if element.is_fully_defined():
            element_dynamic = element.as_list()
        else:
            with graph.colocate_with(params[0].op):
                element_dynamic = array_ops.shape(params[0])[1:]
        result = array_ops.reshape(result, joining_ops.concat(
            [array_ops.shape(ids), element_dynamic], 0))
        result.set_shape(ids.shape.concatenate(element))
        return _clip(result, ids, max_norm)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None, allow_fast_lookup=False):
    """One embedding per row of the SparseTensor `sp_ids`: the rows of `params` its ids
    name, weighted by `sp_weights` (a SparseTensor like sp_ids, or None for 1s) and
    combined by `combiner`: "sum", "mean" (the default: the weighted mean) or "sqrtn"
    (the sum over the root of the sum of squared weights). `params` is as for
    embedding_lookup. TensorFlow 2.21's paths: unweighted on one table beside the ids, a
    sparse segment reduction of the table (its gradient an IndexedSlices); otherwise the
    distinct ids looked up, then reduced."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    params = _parts(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    ignore_weights = sp_weights is None
    if not ignore_weights:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor,"
                            f"got {type(sp_weights)}")
        for part in ("values", "indices", "dense_shape"):
            getattr(sp_ids, part).shape.assert_is_compatible_with(
                getattr(sp_weights, part).shape)
    with op_scope("embedding_lookup_sparse", name, *params, sp_ids) as scope:
        segment_ids = convert_to_tensor(sp_ids.indices[:, 0], name="segment_ids")
        ids = sp_ids.values
        if len(params) == 1 and not isinstance(params[0], Tensor):
            params = [convert_to_tensor(params[0], name="params")]
        if (len(params) == 1 and isinstance(params[0], Tensor)
                and params[0].device == segment_ids.device and max_norm is None
                and (allow_fast_lookup or ignore_weights)):
            idx, embeddings = ids, params[0]
            sparse_gradient = not allow_fast_lookup
        else:
            ids, idx = array_ops.unique(ids)
            embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                          max_norm=max_norm)
            sparse_gradient = False
        if ignore_weights:
            if segment_ids.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
                segment_ids = math_ops.cast(segment_ids, dtypes.int32)
            reduce = {"sum": slicing_ops.sparse_segment_sum,
                      "mean": slicing_ops.sparse_segment_mean,
                      "sqrtn": slicing_ops.sparse_segment_sqrt_n}[combiner]
            return reduce(embeddings, idx, segment_ids, name=scope,
                          sparse_gradient=sparse_gradient)
        return _weighted(embeddings, idx, segment_ids, sp_weights.values, combiner, scope)


def _weighted(embeddings, idx, segment_ids, weights, combiner, name):
    """The embeddings of `idx`, times their weights, reduced by segment as `combiner`."""
    if segment_ids.dtype.base_dtype != dtypes.int32:
        segment_ids = math_ops.cast(segment_ids, dtypes.int32)
    embeddings = gather(embeddings, idx)
    if weights.dtype.base_dtype != embeddings.dtype.base_dtype:
        weights = math_ops.cast(weights, embeddings.dtype)
    # The weights broadcast over each embedding's dimensions.
    ones_shape = array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0)
    weights_shape = array_ops.shape(weights)
    ones = array_ops.ones(ones_shape, dtype=weights_shape.dtype)
    static = weights.shape
    weights = array_ops.reshape(weights, joining_ops.concat([weights_shape, ones], 0))
    if embeddings.shape.ndims is not None:
        weights.set_shape(static.concatenate([1] * (embeddings.shape.ndims - 1)))
    embeddings *= weights
    if combiner == "sum":
        return slicing_ops.segment_sum(embeddings, segment_ids, name=name)
    total = slicing_ops.segment_sum(embeddings, segment_ids)
    if combiner == "mean":
        return math_ops.div_no_nan(total, slicing_ops.segment_sum(weights, segment_ids),
                                   name=name)
    weight_sum = slicing_ops.segment_sum(math_ops.pow(weights, 2), segment_ids)
    return math_ops.div_no_nan(total, unary_ops.sqrt(weight_sum), name=name)
