"""Queue kernels: the handle ops find or create the queue; access ops wait on it.

Queues live on CPU, as in TensorFlow. Without a shared_name a queue is private to
its session's kernel, named `_<process counter>_<node name>` as TensorFlow names
it; with one it lives in the device's ResourceMgr, shared by every session and
client of the task.
"""

from dtfnb.base.dtypes import int64
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.handles import resource_of
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos import monitor_pb2
from dtfnb.resources import queues

_KINDS = {
    "FIFOQueueV2": queues.FIFOQueue,
    "PaddingFIFOQueueV2": queues.PaddingFIFOQueue,
    "RandomShuffleQueueV2": queues.RandomShuffleQueue,
    "PriorityQueueV2": queues.PriorityQueue,
}


def _publisher(device, op_name):
    """Reports a queue's fill level on the task's event stream, when someone watches, under
    the name of TensorFlow's summary: `queue/<op name>/fraction_of_<capacity>_full`."""

    def publish(queue):
        events = device.events
        if events is not None and events.watching:
            events.publish(monitor_pb2.Event(queue=monitor_pb2.QueueEvent(
                name=queue.name, device=device.name, size=len(queue),
                capacity=queue.capacity, closed=queue.closed, enqueued=queue.enqueued,
                dequeued=queue.dequeued,
                summary=f"queue/{op_name}/fraction_of_{queue.capacity}_full")))

    return publish


def _queue_attrs(ctx):
    attrs = ctx.attrs
    cls = _KINDS[ctx.op]
    dtypes = list(attrs["component_types"])
    if cls is queues.PriorityQueue:
        dtypes.insert(0, int64)
    shapes = [s.as_tuple_or_none() for s in attrs.get("shapes") or ()]
    if cls is queues.PriorityQueue and shapes:
        shapes.insert(0, ())
    extra = {}
    if cls is queues.RandomShuffleQueue:
        extra = {"min_after_dequeue": attrs.get("min_after_dequeue", 0),
                 "seed": attrs.get("seed", 0), "seed2": attrs.get("seed2", 0)}
    return cls, dtypes, shapes, attrs.get("capacity", -1), extra


def _create(ctx, name):
    cls, dtypes, shapes, capacity, extra = _queue_attrs(ctx)
    return cls(name, dtypes, shapes, capacity, on_change=_publisher(ctx.device, ctx.name),
               **extra)


@register_kernel("FIFOQueueV2", device="CPU")
@register_kernel("PaddingFIFOQueueV2", device="CPU")
@register_kernel("RandomShuffleQueueV2", device="CPU")
@register_kernel("PriorityQueueV2", device="CPU")
def _queue_handle(ctx, step):
    if ctx.op == "RandomShuffleQueueV2":
        _check_min_after_dequeue(ctx.attrs.get("min_after_dequeue", 0), ctx.attrs["capacity"])
    queue = resource_of(ctx, _create, queues.FIFOQueue, "queue")
    if not ctx.attrs.get("shared_name"):
        return queue
    _, dtypes, shapes, capacity, extra = _queue_attrs(ctx)
    queue.matches(ctx.op, dtypes, shapes, capacity, **extra)
    return queue


def _check_min_after_dequeue(min_after_dequeue, capacity):
    if min_after_dequeue < 0:
        raise InvalidArgumentError(None, None, f"min_after_dequeue {min_after_dequeue} must "
                                   "be >= 0")
    if min_after_dequeue >= capacity:
        raise InvalidArgumentError(None, None, f"min_after_dequeue {min_after_dequeue} must "
                                   f"be < capacity {capacity}")


def _outputs(components):
    return components if len(components) > 1 else components[0]


@register_kernel("QueueEnqueueV2", device="CPU", blocking=True)
def _enqueue(ctx, step, queue, *components):
    queue.enqueue(step, components)


@register_kernel("QueueEnqueueManyV2", device="CPU", blocking=True)
def _enqueue_many(ctx, step, queue, *components):
    queue.enqueue_many(step, components)


@register_kernel("QueueDequeueV2", device="CPU", blocking=True)
def _dequeue(ctx, step, queue):
    return _outputs(queue.dequeue(step))


@register_kernel("QueueDequeueManyV2", device="CPU", blocking=True)
def _dequeue_many(ctx, step, queue, n):
    return _outputs(queue.dequeue_many(step, int(n)))


@register_kernel("QueueDequeueUpToV2", device="CPU", blocking=True)
def _dequeue_up_to(ctx, step, queue, n):
    return _outputs(queue.dequeue_many(step, int(n), allow_small_batch=True))


@register_kernel("QueueCloseV2", device="CPU", blocking=True)
def _close(ctx, step, queue):
    queue.close(step, ctx.attrs.get("cancel_pending_enqueues", False))


@register_kernel("QueueSizeV2", device="CPU")
def _size(ctx, step, queue):
    return ctx.xp.asarray(queue.size(), dtype=ctx.xp.int32)


@register_kernel("QueueIsClosedV2", device="CPU")
def _is_closed(ctx, step, queue):
    return ctx.xp.asarray(queue.is_closed())
