"""Tracing the Python functions given to map, filter, flat_map and interleave.

A function is called once, on placeholders, inside a FuncGraph; the body goes to
the graph's function library as a FunctionDef, and the dataset op names it in an
attr. Outer tensors the body uses are captured: the dataset op takes them as
extra inputs, so their values travel like any other tensor.
"""

import itertools
import re

from dtfnb.base import dtypes
from dtfnb.base.shapes import unknown_shape
from dtfnb.data import nest
from dtfnb.framework.func_graph import FuncGraph
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import sparse_ops

_ids = itertools.count(1)  # process-wide, so that nested traces never share a name


class TracedFunction:
    """A traced function: its name, the outer tensors it captured, its output structure."""

    def __init__(self, name, captured, outputs):
        self.name = name
        self.captured = captured
        self.outputs = outputs  # a structure of tensors and SparseTensors of the body graph


def trace(fn, kind, input_types, input_shapes, outer_graph, convert, input_classes=None):
    """Traces `fn` called with one element of the given structure.

    `convert(result)` turns what `fn` returned into a structure of tensors (a dataset
    into its variant tensor, Python values into constants) and SparseTensors. A
    SparseTensor crosses the function's edge as one variant, as TensorFlow's datasets
    carry it (`input_classes` says which inputs are SparseTensors).
    """
    fn_name = re.sub(r"\W", "", getattr(fn, "__name__", "fn")) or "fn"
    graph = FuncGraph(f"__inference_Dataset_{kind}_{fn_name}_{next(_ids)}", outer_graph)
    flat_classes = (nest.flatten(input_classes) if input_classes is not None
                    else [Tensor] * len(nest.flatten(input_types)))
    with graph.as_default():
        args = [_argument(graph, dtype, shape, cls, i) for i, (dtype, shape, cls) in
                enumerate(zip(nest.flatten(input_types), nest.flatten(input_shapes),
                              flat_classes))]
        element = nest.pack_sequence_as(input_types, args)
        # a tuple element is passed as separate arguments, as TensorFlow does
        result = fn(*element) if isinstance(element, tuple) else fn(element)
        outputs = nest.map_structure(
            lambda t: t if isinstance(t, SparseTensor) else graph.capture(t),
            convert(nest.lists_to_tuples(result)))
        flat = [sparse_ops.serialize_sparse(t) if isinstance(t, SparseTensor) else t
                for t in nest.flatten(outputs)]
    graph.add_function(graph.to_function_def(flat))
    return TracedFunction(graph.name, list(graph.captures), outputs)


def _argument(graph, dtype, shape, cls, i):
    if cls is SparseTensor:
        variant = graph.add_argument(dtypes.variant, unknown_shape(), f"args_{i}")
        return sparse_ops.deserialize_sparse(variant, dtype, shape)
    return graph.add_argument(dtype, shape, f"args_{i}")
