"""Accumulator kernels: the handle ops find or create the accumulator; access ops use it.

Accumulators live on CPU, found as queues are (see kernels/queues.py): private to the
session's kernel without a shared_name, in the device's ResourceMgr with one. Every
gradient offered is reported on the task's event stream as a VariableUpdateEvent
(added or dropped as stale), when someone watches.
"""

from dtfnb.kernels.handles import resource_of
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos import monitor_pb2
from dtfnb.resources import accumulators

_KINDS = {
    "ResourceConditionalAccumulator": accumulators.ConditionalAccumulator,
    "SparseConditionalAccumulator": accumulators.SparseConditionalAccumulator,
}


def _publisher(device):
    """Reports each gradient offered: the step it was computed at, the accumulator's global
    step when it arrived, the task that computed it, and whether it was dropped."""

    def publish(accumulator, local_step, dropped, worker):
        events = device.events
        if events is not None and events.watching:
            events.publish(monitor_pb2.Event(variable_update=monitor_pb2.VariableUpdateEvent(
                variable=accumulator.name, device=device.name, computed_at_step=local_step,
                applied_at_step=accumulator.global_step, worker=worker, dropped=dropped)))

    return publish


def _accumulator_attrs(ctx):
    attrs = ctx.attrs
    shape = attrs.get("shape")
    return (_KINDS[ctx.op], attrs["dtype"], None if shape is None else shape.as_tuple_or_none(),
            attrs.get("reduction_type", "MEAN"))


@register_kernel("ResourceConditionalAccumulator", device="CPU")
@register_kernel("SparseConditionalAccumulator", device="CPU")
def _accumulator_handle(ctx, step):
    accumulator = resource_of(ctx, _create, accumulators.Accumulator, "accumulator")
    if ctx.attrs.get("shared_name"):
        cls, dtype, shape, reduction_type = _accumulator_attrs(ctx)
        accumulator.matches(cls.kind, dtype, shape, reduction_type)
    return accumulator


def _create(ctx, name):
    cls, dtype, shape, reduction_type = _accumulator_attrs(ctx)
    return cls(name, dtype, shape, reduction_type, _publisher(ctx.device))


@register_kernel("ResourceAccumulatorApplyGradient", device="CPU")
def _apply_gradient(ctx, step, accumulator, local_step, gradient):
    accumulator.apply_grad(int(local_step), gradient, ctx.attrs.get("_worker", ""))


@register_kernel("SparseAccumulatorApplyGradient", device="CPU")
def _sparse_apply_gradient(ctx, step, accumulator, local_step, indices, values, shape):
    dense_shape = [int(d) for d in shape] if ctx.attrs.get("has_known_shape") else None
    accumulator.apply_grad(int(local_step), (indices, values, dense_shape),
                           ctx.attrs.get("_worker", ""))


@register_kernel("ResourceAccumulatorTakeGradient", device="CPU", blocking=True)
@register_kernel("SparseAccumulatorTakeGradient", device="CPU", blocking=True)
def _take_gradient(ctx, step, accumulator, num_required):
    return accumulator.take_grad(step, int(num_required))


@register_kernel("ResourceAccumulatorNumAccumulated", device="CPU")
@register_kernel("AccumulatorNumAccumulated", device="CPU")
def _num_accumulated(ctx, step, accumulator):
    return ctx.xp.asarray(accumulator.num_accumulated(), dtype=ctx.xp.int32)


@register_kernel("ResourceAccumulatorSetGlobalStep", device="CPU")
@register_kernel("AccumulatorSetGlobalStep", device="CPU")
def _set_global_step(ctx, step, accumulator, new_global_step):
    accumulator.set_global_step(int(new_global_step))
