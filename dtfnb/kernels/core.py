"""Kernels the runtime itself needs: constants, identity, feeds, fetches, sends, receives."""

from dtfnb.base.dtypes import c_type_name
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.control_flow import DEAD
from dtfnb.kernels.registry import register_kernel
from dtfnb.resources.variable import value_of


def on_device(xp, value):
    """Moves an array to the device whose array module is `xp` (numpy or cupy)."""
    value = value_of(value)
    if value is None or value is DEAD:
        return value
    if xp.__name__ == "numpy":
        return value.get() if hasattr(value, "__cuda_array_interface__") else value
    return xp.asarray(value)


@register_kernel("Const")
def _const(ctx, step):
    value = ctx.state.get("value")
    if value is None:
        value = ctx.state["value"] = on_device(ctx.xp, ctx.attrs["value"])
    return value


@register_kernel("Identity", passes=True)
@register_kernel("StopGradient", passes=True)
@register_kernel("PlaceholderWithDefault", passes=True)
def _identity(ctx, step, x):
    return value_of(x)


@register_kernel("NoOp", passes=True)
def _no_op(ctx, step, *inputs):
    return None


@register_kernel("Placeholder")
def _placeholder(ctx, step):
    shape = ctx.attrs.get("shape")
    message = (f"You must feed a value for placeholder tensor '{ctx.name}' with dtype "
               f"{c_type_name(ctx.attrs['dtype'])}")
    if shape is not None and shape.ndims:  # TensorFlow names no shape of rank 0 or unknown
        message += " and shape [" + ",".join("?" if d is None else str(d)
                                              for d in shape.as_list()) + "]"
    raise InvalidArgumentError(None, None, message)


@register_kernel("_Feed")
def _feed(ctx, step):
    return on_device(ctx.xp, step.feeds[ctx.attrs["tensor_name"]])


@register_kernel("_Fetch")
def _fetch(ctx, step, value):
    value = value_of(value)
    if step.copy_fetches and hasattr(value, "copy"):
        value = value.copy()  # the user's to change: it must not alias a variable
    step.fetched[ctx.attrs["index"]] = value


@register_kernel("_Send")
def _send(ctx, step, value=None):
    step.send(ctx.attrs["key"], value_of(value))


@register_kernel("_Recv", blocking=True)
def _recv(ctx, step):
    return on_device(ctx.xp, step.recv(ctx.attrs["key"]))
