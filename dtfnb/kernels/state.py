"""Ref-variable kernels: VariableV2 and the ops that read, assign, scatter into and test it."""

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError, OutOfRangeError
from dtfnb.kernels.registry import register_kernel
from dtfnb.resources.resource_mgr import check_shared_name
from dtfnb.resources.variable import VariableResource, value_of

# TensorFlow registers no GPU VariableV2 kernel for int32 (it lives in host memory),
# which is why the chapter's int variable on /gpu:0 needs soft placement.
GPU_VARIABLE_TYPES = {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                      dtypes.int64, dtypes.complex64, dtypes.complex128, dtypes.bool_}


def _variable(ctx, step):
    # What names the variable is static: worked out on the node's first run.
    key = ctx.state.get("variable")
    if key is None:
        attrs = ctx.attrs
        name = attrs.get("shared_name") or ctx.name
        if attrs.get("shared_name"):
            check_shared_name(name)
        shape = attrs.get("shape")
        static = shape.as_tuple_or_none() if shape is not None and shape.is_fully_defined() \
            else None
        key = ctx.state["variable"] = (attrs.get("container", ""), name, attrs["dtype"], static)
    container, name, dtype, static = key
    return ctx.resource_mgr.lookup_or_create(
        container, name, lambda: VariableResource(name, dtype, static))


register_kernel("VariableV2", device="CPU")(_variable)
register_kernel("VariableV2", device="GPU", constraints={"dtype": GPU_VARIABLE_TYPES})(_variable)


@register_kernel("Assign", ref_inputs=True)
def _assign(ctx, step, ref, value):
    value = ctx.xp.array(value_of(value), copy=True)
    with ref.lock:
        ref.assign(value, ctx.attrs.get("validate_shape", True))
    return ref


@register_kernel("AssignAdd", ref_inputs=True)
def _assign_add(ctx, step, ref, value):
    ref.update(lambda old: old + value_of(value))
    return ref


@register_kernel("AssignSub", ref_inputs=True)
def _assign_sub(ctx, step, ref, value):
    ref.update(lambda old: old - value_of(value))
    return ref


def _scatter(combine):
    """A Scatter* kernel: rows `indices` of the variable combined with `updates` by
    `combine(xp)` (a ufunc's `.at`, or None to overwrite). The variable gets a new array,
    so a value already read elsewhere does not change under its reader."""
    def kernel(ctx, step, ref, indices, updates):
        xp = ctx.xp
        indices, updates = xp.asarray(indices), xp.asarray(updates)
        with ref.lock:
            new = xp.array(ref.read(), copy=True)
            rows = new.shape[0] if new.ndim else 0
            flat = indices.reshape(-1)
            bad = xp.nonzero((flat < 0) | (flat >= rows))[0]
            if bad.size:
                i = int(bad[0])
                raise InvalidArgumentError(None, None, f"indices[{i}] = {int(flat[i])} is "
                                           f"not in [0, {rows})")
            if combine is None:
                new[indices] = updates
            else:
                combine(xp).at(new, indices, updates)
            ref.value = new
        return ref
    return kernel


for _op, _combine in (("ScatterUpdate", None), ("ScatterAdd", lambda xp: xp.add),
                      ("ScatterSub", lambda xp: xp.subtract),
                      ("ScatterMul", lambda xp: xp.multiply),
                      ("ScatterDiv", lambda xp: xp.divide),
                      ("ScatterMax", lambda xp: xp.maximum),
                      ("ScatterMin", lambda xp: xp.minimum)):
    register_kernel(_op, device="CPU", ref_inputs=True)(_scatter(_combine))


@register_kernel("CountUpTo", ref_inputs=True)
def _count_up_to(ctx, step, ref):
    limit = ctx.attrs["limit"]
    with ref.lock:
        old = ref.read()
        if old >= limit:
            raise OutOfRangeError(None, None, f"Reached limit of {limit}")
        ref.value = old + 1
    return old


@register_kernel("IsVariableInitialized", ref_inputs=True)
def _is_initialized(ctx, step, ref):
    return ctx.xp.asarray(ref.initialized)
