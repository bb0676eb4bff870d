"""tf.data.Dataset, TensorFlow 1's flavour: each method adds one dataset op to the graph.

A dataset op outputs a variant tensor (the dataset, built by its kernel on the
task that runs it) and records the element structure in its `output_types` and
`output_shapes` attrs. Functions given to map and friends are traced into the
graph's function library; the op names them in an attr.
"""

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, as_shape, scalar, unknown_shape
from dtfnb.data import nest
from dtfnb.data.function import trace
from dtfnb.data.generator import GeneratorState
from dtfnb.data.iterator_ops import Iterator, Structured, dense_classes, structure_attrs
from dtfnb.framework.convert import convert_n_to_tensor, convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.random_seed import get_seed
from dtfnb.framework.registry import define_op
from dtfnb.framework.sparse_tensor import (
    SparseTensor,
    convert_to_tensor_or_sparse_tensor,
)
from dtfnb.framework.tensor import Tensor
from dtfnb.ops import array_ops, check_ops, io_ops, math_ops, sparse_ops, string_ops
from dtfnb.ops.building import graph_of, make_op
from dtfnb.ops.script_ops import numpy_function

DATASET_OPS = (
    "TensorDataset", "TensorSliceDataset", "RangeDataset", "ZipDataset", "ConcatenateDataset",
    "RepeatDataset", "BatchDatasetV2", "PaddedBatchDatasetV2", "ShuffleDataset", "MapDataset",
    "ParallelMapDataset", "FilterDataset", "FlatMapDataset", "InterleaveDataset",
    "SkipDataset", "TakeDataset", "PrefetchDataset", "CacheDataset", "TextLineDataset",
    "TFRecordDataset", "FixedLengthRecordDataset", "ShardDataset", "UnbatchDataset",
    "GeneratorDataset")
for _op in DATASET_OPS:
    define_op(_op, lambda op: [scalar()])


def make_dataset(op_type, inputs, output_types, output_shapes, attrs=None,
                 output_classes=None):
    """Adds a dataset op; returns the Dataset of its variant output (of Tensor components
    unless `output_classes` says otherwise)."""
    if output_classes is None:
        output_classes = dense_classes(output_types)
    attrs = dict(attrs or {}, **structure_attrs(output_types, output_shapes, output_classes))
    op = make_op(op_type, inputs, [dtypes.variant], attrs=attrs, graph=graph_of(*inputs))
    op.graph.prevent_feeding(op.outputs[0])
    op.graph.prevent_fetching(op)
    return Dataset(op.outputs[0], output_types, output_shapes, output_classes)


def _int64(value, name):
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _static_int(value):
    return int(value) if isinstance(value, (int, np.integer)) else None


class Dataset(Structured):
    """A dataset of elements; an element is a tensor, or a tuple or dict of them."""

    def __init__(self, variant, output_types, output_shapes, output_classes):
        self._variant = variant
        self._output_types = output_types
        self._output_shapes = output_shapes
        self._output_classes = output_classes


    def _as_variant_tensor(self):
        return self._variant

    def __repr__(self):
        shapes = nest.map_structure(str, self._output_shapes)
        types = nest.map_structure(repr, self._output_types)
        return (f"<DatasetV1Adapter shapes: {_text(shapes)}, types: {_text(types)}>")

    # -- sources ----------------------------------------------------------------------

    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element: `tensors` (SparseTensors among them)."""
        components = _components(tensors)
        return _source("TensorDataset", components, sparse_ops.serialize_sparse,
                       lambda t: t.shape)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None):
        """A dataset of the elements `generator(*args)` yields (each pass of an iterator
        calls it anew), of `output_types` and `output_shapes` (default unknown).

        As TensorFlow builds it: a GeneratorDataset whose functions call the generator
        through tf.numpy_function ops, under a flat_map; so it runs in this process only
        (a graph pinned to another process's task cannot reach the generator)."""
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            raise NotImplementedError("dtfnb's Dataset.from_generator takes output_types "
                                      "and output_shapes, not output_signature")
        if output_types is None:
            raise TypeError("To specify the output signature you need to provide either the "
                            "`output_signature` argument or the `output_types` argument.")
        output_types = nest.map_structure(dtypes.as_dtype, output_types)
        output_shapes = nest.map_structure(
            lambda _: unknown_shape(), output_types) if output_shapes is None else \
            nest.pack_sequence_as(output_types, [as_shape(s) for s in _shape_leaves(
                output_types, output_shapes)])
        args = () if args is None else tuple(convert_n_to_tensor(args, name="args"))
        state = GeneratorState(generator)
        flat_types = nest.flatten(output_types)

        def start(unused_dummy):
            return numpy_function(state.next_id, args, dtypes.int64)

        def next_element(pass_id):
            values = numpy_function(
                lambda i: state.next_values(i, output_types, output_shapes), [pass_id],
                flat_types)
            for value, shape in zip(values, nest.flatten(output_shapes)):
                value.set_shape(shape)
            return nest.pack_sequence_as(output_types, values)

        def finish(pass_id):
            return numpy_function(state.completed, [pass_id], dtypes.int64)

        def generator_dataset(dummy):
            scalar_int = (dtypes.int32, scalar())
            init = trace(start, "from_generator", *scalar_int, graph_of(dummy), _to_tensors)
            by_id = (dtypes.int64, scalar(), graph_of(dummy), _to_tensors)
            following = trace(next_element, "from_generator", *by_id)
            final = trace(finish, "from_generator", *by_id)
            return make_dataset(
                "GeneratorDataset",
                [dummy, *init.captured, *following.captured, *final.captured],
                output_types, output_shapes, attrs={
                    "init_func": init.name, "next_func": following.name,
                    "finalize_func": final.name,
                    "Tinit_func_args": [t.dtype.base_dtype for t in [dummy, *init.captured]],
                    "Tnext_func_args": [t.dtype.base_dtype for t in following.captured],
                    "Tfinalize_func_args": [t.dtype.base_dtype for t in final.captured]})

        return Dataset.from_tensors(0).flat_map(generator_dataset)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """A dataset of the files matching `file_pattern` (a glob, or a vector of them),
        shuffled unless `shuffle` is false (by `seed`, TensorFlow's order); a pattern
        that matches nothing fails the first step with InvalidArgumentError."""
        graph = get_default_graph()
        with graph.name_scope("list_files"):
            file_pattern = convert_to_tensor(file_pattern, dtype=dtypes.string,
                                             name="file_pattern")
            matching = io_ops.matching_files(file_pattern)
            condition = math_ops.greater(array_ops.shape(matching)[0], 0,
                                         name="match_not_empty")
            message = math_ops.add("No files matched pattern: ",
                                   string_ops.reduce_join(file_pattern, separator=", "),
                                   name="message")
            not_empty = check_ops.Assert(condition, [message], summarize=1,
                                         name="assert_not_empty")
            with graph.control_dependencies([not_empty]):
                matching = array_ops.identity(matching)
            dataset = Dataset.from_tensor_slices(matching)
            if shuffle is None or shuffle:
                # a shuffle buffer must hold at least one element, and there may be none
                size = array_ops.shape(matching, out_type=dtypes.int64)[0]
                dataset = dataset.shuffle(math_ops.maximum(size, 1), seed=seed)
            return dataset

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset of the slices of `tensors` along their first dimension."""
        components = _components(tensors)
        for tensor in nest.flatten(components):
            if tensor.shape.ndims == 0:
                raise ValueError(f"Shape must be at least rank 1 but is rank 0 for "
                                 f"'{tensor.op.name}'")
        return _source("TensorSliceDataset", components, sparse_ops.serialize_many_sparse,
                       lambda t: _element_shape(t.shape))

    @staticmethod
    def range(*args):
        """range(stop), range(start, stop) or range(start, stop, step), as int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to range: {args}")
        start, stop, step = ((0, args[0], 1) if len(args) == 1 else
                             (args[0], args[1], 1) if len(args) == 2 else args)
        inputs = [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")]
        return make_dataset("RangeDataset", inputs, dtypes.int64, scalar())

    @staticmethod
    def zip(datasets):
        """Elements of `datasets` (a tuple or dict of datasets) side by side."""
        flat = nest.flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("The argument to `Dataset.zip()` must be a (nested) structure of "
                            "`Dataset` objects.")
        return make_dataset("ZipDataset", [d._variant for d in flat],
                            nest.map_structure(lambda d: d.output_types, datasets),
                            nest.map_structure(lambda d: d.output_shapes, datasets),
                            {"N": len(flat)},
                            nest.map_structure(lambda d: d.output_classes, datasets))

    # -- transformations --------------------------------------------------------------

    def _unary(self, op_type, inputs=(), output_types=None, output_shapes=None, attrs=None,
               output_classes=None):
        return make_dataset(op_type, [self._variant, *inputs],
                            self._output_types if output_types is None else output_types,
                            self._output_shapes if output_shapes is None else output_shapes,
                            attrs,
                            self._output_classes if output_types is None else output_classes)

    def concatenate(self, dataset):
        """A dataset of this dataset's elements followed by those of `dataset` (of the same types).
        """
        if (nest.flatten(self._output_types) != nest.flatten(dataset.output_types)
                or nest.flatten(self._output_classes) != nest.flatten(dataset.output_classes)):
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{_text(self._output_types)} and {_text(dataset.output_types)}")
        shapes = nest.pack_sequence_as(self._output_shapes, [
            _most_specific(a, b) for a, b in zip(nest.flatten(self._output_shapes),
                                                 nest.flatten(dataset.output_shapes))])
        return self._unary("ConcatenateDataset", [dataset._variant], output_shapes=shapes)

    def repeat(self, count=None):
        """Repeats this dataset `count` times (forever if None or -1)."""
        return self._unary("RepeatDataset", [_int64(-1 if count is None else count, "count")])

    def skip(self, count):
        """A dataset that skips the first `count` elements of this one."""
        return self._unary("SkipDataset", [_int64(count, "count")])

    def take(self, count):
        """A dataset of at most the first `count` elements of this one (all if -1)."""
        return self._unary("TakeDataset", [_int64(count, "count")])

    def shard(self, num_shards, index):
        """Every `num_shards`-th element of this dataset from its `index`-th: one worker's
        part of the input, for between-graph replication."""
        return self._unary("ShardDataset", [_int64(num_shards, "num_shards"),
                                            _int64(index, "index")],
                           attrs={"require_non_empty": False})

    def enumerate(self, start=0):
        """(count, element) pairs, the count from `start`."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def unbatch(self):
        """The rows of this dataset's elements, one element each (batch's inverse)."""
        shapes = nest.map_structure(lambda shape: shape[1:], self._output_shapes)
        return self._unary("UnbatchDataset", output_shapes=shapes)

    def apply(self, transformation_func):
        """`transformation_func(self)`, which must return a dataset."""
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object. "
                            f"Got {type(dataset)}.")
        return dataset

    def prefetch(self, buffer_size):
        """A dataset that prepares up to `buffer_size` elements ahead of their request."""
        return self._unary("PrefetchDataset", [_int64(buffer_size, "buffer_size")])

    def cache(self, filename=""):
        """Caches the elements of this dataset in memory, from its first full pass on."""
        if filename:
            raise NotImplementedError("dtfnb caches datasets in memory only (filename='')")
        filename = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
        return self._unary("CacheDataset", [filename])

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Randomly shuffles the elements of this dataset, drawing from a buffer of `buffer_size`
        elements."""
        seed1, seed2 = get_seed(seed)
        inputs = [_int64(buffer_size, "buffer_size"), _int64(seed1 or 0, "seed"),
                  _int64(seed2 or 0, "seed2")]
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._unary("ShuffleDataset", inputs,
                           attrs={"reshuffle_each_iteration": reshuffle})

    def batch(self, batch_size, drop_remainder=False):
        """Combines consecutive elements of this dataset into batches of `batch_size`.

        `drop_remainder`: drop a last batch that is smaller (which gives the batches a known size).
        """
        size = _static_int(batch_size) if drop_remainder is True else None
        shapes = nest.map_structure(lambda s: TensorShape([size]).concatenate(s),
                                    self._output_shapes)
        inputs = [_int64(batch_size, "batch_size"),
                  convert_to_tensor(drop_remainder, dtype=dtypes.bool_, name="drop_remainder")]
        return self._unary("BatchDatasetV2", inputs, output_shapes=shapes)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False):
        """Batches elements padded to `padded_shapes` (None or -1: the longest in the batch)."""
        for dtype, shape, cls in zip(nest.flatten(self._output_types),
                                     nest.flatten(self._output_shapes),
                                     nest.flatten(self._output_classes)):
            if cls is SparseTensor:
                raise TypeError("`padded_batch` is only supported for datasets that produce "
                                "tensor elements but type spec of elements in the input "
                                "dataset is not a subclass of TensorSpec: "
                                f"`SparseTensorSpec({shape!r}, {dtype!r})`.")
        shapes = [as_shape([None if d in (None, -1) else d for d in _dims(s)])
                  for s in nest.flatten(padded_shapes)]
        types = nest.flatten(self._output_types)
        if padding_values is None:
            padding_values = [convert_to_tensor(b"" if t is dtypes.string else 0, dtype=t,
                                                name="padding_value") for t in types]
        else:
            padding_values = [_padding_value(v, t)
                              for v, t in zip(nest.flatten(padding_values), types)]
        size = _static_int(batch_size) if drop_remainder is True else None
        out_shapes = nest.pack_sequence_as(
            self._output_shapes, [TensorShape([size]).concatenate(s) for s in shapes])
        inputs = ([_int64(batch_size, "batch_size")]
                  + [_int64([-1 if d is None else d for d in s.as_list()], "padded_shape")
                     for s in shapes]
                  + padding_values
                  + [convert_to_tensor(drop_remainder, dtype=dtypes.bool_,
                                       name="drop_remainder")])
        return self._unary("PaddedBatchDatasetV2", inputs, output_shapes=out_shapes,
                           attrs={"N": len(shapes)})

    def _trace(self, fn, kind, convert):
        return trace(fn, kind, self._output_types, self._output_shapes,
                     graph_of(self._variant), convert, self._output_classes)

    def map(self, map_func, num_parallel_calls=None):
        """Maps `map_func` across the elements of this dataset (on `num_parallel_calls` threads, if
        given)."""
        f = self._trace(map_func, "map", _to_tensors)
        inputs, attrs = list(f.captured), _function_attrs("f", f)
        op_type = "MapDataset"
        if num_parallel_calls is not None:
            op_type = "ParallelMapDataset"
            inputs.append(convert_to_tensor(num_parallel_calls, dtype=dtypes.int32,
                                            name="num_parallel_calls"))
        return self._unary(op_type, inputs,
                           nest.map_structure(lambda t: t.dtype.base_dtype, f.outputs),
                           nest.map_structure(lambda t: t.shape, f.outputs), attrs,
                           nest.map_structure(_class_of, f.outputs))

    def filter(self, predicate):
        """The elements of this dataset for which `predicate` gives a scalar true."""
        f = self._trace(predicate, "filter", _to_tensors)
        result = f.outputs
        if not isinstance(result, Tensor) or result.dtype.base_dtype is not dtypes.bool_ \
                or not result.shape.is_compatible_with(scalar()):
            raise ValueError(f"`predicate` return type must be convertible to a scalar boolean "
                             f"tensor. Was {_text(nest.map_structure(repr, result))}.")
        return self._unary("FilterDataset", f.captured, attrs=_function_attrs("predicate", f))

    def flat_map(self, map_func):
        """Maps `map_func` (element -> dataset) across this dataset and flattens the results."""
        f, inner = self._trace_dataset_fn(map_func, "flat_map")
        return self._unary("FlatMapDataset", f.captured, inner.output_types,
                           inner.output_shapes, _function_attrs("f", f), inner.output_classes)

    def interleave(self, map_func, cycle_length, block_length=1, num_parallel_calls=None):
        """Maps `map_func` (element -> dataset) across this dataset and interleaves the results.

        It draws `block_length` elements at a time from each of `cycle_length` datasets in turn.
        """
        f, inner = self._trace_dataset_fn(map_func, "interleave")
        inputs = [*f.captured, _int64(cycle_length, "cycle_length"),
                  _int64(block_length, "block_length")]
        return self._unary("InterleaveDataset", inputs, inner.output_types,
                           inner.output_shapes, _function_attrs("f", f), inner.output_classes)

    def _trace_dataset_fn(self, fn, kind):
        returned = []

        def convert(result):
            if not isinstance(result, Dataset):
                raise TypeError(f"`map_func` must return a `Dataset` object. Got "
                                f"{type(result)}")
            returned.append(result)
            return result._variant

        f = self._trace(fn, kind, convert)
        return f, returned[0]

    # -- iterators --------------------------------------------------------------------

    def make_one_shot_iterator(self):
        """An iterator over this dataset's elements that initializes itself on first use."""
        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator over this dataset's elements; run its `initializer` before the first
        `get_next()`."""
        iterator = Iterator.from_structure(self._output_types, self._output_shapes,
                                           shared_name, self._output_classes)
        iterator._initializer = iterator.make_initializer(self)
        return iterator


def _components(tensors):
    """Converts the leaves of a tuple/dict structure to tensors (a list is one tensor) and
    SparseTensors, under TensorFlow's names: "normalize_element/component_<i>" by
    flattened position."""
    if isinstance(tensors, Dataset):
        raise TypeError("A Dataset cannot be an element of another Dataset")
    flat = nest.flatten(tensors)
    with graph_of(*flat).name_scope("normalize_element"):
        flat = [convert_to_tensor_or_sparse_tensor(value, name=f"component_{i}")
                for i, value in enumerate(flat)]
    return nest.pack_sequence_as(tensors, flat)


def _source(op_type, components, serialize, element_shape):
    """A dataset op of `components`, each SparseTensor among them serialized."""
    flat = nest.flatten(components)
    return make_dataset(
        op_type, [serialize(t) if isinstance(t, SparseTensor) else t for t in flat],
        nest.map_structure(lambda t: t.dtype.base_dtype, components),
        nest.map_structure(element_shape, components), None,
        nest.map_structure(_class_of, components))


def _class_of(component):
    return SparseTensor if isinstance(component, SparseTensor) else Tensor


def _shape_leaves(types, shapes):
    """The leaves of `shapes` where `types` has them (a shape is a list, not a structure)."""
    if isinstance(types, tuple):
        return [leaf for t, s in zip(types, shapes) for leaf in _shape_leaves(t, s)]
    if isinstance(types, dict):
        return [leaf for key in sorted(types) for leaf in _shape_leaves(types[key], shapes[key])]
    return [shapes]


def _to_tensors(result):
    """A function's result as tensors, its SparseTensors kept."""
    return nest.map_structure(convert_to_tensor_or_sparse_tensor, result)


def _function_attrs(attr, f):
    return {attr: f.name, "Targuments": [t.dtype.base_dtype for t in f.captured]}


def _element_shape(shape):
    return unknown_shape() if shape.ndims is None else TensorShape(shape.dims[1:])


def _dims(shape):
    if isinstance(shape, Tensor):
        raise TypeError("padded_shapes must be static shapes in dtfnb")
    shape = as_shape(shape)
    return shape.as_list()


def _most_specific(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return unknown_shape()
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def _text(structure):
    if isinstance(structure, tuple):
        return "(" + ", ".join(_text(s) for s in structure) + ")"
    if isinstance(structure, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in structure.items()) + "}"
    return structure


def _padding_value(value, dtype):
    """A padding value as TensorFlow takes it: a scalar already of the component's type
    (a Python -1 is int32, so it cannot pad an int64 component)."""
    if not isinstance(value, Tensor):
        value = convert_to_tensor(value, name="padding_value")
    if value.get_shape().ndims not in (None, 0):
        raise ValueError("Invalid `padding_values`. `padding_values` values should be "
                         f"scalars, but got {value.get_shape()}.")
    if value.dtype != dtype:
        raise TypeError(f"Invalid `padding_values`. `padding_values` values type "
                        f"{value.dtype} does not match type {dtype} of the corresponding "
                        "input component.")
    return value
