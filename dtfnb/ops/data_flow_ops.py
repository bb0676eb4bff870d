"""Queues: FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue over QueueBase;
and dynamic_partition, TensorFlow's other data-flow op that conditional batching uses.

A queue is a stateful handle op (`FIFOQueueV2`, …; dtype resource) whose resource
lives in the task that runs it, shared by `shared_name` within a container; every
access op takes the handle as input, so the placer keeps it next to the queue.
Names, static shapes and build-time checks follow TensorFlow 1's data_flow_ops.
"""

import functools
import hashlib

from dtfnb.base import dtypes as _dtypes
from dtfnb.base.shapes import TensorShape, as_shape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.indexed_slices import IndexedSlices
from dtfnb.framework.random_seed import get_seed
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.ops import array_ops
from dtfnb.ops.building import make_op, make_tensor
from dtfnb.ops.joining_ops import stack
from dtfnb.ops.shape_util import constant_value, shape_error
from dtfnb.ops.slicing_ops import gather, unsorted_segment_sum

_HANDLES = ("FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2")
for _op in _HANDLES:
    define_op(_op, lambda op: [scalar()], stateful=True)
for _op in ("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueCloseV2"):
    define_op(_op, lambda op: [], stateful=True)
# Dequeue outputs get their static shapes from the queue's builder (as in TensorFlow).
for _op in ("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"):
    define_op(_op, None, stateful=True)
define_op("QueueSizeV2", lambda op: [scalar()], stateful=True)
define_op("QueueIsClosedV2", lambda op: [scalar()], stateful=True)
for _op in _HANDLES + ("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueCloseV2", "QueueDequeueV2",
                       "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueSizeV2",
                       "QueueIsClosedV2"):
    NotDifferentiable(_op)


def _dynamic_partition_shape(op):
    data, partitions = (t.shape for t in op.inputs)
    count = op.get_attr("num_partitions")
    if partitions.ndims is None:
        return [unknown_shape()] * count
    if data.ndims is not None:
        if data.ndims < partitions.ndims:
            raise shape_error(op, f"Shape must be at least rank {partitions.ndims} but is "
                                  f"rank {data.ndims}")
        for d, p in zip(data.as_list(), partitions.as_list()):
            if None not in (d, p) and d != p:
                raise shape_error(op, f"Dimensions must be equal, but are {d} and {p}")
    suffix = data[partitions.ndims:] if data.ndims is not None else unknown_shape()
    return [TensorShape([None]).concatenate(suffix)] * count


define_op("DynamicPartition", _dynamic_partition_shape)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """`num_partitions` tensors: the slices of `data` whose entry in `partitions` (an int32
    tensor of a prefix of data's shape) is 0, 1, …, in their order in `data`."""
    data = convert_to_tensor(data, name="data")
    partitions = convert_to_tensor(partitions, _dtypes.int32, name="partitions")
    if num_partitions < 1:
        raise ValueError(f"Attr num_partitions has value {num_partitions} < 1")
    return make_op("DynamicPartition", [data, partitions],
                   [data.dtype.base_dtype] * num_partitions, name=name or "DynamicPartition",
                   attrs={"T": data.dtype.base_dtype,
                          "num_partitions": int(num_partitions)}).outputs


def _dynamic_stitch_shape(op):
    n = op.get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    element = unknown_shape()
    for index, values in zip(indices, data):
        if index.shape.ndims is None or values.shape.ndims is None:
            continue
        if not values.shape[:index.shape.ndims].is_compatible_with(index.shape):
            raise shape_error(op, f"Dimensions must be equal, but are "
                                  f"{values.shape[:index.shape.ndims]} and {index.shape}")
        element = element.merge_with(values.shape[index.shape.ndims:])
    known = [constant_value(t) for t in indices]
    rows = None if any(k is None for k in known) else \
        max((int(k.max()) for k in known if k.size), default=-1) + 1
    return [TensorShape([rows]).concatenate(element)]


for _op in ("DynamicStitch", "ParallelDynamicStitch"):
    define_op(_op, _dynamic_stitch_shape)


def _stitch(op_type, indices, data, name):
    indices = [convert_to_tensor(t, _dtypes.int32) for t in indices]
    data = [convert_to_tensor(t) for t in data]
    if len(indices) != len(data):
        raise ValueError(f"List argument 'data' to '{op_type}' Op with length {len(data)} "
                         f"must match length {len(indices)} of argument 'indices'.")
    return make_tensor(op_type, indices + data, data[0].dtype.base_dtype, name=name or op_type,
                       attrs={"N": len(data), "T": data[0].dtype.base_dtype})


def dynamic_stitch(indices, data, name=None):
    """Interleaves `data` into one tensor: `merged[indices[m][i]] = data[m][i]`, the
    last of repeated indices winning."""
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices, data, name=None):
    """dynamic_stitch, where an index repeated takes any one of its values."""
    return _stitch("ParallelDynamicStitch", indices, data, name)


@RegisterGradient("DynamicStitch")
@RegisterGradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = op.get_attr("N")
    if isinstance(grad, IndexedSlices):
        grad = unsorted_segment_sum(grad.values, grad.indices,
                                    array_ops.shape(op.outputs[0])[0])
    return [None] * n + [gather(grad, index) for index in op.inputs[:n]]


class QueueBase:
    """A queue of tuples of tensors: enqueue, dequeue, close and size ops on one handle."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                                 f"len(shapes)={len(shapes)}, len(dtypes)={len(dtypes)}")
            self._shapes = [as_shape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in dtypes]
        if names is not None and len(names) != len(dtypes):
            raise ValueError(f"Queue names must have the same length as dtypes,received "
                             f"len(names)={len(names)},len {len(dtypes)}")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue that is `queues[index]`, chosen when it runs (`index`: an int32 tensor);
        its shapes are what the queues' shapes have in common."""
        if not queues or not isinstance(queues, list) or not all(
                isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if not all(dtypes == q.dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if not all(names == q.names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = [functools.reduce(_most_specific_common_shape, s)
                  for s in zip(*(q.shapes for q in queues))]
        refs = stack([q.queue_ref for q in queues])
        return QueueBase(dtypes, shapes, names, gather(refs, index))

    @property
    def queue_ref(self):
        """The queue's resource handle: the tensor the queue's ops take as their first input."""
        return self._queue_ref

    @property
    def name(self):
        """The name of the queue's op."""
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        """The dtypes of the components of an element."""
        return self._dtypes

    @property
    def shapes(self):
        """The shapes of the components of an element (unknown shapes if none were given)."""
        return self._shapes

    @property
    def names(self):
        """The names of the components of an element, if the queue was built with names."""
        return self._names

    def _check_enqueue_dtypes(self, vals):
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  "
                                 f"Dictionary: {sorted(vals.keys())},Queue: "
                                 f"{sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        return [convert_to_tensor(v, dtype=t, name=f"component_{i}")
                for i, (v, t) in enumerate(zip(vals, self._dtypes))]

    def _graph(self):
        return self._queue_ref.graph

    def enqueue(self, vals, name=None):
        """An op that enqueues one element (a tensor, a tuple, or a dict with names)."""
        graph = self._graph()
        with graph.as_default(), graph.name_scope(name or f"{self._name}_enqueue") as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.assert_is_compatible_with(shape)
            return make_op("QueueEnqueueV2", [self._queue_ref, *vals], [], name=scope,
                           attrs={"Tcomponents": [v.dtype for v in vals], "timeout_ms": -1})

    def enqueue_many(self, vals, name=None):
        """An op that enqueues each slice along the 0th dimension of `vals` as an element."""
        graph = self._graph()
        with graph.as_default(), graph.name_scope(name or f"{self._name}_EnqueueMany") as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch = vals[0].shape.with_rank_at_least(1)[0]
            for val, shape in zip(vals, self._shapes):
                batch = batch.merge_with(val.shape.with_rank_at_least(1)[0])
                val.shape[1:].assert_is_compatible_with(shape)
            return make_op("QueueEnqueueManyV2", [self._queue_ref, *vals], [], name=scope,
                           attrs={"Tcomponents": [v.dtype for v in vals], "timeout_ms": -1})

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: t for n, t in zip(self._names, tensors)}
        return tensors[0] if len(tensors) == 1 else tensors

    def _dequeue_op(self, op_type, name, n=None):
        graph = self._graph()
        inputs = [self._queue_ref]
        with graph.as_default(), graph.name_scope(name) as scope:
            if n is not None:
                inputs.append(convert_to_tensor(n, dtype=_dtypes.int32, name="n"))
            op = make_op(op_type, inputs, list(self._dtypes), name=scope,
                         attrs={"component_types": list(self._dtypes), "timeout_ms": -1})
        return op

    def dequeue(self, name=None):
        """Dequeues one element; blocks while the queue is empty."""
        op = self._dequeue_op("QueueDequeueV2", name or f"{self._name}_Dequeue")
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(shape)
        return self._dequeue_return_value(op.outputs)

    def dequeue_many(self, n, name=None):
        """Dequeues and stacks n elements; fails if the queue closes with fewer."""
        op = self._dequeue_op("QueueDequeueManyV2", name or f"{self._name}_DequeueMany", n)
        value = constant_value(op.inputs[1])
        batch = TensorShape([None if value is None else int(value)])
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but a closed queue gives what it has left (at least one)."""
        op = self._dequeue_op("QueueDequeueUpToV2", name or f"{self._name}_DequeueUpTo", n)
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(TensorShape([None]).concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: pending enqueues finish first, unless cancelled."""
        return make_op("QueueCloseV2", [self._queue_ref], [], name=name or f"{self._name}_Close",
                       attrs={"cancel_pending_enqueues": bool(cancel_pending_enqueues)})

    def is_closed(self, name=None):
        """A bool tensor: whether the queue has been closed."""
        return make_tensor("QueueIsClosedV2", [self._queue_ref], _dtypes.bool_,
                           name=name or f"{self._name}_Is_Closed")

    def size(self, name=None):
        """A scalar int32 tensor: the number of elements in the queue."""
        return make_tensor("QueueSizeV2", [self._queue_ref], _dtypes.int32,
                           name=name or f"{self._name}_Size")


def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(dtypes)]
    return [_dtypes.as_dtype(t) for t in dtypes]


def _as_shape_list(shapes, unknown_dim_allowed=False):
    if unknown_dim_allowed and (not isinstance(shapes, (list, tuple)) or not shapes or any(
            s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError(f"Shapes must be a TensorShape or a list or tuple of TensorShapes, got "
                        f"{type(shapes)} instead.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    shapes = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError(f"List of names must have the same length as the list of dtypes, "
                         f"received len(names)={len(names)},len(dtypes)={len(dtypes)}")
    return list(names)


def _most_specific_common_shape(a, b):
    """The most specific shape that both shapes are instances of."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return unknown_shape()
    return TensorShape([x if x is not None and x == y else None
                        for x, y in zip(a.as_list(), b.as_list())])


def _queue_ref(op_type, name, dtypes, shapes, capacity, shared_name, **attrs):
    return make_tensor(op_type, [], _dtypes.resource, name=name, attrs={
        "component_types": dtypes, "shapes": shapes or [], "capacity": int(capacity),
        "container": "", "shared_name": shared_name or "", **attrs})


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        graph = get_default_graph()
        # Only FIFOQueue's handle is pinned to a CPU, outside any control dependencies.
        with graph.control_dependencies(None), graph.device("CPU"):
            ref = _queue_ref("FIFOQueueV2", name, dtypes, shapes, capacity, shared_name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose dequeue_many pads unknown dimensions to the batch's largest."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {len(shapes)} shapes.")
        ref = _queue_ref("PaddingFIFOQueueV2", name, dtypes, shapes, capacity, shared_name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues a random element, keeping min_after_dequeue until closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # A graph seed without an op seed: seed2 from the shared name, not the op count,
            # so that every graph sharing the queue asks for the same seeds.
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        ref = _queue_ref("RandomShuffleQueueV2", name, dtypes, shapes, capacity, shared_name,
                         min_after_dequeue=int(min_after_dequeue), seed=seed1, seed2=seed2)
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue of (int64 priority, …) tuples that dequeues the lowest priority first."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)  # names are not checked before the priority joins them
        if shapes is None:  # the op's shapes attr has no default
            raise TypeError("Expected list for 'shapes' argument to 'priority_queue_v2' Op, "
                            "not None.")
        ref = _queue_ref("PriorityQueueV2", name, types, shapes, capacity, shared_name)
        super().__init__([_dtypes.int64, *types], [scalar(), *shapes], names, ref)
