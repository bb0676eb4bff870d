"""tf.data kernels: each dataset op builds a dataset object; iterator ops drive one.

Dataset kernels run on the CPU; a traced function runs on the calling kernel's
device through the session's FunctionLibrary.
"""

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import register_kernel
from dtfnb.resources import datasets
from dtfnb.resources.resource_mgr import check_shared_name


def _dataset_kernel(op_type):
    return register_kernel(op_type, device="CPU")


def _function(ctx, attr="f"):
    return ctx.session.functions.instantiate(ctx.attrs[attr], ctx.device)


def _text(value):
    value = value[()] if getattr(value, "ndim", None) == 0 else value
    return value.decode() if isinstance(value, bytes) else str(value)


@_dataset_kernel("TensorDataset")
def _tensors(ctx, step, *components):
    return datasets.Tensors(components)


@_dataset_kernel("TensorSliceDataset")
def _tensor_slices(ctx, step, *components):
    return datasets.TensorSlices(components)


@_dataset_kernel("RangeDataset")
def _range(ctx, step, start, stop, step_size):
    return datasets.Range(start, stop, step_size)


@_dataset_kernel("ZipDataset")
def _zip(ctx, step, *inputs):
    return datasets.Zip(inputs)


@_dataset_kernel("ConcatenateDataset")
def _concatenate(ctx, step, first, second):
    return datasets.Concatenate(first, second)


@_dataset_kernel("RepeatDataset")
def _repeat(ctx, step, dataset, count):
    return datasets.Repeat(dataset, count)


@_dataset_kernel("SkipDataset")
def _skip(ctx, step, dataset, count):
    return datasets.Skip(dataset, count)


@_dataset_kernel("ShardDataset")
def _shard(ctx, step, dataset, num_shards, index):
    return datasets.Shard(dataset, int(num_shards), int(index))


@_dataset_kernel("UnbatchDataset")
def _unbatch(ctx, step, dataset):
    return datasets.Unbatch(dataset)


@_dataset_kernel("TakeDataset")
def _take(ctx, step, dataset, count):
    return datasets.Take(dataset, count)


@_dataset_kernel("PrefetchDataset")
def _prefetch(ctx, step, dataset, buffer_size):
    return dataset  # elements are computed on demand either way


@_dataset_kernel("CacheDataset")
def _cache(ctx, step, dataset, filename):
    if _text(filename):
        raise InvalidArgumentError(None, None, "dtfnb caches datasets in memory only")
    return datasets.Cache(dataset)


@_dataset_kernel("BatchDatasetV2")
def _batch(ctx, step, dataset, batch_size, drop_remainder):
    return datasets.Batch(dataset, batch_size, drop_remainder)


@_dataset_kernel("PaddedBatchDatasetV2")
def _padded_batch(ctx, step, dataset, batch_size, *rest):
    n = ctx.attrs["N"]
    shapes, values, drop_remainder = rest[:n], rest[n:2 * n], rest[2 * n]
    return datasets.PaddedBatch(dataset, batch_size, drop_remainder, shapes, values)


@_dataset_kernel("ShuffleDataset")
def _shuffle(ctx, step, dataset, buffer_size, seed, seed2):
    return datasets.Shuffle(dataset, buffer_size, int(seed), int(seed2),
                            ctx.attrs.get("reshuffle_each_iteration", True))


@_dataset_kernel("MapDataset")
def _map(ctx, step, dataset, *captured):
    return datasets.Map(dataset, _function(ctx), captured)


@_dataset_kernel("ParallelMapDataset")
def _parallel_map(ctx, step, dataset, *captured_and_calls):
    return datasets.Map(dataset, _function(ctx), captured_and_calls[:-1])


@_dataset_kernel("FilterDataset")
def _filter(ctx, step, dataset, *captured):
    return datasets.Filter(dataset, _function(ctx, "predicate"), captured)


@_dataset_kernel("FlatMapDataset")
def _flat_map(ctx, step, dataset, *captured):
    return datasets.FlatMap(dataset, _function(ctx), captured)


@_dataset_kernel("GeneratorDataset")
def _generator(ctx, step, *inputs):
    counts = [len(ctx.attrs[f"T{kind}_func_args"]) for kind in ("init", "next", "finalize")]
    init_args = inputs[:counts[0]]
    next_args = inputs[counts[0]:counts[0] + counts[1]]
    finalize_args = inputs[counts[0] + counts[1]:]
    return datasets.Generator(_function(ctx, "init_func"), init_args,
                              _function(ctx, "next_func"), next_args,
                              _function(ctx, "finalize_func"), finalize_args)


@_dataset_kernel("InterleaveDataset")
def _interleave(ctx, step, dataset, *rest):
    captured, cycle_length, block_length = rest[:-2], rest[-2], rest[-1]
    return datasets.Interleave(dataset, _function(ctx), captured, cycle_length, block_length)


@_dataset_kernel("TextLineDataset")
def _text_lines(ctx, step, filenames, compression_type, buffer_size):
    return datasets.TextLines(filenames, _text(compression_type))


@_dataset_kernel("TFRecordDataset")
def _tfrecords(ctx, step, filenames, compression_type, buffer_size):
    return datasets.TFRecords(filenames, _text(compression_type))


@_dataset_kernel("FixedLengthRecordDataset")
def _fixed_length_records(ctx, step, filenames, header_bytes, record_bytes, footer_bytes,
                          buffer_size):
    return datasets.FixedLengthRecords(filenames, header_bytes, record_bytes,
                                       footer_bytes)


# -- iterators ---------------------------------------------------------------------------

@_dataset_kernel("IteratorV2")
def _iterator(ctx, step):
    name = ctx.attrs.get("shared_name")
    if name:
        check_shared_name(name)
        return ctx.resource_mgr.lookup_or_create(ctx.attrs.get("container", ""), name,
                                                 datasets.IteratorResource)
    # no shared_name: TensorFlow's anonymous iterator, one per session
    return ctx.state.setdefault("iterator", datasets.IteratorResource())


@_dataset_kernel("OneShotIterator")
def _one_shot_iterator(ctx, step, dataset):
    iterator = ctx.state.get("iterator")
    if iterator is None:
        iterator = datasets.IteratorResource()
        iterator.initialize(dataset)
        iterator = ctx.state.setdefault("iterator", iterator)
    return iterator


@_dataset_kernel("MakeIterator")
def _make_iterator(ctx, step, dataset, iterator):
    iterator.initialize(dataset)


@_dataset_kernel("IteratorGetNext")
def _get_next(ctx, step, iterator):
    element = iterator.get_next()
    return element if len(element) > 1 else element[0]


# -- the arguments and results of a traced function (see runtime/functions.py) -------------

@register_kernel("_Arg")
def _arg(ctx, step):
    return step.feeds[ctx.attrs["name"]]


@register_kernel("_Retval")
def _retval(ctx, step, value):
    step.fetched[ctx.attrs["index"]] = value
