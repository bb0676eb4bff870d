"""Input producers and batching: queues filled by QueueRunners, as TensorFlow 1 builds them.

Each function builds ordinary ops (a queue, its enqueue ops, a QueueRunner in
QUEUE_RUNNERS); `tf.train.start_queue_runners` then runs them. Epochs are counted
in a LOCAL variable, so `tf.local_variables_initializer()` must run first.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, as_shape
from dtfnb.framework import api
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import (
    array_ops,
    control_flow_ops,
    io_ops,
    math_ops,
    random_ops,
    slicing_ops,
    variables,
)
from dtfnb.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
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
        epochs = variables.Variable(array_ops.zeros([], dtype=dtypes.int64), name="epochs",
                                    trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        with api.control_dependencies([epochs.count_up_to(num_epochs)]):
            return array_ops.identity(tensor, name=name)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A queue of the rows of `input_tensor`, refilled every epoch (shuffled if asked)."""
    with api.name_scope(name, "input_producer", [input_tensor]) as name:
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
        check = control_flow_ops.Assert(
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


def _flatten(tensors):
    """(list of tensors, rebuild) for a list, tuple, dict or single tensor."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [tensors[k] for k in keys], lambda out: dict(zip(keys, out))
    if isinstance(tensors, (list, tuple)):
        # One component comes back as a tensor, as TensorFlow's dequeue gives it.
        return list(tensors), lambda out: out if len(out) > 1 else out[0]
    return [tensors], lambda out: out[0]


def _shapes(tensor_lists, shapes, enqueue_many, dynamic_pad):
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    merged = []
    for column in zip(*tensor_lists):
        shape = TensorShape(None)
        for t in column:
            shape = shape.merge_with(t.shape[1:] if enqueue_many else t.shape)
        if not dynamic_pad and not shape.is_fully_defined():
            raise ValueError(f"All shapes must be fully defined: {column}")
        merged.append(shape)
    return merged


def _batch(tensor_lists, rebuild, queue, batch_size, num_threads, enqueue_many,
           allow_smaller_final_batch, name):
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    if len(tensor_lists) == 1:
        ops = [enqueue(tensor_lists[0])] * num_threads
    else:
        ops = [enqueue(tensors) for tensors in tensor_lists]
    add_queue_runner(QueueRunner(queue, ops))
    dequeue = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
    dequeued = dequeue(batch_size, name=name)
    return rebuild(dequeued if isinstance(dequeued, (list, tuple)) else [dequeued])


def _queue_args(tensor_lists, shapes, enqueue_many, dynamic_pad=False):
    lists = [[convert_to_tensor(t) for t in tensors] for tensors in tensor_lists]
    types = [t.dtype.base_dtype for t in lists[0]]
    return lists, types, _shapes(lists, shapes, enqueue_many, dynamic_pad)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches of examples from several lists of tensors, one enqueue thread per list."""
    flat = [_flatten(t) for t in tensors_list]
    with api.name_scope(name, "batch_join", [t for ts, _ in flat for t in ts]) as name:
        lists, types, shapes = _queue_args([ts for ts, _ in flat], shapes, enqueue_many,
                                           dynamic_pad)
        queue_type = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_type(capacity=capacity, dtypes=types, shapes=shapes,
                           shared_name=shared_name)
        return _batch(lists, flat[0][1], queue, batch_size, 1, enqueue_many,
                      allow_smaller_final_batch, name)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` examples, filled by `num_threads` threads (queue
    `batch/fifo_queue`); without allow_smaller_final_batch a short last batch is dropped."""
    flat, rebuild = _flatten(tensors)
    with api.name_scope(name, "batch", flat) as name:
        lists, types, shapes = _queue_args([flat], shapes, enqueue_many, dynamic_pad)
        queue_type = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_type(capacity=capacity, dtypes=types, shapes=shapes,
                           shared_name=shared_name)
        return _batch(lists, rebuild, queue, batch_size, num_threads, enqueue_many,
                      allow_smaller_final_batch, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Shuffled batches from several lists of tensors, one enqueue thread per list."""
    flat = [_flatten(t) for t in tensors_list]
    with api.name_scope(name, "shuffle_batch_join", [t for ts, _ in flat for t in ts]) as name:
        lists, types, shapes = _queue_args([ts for ts, _ in flat], shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed, dtypes=types, shapes=shapes,
                                   shared_name=shared_name)
        return _batch(lists, flat[0][1], queue, batch_size, 1, enqueue_many,
                      allow_smaller_final_batch, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Shuffled batches (queue `shuffle_batch/random_shuffle_queue`)."""
    flat, rebuild = _flatten(tensors)
    with api.name_scope(name, "shuffle_batch", flat) as name:
        lists, types, shapes = _queue_args([flat], shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed, dtypes=types, shapes=shapes,
                                   shared_name=shared_name)
        return _batch(lists, rebuild, queue, batch_size, num_threads, enqueue_many,
                      allow_smaller_final_batch, name)
