"""Input producers and batching: queues filled by QueueRunners, as TensorFlow 1 builds them.

Each function builds ordinary ops (a queue, its enqueue ops, a QueueRunner in
QUEUE_RUNNERS, a summary of how full the queue is); `tf.train.start_queue_runners`
then runs them. Epochs are counted in a LOCAL variable, so
`tf.local_variables_initializer()` must run first. The `maybe_` variants enqueue only
the examples whose `keep_input` is true.

A queue holds dense tensors, so a SparseTensor example is put in a SparseTensorsMap
and its int64 handle is queued; after the dequeue, the batch of handles is taken out
of the map as one SparseTensor whose row i is example i.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import as_shape
from dtfnb.framework import api
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.sparse_tensor import SparseTensor
from dtfnb.ops import (
    array_ops,
    check_ops,
    cond,
    constant_op,
    control_flow_ops,
    io_ops,
    math_ops,
    random_ops,
    slicing_ops,
    sparse_ops,
    summary_ops,
    variables,
)
from dtfnb.ops.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    RandomShuffleQueue,
    dynamic_partition,
)
from dtfnb.train.queue_runner import QueueRunner, add_queue_runner


def match_filenames_once(pattern, name=None):
    """A local variable that holds the paths matching `pattern` (a glob, or a vector of
    them) from when it is initialized (`tf.local_variables_initializer()`) on."""
    with api.name_scope(name, "matching_filenames", [pattern]) as name:
        return variables.Variable(io_ops.matching_files(pattern), name=name, trainable=False,
                                  validate_shape=False,
                                  collections=[GraphKeys.LOCAL_VARIABLES])


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, but each run counts one epoch; past `num_epochs` runs: OutOfRangeError."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with api.name_scope(name, "limit_epochs", [tensor]) as name:
        epochs = variables.Variable(constant_op.constant(0, dtype=dtypes.int64), name="epochs",
                                    trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        with api.control_dependencies([epochs.count_up_to(num_epochs)]):
            return array_ops.identity(tensor, name=name)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A queue of the rows of `input_tensor`, refilled every epoch (shuffled if asked)."""
    # The queue takes `name` itself: given a scope ("input_producer/"), it is that op.
    with api.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                          shapes=[element_shape], shared_name=shared_name, name=name)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            summary_ops.scalar(summary_name, _fraction_full(queue, capacity))
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of file names (the chapter's filename queue for readers)."""
    not_null = "string_input_producer requires a non-null input tensor"
    if not hasattr(string_tensor, "dtype") and not len(string_tensor):
        raise ValueError(not_null)
    with api.name_scope(name, "input_producer", [string_tensor]) as name:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        # A fed or computed empty list fails the runner's enqueue, which closes the queue.
        check = check_ops.Assert(
            math_ops.greater(array_ops.size(string_tensor), 0), [not_null])
        with api.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", name, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 … limit-1, each epoch."""
    with api.name_scope(name, "input_producer", [limit]) as name:
        return input_producer(math_ops.range(limit), [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", name)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of every tensor of `tensor_list` at a time (the same row of each)."""
    with api.name_scope(name, "input_producer", tensor_list):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        rows = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(rows, num_epochs, shuffle, seed, capacity, shared_name)
        index = queue.dequeue()
        return [slicing_ops.gather(t, index) for t in tensor_list]


def _fraction_full(queue, capacity, min_after_dequeue=None):
    """How full `queue` is (above `min_after_dequeue`, for a shuffling one, even 0), in
    [0, 1], as TF's summaries show it."""
    size = queue.size()
    if min_after_dequeue is not None:
        size = math_ops.maximum(0, size - min_after_dequeue)
        capacity -= min_after_dequeue
    return math_ops.cast(size, dtypes.float32) * (1. / capacity)


# -- the structure of the examples: a list (or tuple) of tensors, or a dict of them -----

def _as_tensor_list(tensors):
    """The tensors of a dict in the order of its keys (as strings), else `tensors`."""
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return tensors


def _as_tensor_list_list(tensors_list):
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0])
        if any(set(tensors) != keys for tensors in tensors_list[1:]):
            raise ValueError("All dictionaries in tensors_list must have the same keys")
        return [_as_tensor_list(tensors) for tensors in tensors_list]
    return tensors_list


def _as_original_type(original_tensors, dequeued):
    """`dequeued` (a tensor for one component, else a list) shaped as the input was."""
    if isinstance(original_tensors, dict):
        if len(original_tensors) == 1:
            dequeued = [dequeued]
        return dict(zip(sorted(original_tensors, key=str), dequeued))
    return dequeued


def _as_tensor_or_composite(value):
    return value if isinstance(value, (SparseTensor, IndexedSlices)) else \
        convert_to_tensor(value)


def _validate(tensor_list):
    tensor_list = [_as_tensor_or_composite(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _validate_join(tensor_list_list):
    return [[_as_tensor_or_composite(t) for t in tensor_list]
            for tensor_list in tensor_list_list]


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list):
    types = [t.dtype for t in tensor_list_list[0]]
    for tensor_list in tensor_list_list[1:]:
        other = [t.dtype for t in tensor_list]
        if other != types:
            raise TypeError("Expected types to be consistent: {} vs. {}.".format(
                ", ".join(t.name for t in types), ", ".join(t.name for t in other)))
    return types


def _shapes(tensor_list_list, shapes, enqueue_many):
    """The queue's shapes: `shapes`, else those of the first list's tensors (per example),
    which every other list's must be compatible with."""
    if shapes is not None:
        return shapes
    for tensor_list in tensor_list_list:
        for t in tensor_list[:len(tensor_list_list[0])]:
            if t.shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {t}")
    merged = []
    for column in zip(*tensor_list_list):
        shapes_of = [t.shape.with_rank_at_least(1)[1:] if enqueue_many else t.shape
                     for t in column]
        for shape in shapes_of[1:]:
            shapes_of[0].merge_with(shape)  # raises if incompatible
        merged.append(shapes_of[0].as_list())
    return merged


# -- SparseTensors: queued as handles into a SparseTensorsMap -----------------------------

class _SparseInfo:
    """Of a SparseTensor component: the op that adds it to its map (which the take after
    the dequeue names), and its rank per example (a Dimension)."""

    def __init__(self, map_op, rank):
        self.map_op = map_op
        self.rank = rank

    def matches(self, other):
        return other is not None and self.map_op is other.map_op and \
            self.rank.is_compatible_with(other.rank)


def _store_sparse(t, enqueue_many, keep_input, shared_name):
    """(handles, the op adding `t` to its map): the handle of `t`, or with enqueue_many
    those of its rows, as TensorFlow stores what `keep_input` keeps. What is not kept is
    not stored: -1 stands for it (and its enqueue does not run)."""
    if keep_input.shape.ndims == 1:
        kept_values = slicing_ops.gather(keep_input, t.indices[:, 0])
        handles = sparse_ops.add_many_sparse_to_tensors_map(
            sparse_ops.sparse_retain(t, kept_values), shared_name=shared_name)
        return handles, handles.op
    if enqueue_many:
        handles = cond.smart_cond(
            keep_input,
            lambda: sparse_ops.add_many_sparse_to_tensors_map(t, shared_name=shared_name),
            lambda: -1 * array_ops.ones(array_ops.shape(t)[0:1], dtypes.int64))
        handles.set_shape([None])  # the rows of `t` may be unknown
    else:
        handles = cond.smart_cond(
            keep_input,
            lambda: sparse_ops.add_sparse_to_tensors_map(t, shared_name=shared_name),
            lambda: constant_op.constant(-1, dtypes.int64))
    # Built by a tf.cond, the handles are a Merge of what each branch gives.
    return handles, next((x.op for x in handles.op.inputs if x.op.type in (
        "AddSparseToTensorsMap", "AddManySparseToTensorsMap")), handles.op)


def _store_sparse_tensors(tensor_list, enqueue_many, keep_input, shared_map_ops=None):
    """(what is queued for each of `tensor_list`, their _SparseInfo or None): each
    SparseTensor is stored as handles, in the maps of `shared_map_ops` when given (those
    of the first list of a join, which the one take after the dequeue reads)."""
    shared_map_ops = shared_map_ops or [None] * len(tensor_list)
    stored, infos = [], []
    for t, shared_map_op in zip(tensor_list, shared_map_ops):
        if not isinstance(t, SparseTensor):
            stored.append(t)
            infos.append(None)
            continue
        handles, map_op = _store_sparse(
            t, enqueue_many, keep_input, shared_map_op.name if shared_map_op else None)
        rank = t.dense_shape.shape.with_rank(1)[0]
        stored.append(handles)
        infos.append(_SparseInfo(shared_map_op or map_op, rank - 1 if enqueue_many else rank))
    return [t if info is None else array_ops.expand_dims(t, [-1])
            for t, info in zip(stored, infos)], infos


def _store_sparse_tensors_join(tensor_list_list, enqueue_many, keep_input):
    stored, infos = _store_sparse_tensors(tensor_list_list[0], enqueue_many, keep_input)
    stored_list_list = [stored]
    for tensor_list in tensor_list_list[1:]:
        stored, others = _store_sparse_tensors(
            tensor_list, enqueue_many, keep_input,
            [info.map_op if info else None for info in infos])
        if len(others) != len(infos) or any(
                (a is None) != (b is None) or a is not None and not a.matches(b)
                for a, b in zip(infos, others)):
            raise ValueError(f"Inconsistent SparseTensors list: {tensor_list_list[0]} vs. "
                             f"{tensor_list}")
        stored_list_list.append(stored)
    return stored_list_list, infos


def _restore_sparse_tensors(dequeued, sparse_infos):
    """The dequeued batch with each SparseTensor taken from its map. Every part of a batch
    with one waits for all of them to be taken, as TensorFlow's (which returns a single
    component without the wait it builds for it)."""
    is_list = isinstance(dequeued, (list, tuple))
    parts = [part if info is None else sparse_ops.take_many_sparse_from_tensors_map(
        info.map_op, array_ops.squeeze(part, [1]), rank=(info.rank + 1).value)
        for part, info in zip(dequeued if is_list else [dequeued], sparse_infos)]
    if not any(isinstance(part, SparseTensor) for part in parts):
        return dequeued
    values = [part.values if isinstance(part, SparseTensor) else part for part in parts]

    def after_all(tensor):
        return control_flow_ops.with_dependencies(values, tensor)

    waiting = [SparseTensor(after_all(part.indices), after_all(part.values),
                            after_all(part.dense_shape)) if isinstance(part, SparseTensor)
               else after_all(part) for part in parts]
    return waiting if is_list else parts[0]


# -- enqueueing, with or without keep_input ----------------------------------------------

def _enqueue_op(queue, tensor_list, enqueue_many, keep_input):
    """The op that enqueues `tensor_list`, or of it what `keep_input` keeps."""
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep_input.shape.ndims == 1:
        keep = math_ops.cast(keep_input, dtypes.int32)
        return enqueue([dynamic_partition(t, keep, num_partitions=2)[1] for t in tensor_list])
    return cond.smart_cond(keep_input, lambda: enqueue(tensor_list), control_flow_ops.no_op)


def _enqueue(queue, tensor_list, threads, enqueue_many, keep_input):
    enqueue = _enqueue_op(queue, tensor_list, enqueue_many, keep_input)
    add_queue_runner(QueueRunner(queue, [enqueue] * threads))


def _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input):
    add_queue_runner(QueueRunner(queue, [_enqueue_op(queue, tensor_list, enqueue_many,
                                                     keep_input)
                                         for tensor_list in tensor_list_list]))


def _dequeue(queue, batch_size, allow_smaller_final_batch, name, sparse_infos):
    if allow_smaller_final_batch:
        dequeued = queue.dequeue_up_to(batch_size, name=name)
    else:
        dequeued = queue.dequeue_many(batch_size, name=name)
    return _restore_sparse_tensors(dequeued, sparse_infos)


def _which_queue(dynamic_pad):
    return PaddingFIFOQueue if dynamic_pad else FIFOQueue


# -- the batching functions --------------------------------------------------------------

def _batch(tensors, batch_size, keep_input, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
           name=None):
    tensor_list = _as_tensor_list(tensors)
    with api.name_scope(name, "batch", list(tensor_list) + [keep_input]) as name:
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_infos = _store_sparse_tensors(tensor_list, enqueue_many, keep_input)
        queue = _which_queue(dynamic_pad)(
            capacity=capacity, dtypes=_dtypes([tensor_list]),
            shapes=_shapes([tensor_list], shapes, enqueue_many), shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        summary_ops.scalar(f"fraction_of_{capacity}_full", _fraction_full(queue, capacity))
        return _as_original_type(
            tensors,
            _dequeue(queue, batch_size, allow_smaller_final_batch, name, sparse_infos))


def _prepare_join(tensor_list_list, keep_input, enqueue_many):
    """The joined lists checked, keep_input checked, their SparseTensors stored."""
    tensor_list_list = _validate_join(tensor_list_list)
    keep_input = _validate_keep_input(keep_input, enqueue_many)
    tensor_list_list, sparse_infos = _store_sparse_tensors_join(
        tensor_list_list, enqueue_many, keep_input)
    return tensor_list_list, keep_input, sparse_infos


def _batch_join(tensors_list, batch_size, keep_input, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    tensor_list_list = _as_tensor_list_list(tensors_list)
    with api.name_scope(name, "batch_join",
                        [t for tl in tensor_list_list for t in tl] + [keep_input]) as name:
        tensor_list_list, keep_input, sparse_infos = _prepare_join(
            tensor_list_list, keep_input, enqueue_many)
        queue = _which_queue(dynamic_pad)(
            capacity=capacity, dtypes=_dtypes(tensor_list_list),
            shapes=_shapes(tensor_list_list, shapes, enqueue_many), shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        summary_ops.scalar(f"fraction_of_{capacity}_full", _fraction_full(queue, capacity))
        return _as_original_type(
            tensors_list[0],
            _dequeue(queue, batch_size, allow_smaller_final_batch, name, sparse_infos))


def _shuffle_queue(capacity, min_after_dequeue, seed, tensor_list_list, shapes,
                   enqueue_many, shared_name):
    return RandomShuffleQueue(
        capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
        dtypes=_dtypes(tensor_list_list),
        shapes=_shapes(tensor_list_list, shapes, enqueue_many), shared_name=shared_name)


def _shuffle_summary(queue, capacity, min_after_dequeue):
    summary_ops.scalar(
        f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
        _fraction_full(queue, capacity, min_after_dequeue))


def _check_capacity(capacity, min_after_dequeue):
    if capacity <= min_after_dequeue:
        raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                         f"{min_after_dequeue}.")


def _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                   num_threads=1, seed=None, enqueue_many=False, shapes=None,
                   allow_smaller_final_batch=False, shared_name=None, name=None):
    tensor_list = _as_tensor_list(tensors)
    with api.name_scope(name, "shuffle_batch", list(tensor_list) + [keep_input]) as name:
        _check_capacity(capacity, min_after_dequeue)
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_infos = _store_sparse_tensors(tensor_list, enqueue_many, keep_input)
        queue = _shuffle_queue(capacity, min_after_dequeue, seed, [tensor_list], shapes,
                               enqueue_many, shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        _shuffle_summary(queue, capacity, min_after_dequeue)
        return _as_original_type(
            tensors,
            _dequeue(queue, batch_size, allow_smaller_final_batch, name, sparse_infos))


def _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                        seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    tensor_list_list = _as_tensor_list_list(tensors_list)
    with api.name_scope(name, "shuffle_batch_join",
                        [t for tl in tensor_list_list for t in tl] + [keep_input]) as name:
        tensor_list_list, keep_input, sparse_infos = _prepare_join(
            tensor_list_list, keep_input, enqueue_many)
        queue = _shuffle_queue(capacity, min_after_dequeue, seed, tensor_list_list, shapes,
                               enqueue_many, shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        _shuffle_summary(queue, capacity, min_after_dequeue)
        return _as_original_type(
            tensors_list[0],
            _dequeue(queue, batch_size, allow_smaller_final_batch, name, sparse_infos))


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` examples of `tensors` (a list or dict), filled by
    `num_threads` threads (queue `batch/fifo_queue`); without allow_smaller_final_batch
    a short last batch is dropped."""
    return _batch(tensors, batch_size, True, num_threads, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    """`batch` of the examples whose `keep_input` (a bool scalar, or a vector with
    enqueue_many) is true."""
    return _batch(tensors, batch_size, keep_input, num_threads, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches of examples from several lists (or dicts) of tensors, one enqueue thread
    per list."""
    return _batch_join(tensors_list, batch_size, True, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """`batch_join` of the examples whose `keep_input` is true."""
    return _batch_join(tensors_list, batch_size, keep_input, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Shuffled batches (queue `shuffle_batch/random_shuffle_queue`)."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, True,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """`shuffle_batch` of the examples whose `keep_input` is true."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Shuffled batches from several lists (or dicts) of tensors, one enqueue thread per
    list."""
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, True,
                               seed, enqueue_many, shapes, allow_smaller_final_batch,
                               shared_name, name)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """`shuffle_batch_join` of the examples whose `keep_input` is true."""
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                               keep_input, seed, enqueue_many, shapes,
                               allow_smaller_final_batch, shared_name, name)
