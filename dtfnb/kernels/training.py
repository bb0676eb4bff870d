"""Optimizer update kernels, with TensorFlow's formulas (core/kernels/training_ops.cc).

Each takes the variable and its slots as refs (VariableResources) and stores new
arrays in them; the arrays a step read before stay as they were. Every ref is
updated under its own lock, slots first, then the variable.
"""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels.registry import register_kernel
from dtfnb.protos import monitor_pb2
from dtfnb.resources.variable import value_of


def _check_scalar(value, name):
    if getattr(value, "ndim", 0) != 0:
        raise InvalidArgumentError(None, None, f"{name} is not a scalar: "
                                   f"{list(value.shape)}")


def _check_same_shape(var, other, name):
    if var.shape != other.shape:
        raise InvalidArgumentError(None, None, f"var and {name} do not have the same shape"
                                   f"{list(var.shape)} {list(other.shape)}")


def _checked(var, **others):
    """Reads the refs, checking each value (slots and the gradient) has var's shape."""
    value = var.read()
    for name, other in others.items():
        _check_same_shape(value, value_of(other), name)
    return value


def _descend(ctx, amount, scale=None):
    """The update of a variable to its value minus `amount` (times `scale`, computed in the
    new array: no temporary), made by its device: in a task of a cluster, an array the
    task lends to others as it is (never changed after)."""
    def descend(value):
        out = ctx.device.new_array(value.shape, value.dtype)
        step = amount if scale is None else ctx.xp.multiply(amount, scale, out=out)
        return ctx.xp.subtract(value, step, out=out)
    return descend


@register_kernel("ApplyGradientDescent", ref_inputs=True)
def _apply_gradient_descent(ctx, step, var, alpha, delta):
    _check_scalar(alpha, "alpha")
    _checked(var, delta=delta)

    var.update(_descend(ctx, delta, alpha))
    return var


@register_kernel("ApplyMomentum", ref_inputs=True)
def _apply_momentum(ctx, step, var, accum, lr, grad, momentum):
    _check_scalar(lr, "lr")
    _check_scalar(momentum, "momentum")
    _checked(var, accum=accum, grad=grad)
    a = accum.update(lambda a: a * momentum + grad)
    if ctx.attrs.get("use_nesterov"):
        var.update(_descend(ctx, grad * lr + a * momentum * lr))
    else:
        var.update(_descend(ctx, lr * a))
    return var


@register_kernel("ApplyAdam", ref_inputs=True)
def _apply_adam(ctx, step, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
                grad):
    for name, value in (("beta1_power", beta1_power), ("beta2_power", beta2_power),
                        ("lr", lr), ("beta1", beta1), ("beta2", beta2), ("epsilon", epsilon)):
        _check_scalar(value, name)
    _checked(var, m=m, v=v, grad=grad)
    xp = ctx.xp
    alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
    m_t = m.update(lambda m: m + (grad - m) * (1 - beta1))
    v_t = v.update(lambda v: v + (grad * grad - v) * (1 - beta2))
    if ctx.attrs.get("use_nesterov"):
        var.update(_descend(ctx, alpha * (m_t * beta1 + (1 - beta1) * grad)
                            / (xp.sqrt(v_t) + epsilon)))
    else:
        var.update(_descend(ctx, alpha * m_t / (xp.sqrt(v_t) + epsilon)))
    return var


@register_kernel("ApplyRMSProp", ref_inputs=True)
def _apply_rms_prop(ctx, step, var, ms, mom, lr, rho, momentum, epsilon, grad):
    for name, value in (("lr", lr), ("rho", rho), ("momentum", momentum),
                        ("epsilon", epsilon)):
        _check_scalar(value, name)
    _checked(var, ms=ms, mom=mom, grad=grad)
    xp = ctx.xp
    ms_t = ms.update(lambda s: s + (grad * grad - s) * (1 - rho))
    mom_t = mom.update(lambda u: u * momentum + lr * grad / xp.sqrt(ms_t + epsilon))
    var.update(_descend(ctx, mom_t))
    return var


@register_kernel("ApplyCenteredRMSProp", ref_inputs=True)
def _apply_centered_rms_prop(ctx, step, var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    for name, value in (("lr", lr), ("rho", rho), ("momentum", momentum),
                        ("epsilon", epsilon)):
        _check_scalar(value, name)
    _checked(var, mg=mg, ms=ms, mom=mom, grad=grad)
    xp = ctx.xp
    ms_t = ms.update(lambda s: s + (grad * grad - s) * (1 - rho))
    mg_t = mg.update(lambda g: g + (grad - g) * (1 - rho))
    denom = ms_t - mg_t * mg_t + epsilon
    mom_t = mom.update(lambda u: u * momentum + lr * grad / xp.sqrt(denom))
    var.update(_descend(ctx, mom_t))
    return var


@register_kernel("ApplyAdagrad", ref_inputs=True)
def _apply_adagrad(ctx, step, var, accum, lr, grad):
    _check_scalar(lr, "lr")
    _checked(var, accum=accum, grad=grad)
    if ctx.attrs.get("update_slots", True):
        a = accum.update(lambda a: a + grad * grad)
    else:
        a = accum.read()
    var.update(_descend(ctx, lr * grad / ctx.xp.sqrt(a)))
    return var


@register_kernel("ApplyAdadelta", ref_inputs=True)
def _apply_adadelta(ctx, step, var, accum, accum_update, lr, rho, epsilon, grad):
    _scalars(lr=lr, rho=rho, epsilon=epsilon)
    _checked(var, accum=accum, accum_update=accum_update, grad=grad)
    a, u, v = _adadelta(ctx.xp, accum.read(), accum_update.read(), var.read(), grad, lr, rho,
                        epsilon)
    accum.update(lambda _: a)
    accum_update.update(lambda _: u)
    var.update(lambda _: v)
    return var


def _adadelta(xp, a, u, v, g, lr, rho, epsilon):
    """New (accum, accum_update, var) rows, in TensorFlow's order: the variable moves by
    the update computed from the accumulated update before it changes."""
    a = a * rho + g * g * (1 - rho)
    update = xp.sqrt(u + epsilon) / xp.sqrt(a + epsilon) * g
    return a, u * rho + update * update * (1 - rho), v - update * lr


def _shrunk(xp, prox, rate, l1, l2):
    """The proximal step: `prox` shrunk by `rate * l1` toward 0, over `1 + l2 * rate`."""
    if l1 > 0:
        return (xp.sign(prox) * xp.maximum(xp.abs(prox) - rate * l1, 0)
                / (1 + l2 * rate))
    return prox / (1 + l2 * rate)


@register_kernel("ApplyProximalGradientDescent", ref_inputs=True)
def _apply_proximal_gradient_descent(ctx, step, var, alpha, l1, l2, delta):
    _scalars(alpha=alpha, l1=l1, l2=l2)
    _checked(var, delta=delta)
    var.update(lambda v: _shrunk(ctx.xp, v - delta * alpha, alpha, l1, l2))
    return var


@register_kernel("ApplyProximalAdagrad", ref_inputs=True)
def _apply_proximal_adagrad(ctx, step, var, accum, lr, l1, l2, grad):
    _scalars(lr=lr, l1=l1, l2=l2)
    _checked(var, accum=accum, grad=grad)
    a = accum.update(lambda a: a + grad * grad)
    rate = lr / ctx.xp.sqrt(a)
    var.update(lambda v: _shrunk(ctx.xp, v - grad * rate, rate, l1, l2))
    return var


# -- sparse forms: the rows `indices` of the variable and its slots ---------------------

def _sparse_update(ctx, var, slots, grad, indices, rule):
    """Applies `rule(*slot_rows, var_rows, grad_rows)` (the new rows, slots first) to the
    rows `indices` of `var` and its `slots` ({name: ref}), each row in turn as TensorFlow's
    kernels do, so that a repeated index is updated twice; every ref gets a new array,
    the variable last."""
    xp = ctx.xp
    value = _checked(var, **slots)
    if value.ndim < 1:
        raise InvalidArgumentError(None, None, "var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise InvalidArgumentError(None, None, "indices must be one-dimensional")
    for d in range(1, value.ndim):
        if grad.ndim != value.ndim or grad.shape[d] != value.shape[d]:
            raise InvalidArgumentError(None, None, f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(None, None, "grad must be the same size as indices in the "
                                   "first dimension.")
    bad = xp.nonzero((indices < 0) | (indices >= value.shape[0]))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(None, None, f"Index {int(indices[i])} at offset {i} in "
                                   "indices is out of range")
    refs = (*slots.values(), var)
    arrays = [xp.array(ref.read(), copy=True) for ref in refs]
    in_turn = xp.unique(indices).size != indices.size
    for rows, g in ([(indices[i:i + 1], grad[i:i + 1]) for i in range(indices.size)]
                    if in_turn else [(indices, grad)]):
        for array, new in zip(arrays, rule(*(a[rows] for a in arrays), g)):
            array[rows] = new
    for ref, array in zip(refs, arrays):
        with ref.lock:
            ref.value = array
    return var


def _scalars(**values):
    for name, value in values.items():
        _check_scalar(value, name)


@register_kernel("SparseApplyMomentum", ref_inputs=True)
def _sparse_apply_momentum(ctx, step, var, accum, lr, grad, indices, momentum):
    _scalars(lr=lr, momentum=momentum)
    nesterov = ctx.attrs.get("use_nesterov")

    def rule(a, v, g):
        a = a * momentum + g
        return a, v - (g * lr + a * momentum * lr if nesterov else lr * a)
    return _sparse_update(ctx, var, {"accum": accum}, grad, indices, rule)


@register_kernel("SparseApplyRMSProp", ref_inputs=True)
def _sparse_apply_rms_prop(ctx, step, var, ms, mom, lr, rho, momentum, epsilon, grad,
                           indices):
    _scalars(lr=lr, rho=rho, momentum=momentum, epsilon=epsilon)

    def rule(s, u, v, g):
        s = s + (g * g - s) * (1 - rho)
        u = u * momentum + lr * g / ctx.xp.sqrt(s + epsilon)
        return s, u, v - u
    return _sparse_update(ctx, var, {"ms": ms, "mom": mom}, grad, indices, rule)


@register_kernel("SparseApplyCenteredRMSProp", ref_inputs=True)
def _sparse_apply_centered_rms_prop(ctx, step, var, mg, ms, mom, lr, rho, momentum, epsilon,
                                    grad, indices):
    _scalars(lr=lr, rho=rho, momentum=momentum, epsilon=epsilon)

    def rule(m, s, u, v, g):
        s = s + (g * g - s) * (1 - rho)
        m = m + (g - m) * (1 - rho)
        u = u * momentum + lr * g / ctx.xp.sqrt(s - m * m + epsilon)
        return m, s, u, v - u
    return _sparse_update(ctx, var, {"mg": mg, "ms": ms, "mom": mom}, grad, indices,
                          rule)


@register_kernel("SparseApplyAdagrad", ref_inputs=True)
def _sparse_apply_adagrad(ctx, step, var, accum, lr, grad, indices):
    _scalars(lr=lr)
    update_slots = ctx.attrs.get("update_slots", True)

    def rule(a, v, g):
        if update_slots:
            a = a + g * g
        return a, v - lr * g / ctx.xp.sqrt(a)
    return _sparse_update(ctx, var, {"accum": accum}, grad, indices, rule)


@register_kernel("SparseApplyAdadelta", ref_inputs=True)
def _sparse_apply_adadelta(ctx, step, var, accum, accum_update, lr, rho, epsilon, grad,
                           indices):
    _scalars(lr=lr, rho=rho, epsilon=epsilon)
    return _sparse_update(ctx, var, {"accum": accum, "accum_update": accum_update}, grad,
                          indices,
                          lambda a, u, v, g: _adadelta(ctx.xp, a, u, v, g, lr, rho, epsilon))


@register_kernel("SparseApplyProximalGradientDescent", ref_inputs=True)
def _sparse_apply_proximal_gradient_descent(ctx, step, var, alpha, l1, l2, grad, indices):
    _scalars(alpha=alpha, l1=l1, l2=l2)
    return _sparse_update(ctx, var, {}, grad, indices,
                          lambda v, g: (_shrunk(ctx.xp, v - g * alpha, alpha, l1, l2),))


@register_kernel("SparseApplyProximalAdagrad", ref_inputs=True)
def _sparse_apply_proximal_adagrad(ctx, step, var, accum, lr, l1, l2, grad, indices):
    _scalars(lr=lr, l1=l1, l2=l2)

    def rule(a, v, g):
        a = a + g * g
        rate = lr / ctx.xp.sqrt(a)
        return a, _shrunk(ctx.xp, v - g * rate, rate, l1, l2)
    return _sparse_update(ctx, var, {"accum": accum}, grad, indices, rule)


# -- staleness: the global step a gradient was computed at and the one it is applied at ----

def _publish_updates(ctx, computed_at, applied_at, dropped, loss):
    events = ctx.device.events
    if events is None or not events.watching:
        return
    attrs = ctx.attrs
    worker = attrs["worker"] or events.task  # unplaced: computed where it is applied
    for variable, device in zip(attrs["variables"], attrs["devices"]):
        events.publish(monitor_pb2.Event(variable_update=monitor_pb2.VariableUpdateEvent(
            variable=variable, device=device or ctx.device.name, computed_at_step=computed_at,
            applied_at_step=applied_at, worker=worker, dropped=dropped,
            loss=0.0 if loss is None else float(loss))))


@register_kernel("RecordGradientStaleness", device="CPU", ref_inputs=True)
def _record_gradient_staleness(ctx, step, computed_at, global_step, loss=None):
    events = ctx.device.events
    if events is not None and events.watching:  # nobody watches: nothing to read
        _publish_updates(ctx, int(computed_at), int(value_of(global_step)), False, loss)


@register_kernel("GradientStalenessGate", device="CPU", ref_inputs=True)
def _gradient_staleness_gate(ctx, step, computed_at, global_step, loss=None):
    attrs = ctx.attrs
    computed_at, applied_at = int(computed_at), int(value_of(global_step))
    staleness = applied_at - computed_at
    too_stale = 0 <= attrs["max_staleness"] < staleness
    warming_up = applied_at < attrs["warmup_steps"] and attrs["replica_id"] != 0
    dropped = too_stale or warming_up
    _publish_updates(ctx, computed_at, applied_at, dropped, loss)
    if dropped:
        scale = 0.0
    elif attrs["scale_learning_rate"]:
        scale = 1.0 / max(1, staleness)
    else:
        scale = 1.0
    increment = np.asarray(0 if dropped else 1, ctx.output_types[1].as_numpy_dtype)
    return np.asarray(scale, np.float32), increment
