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
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, clip_ops, data_flow_ops, math_ops
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
                total = math_ops.reduce_sum(math_ops.cast(array_ops.stack(sizes),
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
        result = array_ops.reshape(result, array_ops.concat(
            [array_ops.shape(ids), element_dynamic], 0))
        result.set_shape(ids.shape.concatenate(element))
        return _clip(result, ids, max_norm)
