"""Optimizer update ops (ApplyGradientDescent, ApplyMomentum, ApplyAdam, …).

Each takes the variable and its slots as refs, so Graph.create_op colocates it
with the variable; its output is the updated variable's ref.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import TensorShape, scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.framework.tensor import Tensor
from dtfnb.ops.building import make_op, make_tensor

# (op type, inputs after the refs, number of ref inputs)
_OPS = {
    "ApplyGradientDescent": (("alpha", "delta"), 1),
    "ApplyMomentum": (("lr", "grad", "momentum"), 2),
    "ApplyAdam": (("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
                  3),
    "ApplyRMSProp": (("lr", "rho", "momentum", "epsilon", "grad"), 3),
    "ApplyCenteredRMSProp": (("lr", "rho", "momentum", "epsilon", "grad"), 4),
    "ApplyAdagrad": (("lr", "grad"), 2),
    "ApplyAdadelta": (("lr", "rho", "epsilon", "grad"), 3),
    "ApplyProximalGradientDescent": (("alpha", "l1", "l2", "delta"), 1),
    "ApplyProximalAdagrad": (("lr", "l1", "l2", "grad"), 2),
}


def _shape_fn(op):
    shape = op.inputs[0].shape
    names, refs = _OPS[op.type]
    grad = refs + names.index("delta" if "delta" in names else "grad")
    for tensor in op.inputs[1:refs] + (op.inputs[grad],):
        if not shape.is_compatible_with(tensor.shape):
            raise ValueError(f"Shapes must be equal rank, but are {shape.ndims} and "
                             f"{tensor.shape.ndims} for '{op.name}' (op: '{op.type}')")
        shape = shape.merge_with(tensor.shape)
    return [shape]


for _op in _OPS:
    define_op(_op, _shape_fn, stateful=True, ref_inputs=True)
    NotDifferentiable(_op)


def _ref(value):
    ref = getattr(value, "_variable", value)
    if not ref.dtype.is_ref_dtype:
        raise TypeError(f"Input 'var' must be a ref (a tf.Variable), got {value!r}")
    return ref


def apply_op(op_type, refs, inputs, use_locking=False, name=None, **attrs):
    """Creates `op_type` over the ref variables `refs` and `inputs` (tensors, or values
    of the variable's dtype)."""
    refs = [_ref(r) for r in refs]
    dtype = refs[0].dtype.base_dtype
    inputs = [x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtype)
              for x in inputs]
    return make_tensor(op_type, refs + inputs, refs[0].dtype, name=name or op_type,
                       attrs={"T": dtype, "use_locking": bool(use_locking), **attrs})


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """Updates `var` by subtracting `alpha * delta` from it."""
    return apply_op("ApplyGradientDescent", [var], [alpha, delta], use_locking, name)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """Updates `var` with momentum: `accum = accum * momentum + grad; var -= lr * accum`."""
    return apply_op("ApplyMomentum", [var, accum], [lr, grad, momentum], use_locking, name,
                    use_nesterov=bool(use_nesterov))


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """Updates `var` by the Adam algorithm, `m` and `v` holding the moment estimates."""
    return apply_op("ApplyAdam", [var, m, v],
                    [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad], use_locking,
                    name, use_nesterov=bool(use_nesterov))


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                   name=None):
    """Updates `var` by RMSProp: `ms` holds the mean square of the gradient, `mom` the momentum."""
    return apply_op("ApplyRMSProp", [var, ms, mom], [lr, rho, momentum, epsilon, grad],
                    use_locking, name)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking=False, name=None):
    """Updates `var` by centered RMSProp: as apply_rms_prop, normalized by the variance estimate
    (`ms - mg**2`)."""
    return apply_op("ApplyCenteredRMSProp", [var, mg, ms, mom],
                    [lr, rho, momentum, epsilon, grad], use_locking, name)


def apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True, name=None):
    """Updates `var` by Adagrad: `accum += grad**2; var -= lr * grad / sqrt(accum)`."""
    return apply_op("ApplyAdagrad", [var, accum], [lr, grad], use_locking, name,
                    update_slots=bool(update_slots))


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False,
                   name=None):
    """Updates `var` by Adadelta: `accum = rho * accum + (1 - rho) * grad**2`; the update
    `sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad`; `var -= lr * update`;
    `accum_update = rho * accum_update + (1 - rho) * update**2`."""
    return apply_op("ApplyAdadelta", [var, accum, accum_update], [lr, rho, epsilon, grad],
                    use_locking, name)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    """`var - alpha * delta`, shrunk by `alpha * l1` toward 0 and divided by
    `1 + alpha * l2` (FOBOS)."""
    return apply_op("ApplyProximalGradientDescent", [var], [alpha, l1, l2, delta],
                    use_locking, name)


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    """Adagrad's step (`accum += grad**2`, a rate of `lr / sqrt(accum)`) followed by the
    proximal shrinkage of apply_proximal_gradient_descent at that rate."""
    return apply_op("ApplyProximalAdagrad", [var, accum], [lr, l1, l2, grad], use_locking,
                    name)


# -- sparse forms: the same updates on the rows `indices` of the variable and its slots,
# as TensorFlow's optimizers apply IndexedSlices gradients (`_apply_sparse`) -------------

# (op type: number of ref inputs, position of grad; the indices follow the grad)
_SPARSE_OPS = {"SparseApplyMomentum": (2, 3), "SparseApplyRMSProp": (3, 7),
               "SparseApplyCenteredRMSProp": (4, 8), "SparseApplyAdagrad": (2, 3),
               "SparseApplyAdadelta": (3, 6), "SparseApplyProximalGradientDescent": (1, 4),
               "SparseApplyProximalAdagrad": (2, 5)}


def _sparse_shape_fn(op):
    refs, at = _SPARSE_OPS[op.type]
    grad, indices = op.inputs[at].shape, op.inputs[at + 1].shape
    shape = op.inputs[0].shape
    mismatch = f" for '{op.name}' (op: '{op.type}')"
    for other in op.inputs[1:refs] + (op.inputs[at],):
        other = other.shape
        if other is grad and grad.ndims is not None:
            if grad.ndims == 0:
                raise ValueError(f"Shape must be at least rank 1 but is rank 0{mismatch}")
            other = TensorShape([None]).concatenate(grad[1:])
        if not shape.is_compatible_with(other):
            raise ValueError(f"Shapes must be equal rank, but are {shape.ndims} and "
                             f"{other.ndims}{mismatch}" if shape.ndims != other.ndims else
                             f"Dimensions must be equal: {shape} and {other}{mismatch}")
        shape = shape.merge_with(other)
    if indices.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {indices.ndims}{mismatch}")
    if grad.ndims and indices.ndims and not grad[0].is_compatible_with(indices[0]):
        raise ValueError(f"Dimensions must be equal, but are {indices[0].value} and "
                         f"{grad[0].value}{mismatch}")
    return [shape]


for _op in _SPARSE_OPS:
    define_op(_op, _sparse_shape_fn, stateful=True, ref_inputs=True)
    NotDifferentiable(_op)


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False,
                          use_nesterov=False, name=None):
    """apply_momentum on the rows `indices` of `var` and `accum`, `grad` holding their
    gradients."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyMomentum", [var, accum], [lr, grad, indices, momentum],
                    use_locking, name, Tindices=indices.dtype.base_dtype,
                    use_nesterov=bool(use_nesterov))


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                          use_locking=False, name=None):
    """apply_rms_prop on the rows `indices` of `var` and its slots."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyRMSProp", [var, ms, mom],
                    [lr, rho, momentum, epsilon, grad, indices], use_locking, name,
                    Tindices=indices.dtype.base_dtype)


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking=False, name=None):
    """apply_centered_rms_prop on the rows `indices` of `var` and its slots."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyCenteredRMSProp", [var, mg, ms, mom],
                    [lr, rho, momentum, epsilon, grad, indices], use_locking, name,
                    Tindices=indices.dtype.base_dtype)


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, update_slots=True,
                         name=None):
    """apply_adagrad on the rows `indices` of `var` and `accum`."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyAdagrad", [var, accum], [lr, grad, indices], use_locking,
                    name, Tindices=indices.dtype.base_dtype, update_slots=bool(update_slots))


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices,
                          use_locking=False, name=None):
    """apply_adadelta on the rows `indices` of `var` and its slots."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyAdadelta", [var, accum, accum_update],
                    [lr, rho, epsilon, grad, indices], use_locking, name,
                    Tindices=indices.dtype.base_dtype)


def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices,
                                           use_locking=False, name=None):
    """apply_proximal_gradient_descent on the rows `indices` of `var`."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyProximalGradientDescent", [var], [alpha, l1, l2, grad, indices],
                    use_locking, name, Tindices=indices.dtype.base_dtype)


def sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices, use_locking=False,
                                  name=None):
    """apply_proximal_adagrad on the rows `indices` of `var` and `accum`."""
    indices = convert_to_tensor(indices)
    return apply_op("SparseApplyProximalAdagrad", [var, accum], [lr, l1, l2, grad, indices],
                    use_locking, name, Tindices=indices.dtype.base_dtype)


# -- staleness (dtfnb extensions, no TensorFlow twin; see dtfnb/train/staleness.py) -------
#
# Both take the global step's snapshot read at the start of the step (`computed_at`) and
# its ref, read when the op runs (the step the gradients are applied at), and report
# each variable's update on the task's event stream when someone watches.

define_op("RecordGradientStaleness", lambda op: [], stateful=True, ref_inputs=True)
define_op("GradientStalenessGate", lambda op: [scalar(), scalar()], stateful=True,
          ref_inputs=True)
NotDifferentiable("RecordGradientStaleness")
NotDifferentiable("GradientStalenessGate")


def _staleness_attrs(variables, worker):
    return {"variables": [v.op.name for v in variables],
            "devices": [v.device for v in variables], "worker": worker}


def record_gradient_staleness(computed_at, global_step, variables, worker="", loss=None,
                              name=None):
    """An op reporting, for each of `variables`, the step its gradient was computed at and
    the step it is applied at (when the task's event stream is watched), with the `loss`
    the gradients were taken of, where known."""
    return make_op("RecordGradientStaleness",
                   [computed_at, _ref(global_step)] + ([] if loss is None else [loss]), [],
                   name=name or "RecordGradientStaleness",
                   attrs=_staleness_attrs(variables, worker))


def gradient_staleness_gate(computed_at, global_step, variables, worker="", max_staleness=-1,
                            warmup_steps=0, replica_id=0, scale_learning_rate=False,
                            loss=None, name=None):
    """Decides whether gradients computed at `computed_at` are applied now; reports them as
    `record_gradient_staleness` does. Returns (scale, increment): the float32 factor for
    the gradients (0 when dropped, 1/staleness when `scale_learning_rate`) and what to add
    to the global step (0 when dropped, else 1)."""
    op = make_op("GradientStalenessGate",
                 [computed_at, _ref(global_step)] + ([] if loss is None else [loss]),
                 [dtypes.float32, global_step.dtype.base_dtype],
                 name=name or "GradientStalenessGate",
                 attrs={**_staleness_attrs(variables, worker),
                        "max_staleness": int(max_staleness), "warmup_steps": int(warmup_steps),
                        "replica_id": int(replica_id),
                        "scale_learning_rate": bool(scale_learning_rate)})
    return op.outputs[0], op.outputs[1]
