"""Collective ops' kernels: each member hands its tensor, on the host, to its task's
collectives (runtime/collectives.py, which the worker gives every device), and gets the
group's result back on its device. They wait for the other members: blocking kernels."""

import numpy as np

from dtfnb.kernels.core import on_device
from dtfnb.kernels.registry import register_kernel


@register_kernel("CollectiveReduce", blocking=True)
def _all_reduce(ctx, step, t):
    return on_device(ctx.xp, ctx.device.collectives.all_reduce(
        step, ctx.device.name, on_device(np, t), ctx.attrs))


@register_kernel("CollectiveGather", blocking=True)
def _all_gather(ctx, step, t):
    return on_device(ctx.xp, ctx.device.collectives.all_gather(
        step, ctx.device.name, on_device(np, t), ctx.attrs))


@register_kernel("CollectiveBcastSend", blocking=True)
def _broadcast_send(ctx, step, t):
    ctx.device.collectives.broadcast(step, ctx.device.name, on_device(np, t), ctx.attrs)
    return t


@register_kernel("CollectiveBcastRecv", blocking=True)
def _broadcast_recv(ctx, step):
    return on_device(ctx.xp, ctx.device.collectives.broadcast(
        step, ctx.device.name, None, ctx.attrs))
