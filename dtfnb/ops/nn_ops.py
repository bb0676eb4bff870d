"""tf.nn: activations, softmax, cross entropies, l2_loss, dropout, bias_add, in_top_k.

Each op's definition, builder and gradient sit together. The fused gradient ops
(ReluGrad, SigmoidGrad, BiasAddGrad, …) are TensorFlow's, so a gradient graph
looks like TensorFlow's too.
"""

import collections
import numbers

import numpy as np

from dtfnb.base import dtypes
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import TensorShape, as_shape, scalar, unknown_shape
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, RegisterGradient, define_op
from dtfnb.ops import (
    array_ops,
    check_ops,
    constant_op,
    joining_ops,
    math_ops,
    nd_indexing,
    random_ops,
    slicing_ops,
    unary_ops,
)
from dtfnb.ops.building import (
    check_type,
    graph_of,
    is_tensor,
    make_op,
    make_tensor,
    one_input_op,
    op_scope,
    renamed_argument,
)
from dtfnb.ops.shape_util import broadcast_shape, constant_value, shape_error


def _same_shape(op):
    return [op.inputs[0].shape]


def _merged_shape(op):
    a, b = op.inputs[:2]
    try:
        return [a.shape.merge_with(b.shape)]
    except ValueError:
        raise ValueError(f"Incompatible shapes for '{op.name}' (op: '{op.type}') with input "
                         f"shapes: {a.shape}, {b.shape}.") from None


def _unary(op_type, x, name, attrs=None):
    return one_input_op(op_type, x, name, "features", attrs)


def _binary(op_type, a, b, attrs=None):
    return make_tensor(op_type, [a, b], a.dtype.base_dtype,
                       attrs={"T": a.dtype.base_dtype, **(attrs or {})})


# -- activations ----------------------------------------------------------------------

for _op in ("Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Sigmoid", "Tanh", "Softplus",
            "Softsign"):
    define_op(_op, _same_shape)
for _op in ("ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SigmoidGrad",
            "TanhGrad", "SoftsignGrad"):
    define_op(_op, _merged_shape)


def relu(features, name=None):
    """max(features, 0)."""
    return _unary("Relu", features, name)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return _unary("Relu6", features, name)


def elu(features, name=None):
    """exp(features) - 1 where features < 0, else features."""
    return _unary("Elu", features, name)


def selu(features, name=None):
    """scale * elu with alpha, the self-normalising constants of Klambauer et al."""
    return _unary("Selu", features, name)


def softplus(features, name=None):
    """log(exp(features) + 1), computed without overflow."""
    return _unary("Softplus", features, name)


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return _unary("Softsign", features, name)


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return grad * sigmoid(op.inputs[0])


@RegisterGradient("Softsign")
def _softsign_grad(op, grad):
    return _binary("SoftsignGrad", grad, op.inputs[0])


def leaky_relu(features, alpha=0.2, name=None):
    """features where positive, else alpha * features (integers are cast to float32)."""
    with op_scope("LeakyRelu", name, features) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = math_ops.cast(features, dtypes.float32)
        if isinstance(alpha, np.ndarray):
            alpha = alpha.item()
        return _unary("LeakyRelu", features, scope, {"alpha": float(alpha)})


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)), computed without overflow."""
    return one_input_op("Sigmoid", x, name)


def tanh(x, name=None):
    """Computes the hyperbolic tangent of `x`, elementwise."""
    return one_input_op("Tanh", x, name)


@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return _binary("ReluGrad", grad, op.outputs[0])


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    return _binary("Relu6Grad", grad, op.inputs[0])


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    return _binary("EluGrad", grad, op.outputs[0])


@RegisterGradient("Selu")
def _selu_grad(op, grad):
    return _binary("SeluGrad", grad, op.outputs[0])


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return _binary("LeakyReluGrad", grad, op.inputs[0], {"alpha": op.get_attr("alpha")})


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    with grad.graph.control_dependencies([grad]):   # as TensorFlow's
        return _binary("SigmoidGrad", op.outputs[0], grad)


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    with grad.graph.control_dependencies([grad]):   # as TensorFlow's
        return _binary("TanhGrad", op.outputs[0], grad)


# Second derivatives, where TensorFlow has them; the `features` input of a
# piecewise-linear gradient has derivative zero almost everywhere.
@RegisterGradient("ReluGrad")
def _relu_grad_grad(op, grad):
    return _binary("ReluGrad", grad, op.inputs[1]), None


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op, grad):
    return _binary("Relu6Grad", grad, op.inputs[1]), None


@RegisterGradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    return _binary("LeakyReluGrad", grad, op.inputs[1], {"alpha": op.get_attr("alpha")}), None


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    y, dy = op.inputs
    with grad.graph.control_dependencies([grad]):
        gb = grad * dy
        return gb - 2.0 * gb * y, _binary("SigmoidGrad", y, grad)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    y, dy = op.inputs
    with grad.graph.control_dependencies([grad]):
        return grad * -2.0 * dy * y, _binary("TanhGrad", y, grad)


# -- softmax --------------------------------------------------------------------------

def _softmax_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    return [shape]


define_op("Softmax", _softmax_shape)
define_op("LogSoftmax", _softmax_shape)


def _softmax(op_type, logits, axis, name):
    """TensorFlow's: the op along the last axis; along another, the op between two
    transposes that swap that axis with the last (the second one named `name`)."""
    logits = convert_to_tensor(logits)
    shape = logits.shape
    axis = -1 if axis is None else axis
    if axis == -1 or axis == shape.ndims - 1:
        return _unary(op_type, logits, name)
    if not -shape.ndims <= axis < shape.ndims:
        raise InvalidArgumentError(
            None, None, f"`dim` must be in the range [{-shape.ndims}, {shape.ndims}) where "
            f"{shape.ndims} is the number of dimensions in the input. Received: dim={axis}")
    rank = array_ops.rank(logits)
    axis = axis + rank if axis < 0 else axis   # a tensor, as in TensorFlow
    last = array_ops.rank(logits)   # a second Rank, as TensorFlow's graph has
    axis = axis % shape.ndims

    def swap(tensor, name=None):
        last_index = math_ops.subtract(last, 1)
        return slicing_ops.transpose(tensor, joining_ops.concat(
            [math_ops.range(axis), [last_index], math_ops.range(axis + 1, last_index),
             [axis]], 0), name=name)

    out = swap(_unary(op_type, swap(logits), None), name=name)
    out.set_shape(shape)
    return out


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / sum(exp(logits), axis), with the maximum subtracted first."""
    return _softmax("Softmax", logits, axis if axis is not None else dim, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(sum(exp(logits), axis)), computed by log-sum-exp."""
    return _softmax("LogSoftmax", logits, axis if axis is not None else dim, name)


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * unary_ops.exp(op.outputs[0])


# -- cross entropies ------------------------------------------------------------------

def _xent_shape(op):
    """As TensorFlow's: matrices of one shape, else (labels broadcast to the logits, say)
    their broadcast, which must be a matrix."""
    logits, labels = (t.shape for t in op.inputs)
    if logits.ndims in (None, 2) and labels.is_compatible_with(logits):
        shape = logits.merge_with(labels).with_rank(2)
        return [shape[:1], shape]
    try:
        shape = broadcast_shape(logits, labels)
    except ValueError as err:
        raise shape_error(op, str(err)) from None
    if shape.ndims is None:
        raise shape_error(op, "Shape must be broadcasted with rank 2, but is rank is unknown.")
    if shape.ndims != 2:
        raise shape_error(op, f"Shape must be broadcasted with rank 2, but is rank {shape.ndims}")
    return [shape[:1], shape]


def _sparse_xent_shape(op):
    logits, labels = op.inputs
    for x, rank in ((logits, 2), (labels, 1)):
        if x.shape.ndims is not None and x.shape.ndims != rank:
            raise shape_error(op, f"Shape must be rank {rank} but is rank {x.shape.ndims}")
    logits, labels = logits.shape.with_rank(2), labels.shape.with_rank(1)
    if not logits[0].is_compatible_with(labels[0]):
        raise shape_error(op, f"Dimensions must be equal, but are {logits[0]} and {labels[0]}")
    batch = logits[0].merge_with(labels[0])
    return [TensorShape([batch]), TensorShape([batch, logits[1]])]


define_op("SoftmaxCrossEntropyWithLogits", _xent_shape)
define_op("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_shape)


def _ensure_xent_args(name, labels, logits):
    if labels is None or logits is None:   # (TensorFlow's words, with no space before Received)
        raise ValueError(f"Both `labels` and `logits` must be provided for {name}"
                         f"Received: labels={labels} and logits={logits}")


def _broadcast_mul(vec, mat):
    return array_ops.expand_dims(vec, -1) * mat


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """-sum(labels * log_softmax(logits)) along `axis`; gradients flow into labels too.

    As TensorFlow builds it: float16 and bfloat16 logits computed in float32, `axis` moved
    last, both flattened to matrices for the op, the loss reshaped back."""
    axis = renamed_argument("axis", axis, "dim", dim)
    axis = -1 if axis is None else axis
    graph = graph_of(logits, labels)
    with graph.as_default(), graph.name_scope(name or "softmax_cross_entropy_with_logits") \
            as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        narrow = logits.dtype.base_dtype in (dtypes.float16, dtypes.bfloat16)
        precise = math_ops.cast(logits, dtypes.float32) if narrow else logits
        labels = math_ops.cast(labels, precise.dtype)
        rank = array_ops.rank(precise)
        shape = logits.shape
        if axis != -1:
            precise, labels = (_move_dim_to_end(t, axis, rank) for t in (precise, labels))
        input_shape = array_ops.shape(precise)
        precise, labels = _flatten_outer_dims(precise), _flatten_outer_dims(labels)
        dtype = precise.dtype.base_dtype
        cost = make_op("SoftmaxCrossEntropyWithLogits", [precise, labels], [dtype, dtype],
                       name=scope, attrs={"T": dtype}).outputs[0]
        output_shape = slicing_ops.slice(input_shape, [0], [math_ops.subtract(rank, 1)])
        cost = array_ops.reshape(cost, output_shape)
        if shape.ndims is not None:
            dims = shape.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return math_ops.cast(cost, logits.dtype) if narrow else cost


def _move_dim_to_end(tensor, axis, rank):
    return slicing_ops.transpose(tensor, joining_ops.concat(
        [math_ops.range(axis), math_ops.range(axis + 1, rank), [axis]], 0))


def _flatten_outer_dims(x):
    """`x` as a matrix of its last dim's columns, its static shape kept where known."""
    rank = array_ops.rank(x)
    last = slicing_ops.slice(array_ops.shape(x), [math_ops.subtract(rank, 1)], [1])
    out = array_ops.reshape(x, joining_ops.concat([[-1], last], 0))
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is not None and None not in dims[:-1]:
        out.set_shape([int(np.prod(dims[:-1], dtype=np.int64)), dims[-1]])
    return out


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """TensorFlow 1's version: like _v2, but no gradient flows into `labels`."""
    dim = renamed_argument("axis", axis, "dim", dim)
    _ensure_xent_args("softmax_cross_entropy_with_logits", labels, logits)
    graph = graph_of(logits, labels)
    with graph.as_default(), graph.name_scope(name or "softmax_cross_entropy_with_logits_sg") \
            as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim,
                                                name=scope)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log_softmax(logits)[labels]: `labels` are class indices, one per row of logits.

    As TensorFlow builds it: the op on a matrix of logits; for another rank, the op on
    them reshaped to one (under a check of their shapes when these are not all known),
    the loss reshaped back. float16 logits are computed in float32."""
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    graph = graph_of(logits, labels)
    with graph.as_default(), graph.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        check_type(labels.dtype, (dtypes.int32, dtypes.int64), "labels")
        half = logits.dtype.base_dtype == dtypes.float16
        precise = math_ops.cast(logits, dtypes.float32) if half else logits
        lshape, gshape = labels.shape, logits.shape
        labels_shape = array_ops.shape(labels)
        static = lshape.is_fully_defined() and gshape[:-1].is_fully_defined()
        if gshape.ndims == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {gshape}.")
        if gshape.ndims is not None and lshape.ndims is not None \
                and lshape.ndims != gshape.ndims - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received {lshape.ndims}) should "
                             f"equal rank of logits minus 1 (received {gshape.ndims}).")
        if static and lshape != gshape[:-1]:
            raise ValueError(f"Shape mismatch: The shape of labels (received {lshape}) should "
                             f"equal the shape of logits except for the last dimension "
                             f"(received {gshape}).")
        if gshape.ndims == 2:
            cost = _sparse_xent(precise, labels, name)
        else:
            checks = [] if static else [check_ops.assert_equal(
                array_ops.shape(labels), array_ops.shape(logits)[:-1])]
            with graph.control_dependencies(checks):
                classes = array_ops.shape(logits)[array_ops.rank(logits) - 1]
                cost = _sparse_xent(array_ops.reshape(precise, [-1, classes]),
                                    array_ops.reshape(labels, [-1]), name)
                cost = array_ops.reshape(cost, labels_shape)
                cost.set_shape(lshape)
        return math_ops.cast(cost, dtypes.float16) if half else cost


def _sparse_xent(logits, labels, name):
    dtype = logits.dtype.base_dtype
    return make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], [dtype, dtype],
                   name=name or "SparseSoftmaxCrossEntropyWithLogits",
                   attrs={"T": dtype, "Tlabels": labels.dtype.base_dtype}).outputs[0]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss, max(x, 0) - x * z + log(1 + exp(-|x|)) for stability,
    built as TensorFlow builds it: its max and -|x| are Selects on x >= 0, so that the
    gradient at x = 0 is sigmoid(0) - z (a Relu's and an Abs's would give -z)."""
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", labels, logits)
    graph = graph_of(logits, labels)
    with graph.as_default(), graph.name_scope(name or "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError("`logits` and `labels` must have the same shape, received "
                             f"({logits.shape} vs {labels.shape}).")
        zeros = array_ops.zeros_like(logits, dtype=logits.dtype)
        positive = logits >= zeros
        relu_logits = array_ops.where(positive, logits, zeros)
        neg_abs_logits = array_ops.where(positive, -logits, logits)
        return math_ops.add(relu_logits - logits * labels,
                            unary_ops.log1p(unary_ops.exp(neg_abs_logits)), name=scope)


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_grad=None):
    logits = op.inputs[0]
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    if grad_grad is not None and grad_grad.op.type != "ZerosLike":
        # d(backprop)/d(logits) is the softmax Jacobian, applied to grad_grad.
        y = softmax(logits)
        grad = grad + (grad_grad - math_ops.reduce_sum(grad_grad * y, -1, keepdims=True)) * y
    return grad, _broadcast_mul(grad_loss, -log_softmax(logits))


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_grad=None):
    return _broadcast_mul(grad_loss, op.outputs[1]), None


# -- l2_loss, bias_add, in_top_k ------------------------------------------------------

define_op("L2Loss", lambda op: [scalar()])


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return one_input_op("L2Loss", t, name, "t")


@RegisterGradient("L2Loss")
def _l2_loss_grad(op, grad):
    return op.inputs[0] * grad


def _channel_index(op, ndims):
    return 1 if op.get_attr("data_format").startswith(b"NC") and ndims > 2 else ndims - 1


def _bias_add_shape(op):
    value, bias = op.inputs
    shape = value.shape
    if bias.shape.ndims not in (None, 1):
        raise shape_error(op, f"Shape must be rank 1 but is rank {bias.shape.ndims}")
    if shape.ndims is None:
        return [shape]
    if shape.ndims < 2:
        raise shape_error(op, f"Shape must be at least rank 2 but is rank {shape.ndims}")
    dims = shape.as_list()
    channel = _channel_index(op, shape.ndims)
    size = bias.shape[0].value if bias.shape.ndims == 1 else None
    if dims[channel] is not None and size is not None and dims[channel] != size:
        raise shape_error(
            op, f"Dimensions must be equal, but are {dims[channel]} and {size}")
    dims[channel] = dims[channel] if dims[channel] is not None else size
    return [TensorShape(dims)]


def _bias_add_grad_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [unknown_shape(1)]
    return [TensorShape([shape[_channel_index(op, shape.ndims)]])]


define_op("BiasAdd", _bias_add_shape)
define_op("BiasAddGrad", _bias_add_grad_shape)


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with bias 1-D along the channel dimension (last, or 1 for NC..)."""
    with op_scope("BiasAdd", name, value, bias) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        data_format = data_format or "NHWC"
        if data_format not in ("NHWC", "NCHW", "N..C", "NC.."):
            raise ValueError(f"Unknown data_format: {data_format}")
        dtype = value.dtype.base_dtype
        return make_tensor("BiasAdd", [value, bias], dtype, name=scope,
                           attrs={"T": dtype, "data_format": data_format})


@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    data_format = op.get_attr("data_format")
    return grad, make_tensor("BiasAddGrad", [grad], grad.dtype.base_dtype,
                             attrs={"T": grad.dtype.base_dtype, "data_format": data_format})


define_op("InTopKV2", lambda op: [op.inputs[1].shape])
for _op in ("InTopKV2", "BiasAddGrad"):
    NotDifferentiable(_op)


def in_top_k(predictions, targets, k, name=None):
    """Whether each target class is among the k largest predictions of its row (ties count)."""
    # TensorFlow's in_top_k wraps the generated InTopKV2 in a scope of its own
    with graph_of(predictions, targets).name_scope(name or "in_top_k"), \
            op_scope("InTopKV2", None, predictions, targets) as scope:
        predictions = convert_to_tensor(predictions, dtype=dtypes.float32, name="predictions")
        targets = convert_to_tensor(targets, name="targets")
        check_type(targets.dtype, (dtypes.int32, dtypes.int64), "targets")
        if predictions.shape.ndims not in (None, 2):
            raise ValueError(f"Shape must be rank 2 but is rank {predictions.shape.ndims} "
                             "for 'InTopKV2' (op: 'InTopKV2')")
        k = convert_to_tensor(k, dtype=targets.dtype.base_dtype, name="k")
        return make_tensor("InTopKV2", [predictions, targets, k], dtypes.bool_, name=scope,
                           attrs={"T": targets.dtype.base_dtype})


# -- dropout --------------------------------------------------------------------------

def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Keeps each element with probability 1 - rate, scaled by 1 / (1 - rate); the others
    are zero. TensorFlow 1's signature (`keep_prob`, or `rate=`) over TensorFlow 2's
    dropout, built as it is: a Select of the scaled `x` where a uniform sample is at
    least `rate`, the scale computed in Python for a number."""
    try:
        rate_from_keep_prob = None if keep_prob is None else 1. - keep_prob
    except TypeError:
        raise ValueError("`keep_prob` must be a floating point number or Tensor. "
                         f"Received: keep_prob={keep_prob}") from None
    rate = renamed_argument("rate", rate, "keep_prob", rate_from_keep_prob)
    if rate is None:
        raise ValueError(f"`rate` must be provided. Received: rate={rate}")
    with op_scope("dropout", name, x):
        is_number = isinstance(rate, numbers.Real)
        if is_number and not 0 <= rate < 1:
            raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be "
                             f"scaled. Received: x_dtype={x.dtype}")
        if is_number and rate == 0:
            return x
        dtype = x.dtype.base_dtype
        if is_number:
            scaled = math_ops.multiply(x, constant_op.constant(1 / (1 - rate), dtype=dtype))
        elif not is_tensor(rate):
            raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: rate={rate}")
        else:
            rate.shape.assert_has_rank(0)
            if rate.dtype.base_dtype != dtype:
                raise ValueError("`x.dtype` must be compatible with `rate.dtype`. Received: "
                                 f"x.dtype={x.dtype} and rate.dtype={rate.dtype}")
            scaled = math_ops.realdiv(x, math_ops.subtract(constant_op.constant(1, dtype), rate))
        sample = random_ops.random_uniform(_noise_shape(x, noise_shape), dtype=dtype, seed=seed)
        out = array_ops.where_v2(sample >= rate, scaled, constant_op.constant(0, dtype=dtype))
        out.set_shape(x.shape)
        return out


def _noise_shape(x, noise_shape):
    """TensorFlow's: x's shape, or `noise_shape` with its unknown dims taken from x's."""
    if noise_shape is None:
        return array_ops.shape(x)
    try:
        given = as_shape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if x.shape.ndims is None or x.shape.ndims != given.ndims:
        return noise_shape
    return TensorShape([g if g is not None else d
                        for g, d in zip(given.as_list(), x.shape.as_list())])


# -- moments, l2_normalize --------------------------------------------------------------

def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """The mean and variance of `x` over `axes` (`shift` is accepted and unused, as in
    TensorFlow); float16 is computed in float32."""
    keepdims = bool(renamed_argument("keepdims", keepdims, "keep_dims", keep_dims))
    with graph_of(x).name_scope(name or "moments"):
        half = getattr(x, "dtype", None) == dtypes.float16
        y = math_ops.cast(x, dtypes.float32) if half else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keepdims:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        if half:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset (scale and offset
    may be None), as TensorFlow builds it: x times one factor plus one shift."""
    with graph_of(x, mean, variance, scale, offset).name_scope(name or "batchnorm"):
        inv = unary_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(  # the product first
            offset - mean * inv if offset is not None else -mean * inv, x.dtype)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)), of a real tensor."""
    axis = renamed_argument("axis", axis, "dim", dim)
    with graph_of(x).name_scope(name or "l2_normalize") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            raise TypeError("dtfnb's l2_normalize takes real tensors, not "
                            f"{x.dtype.base_dtype.name}")
        square_sum = math_ops.reduce_sum(unary_ops.square(x), axis, keepdims=True)
        inverse_norm = unary_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inverse_norm, name=scope)


# -- top_k ---------------------------------------------------------------------------

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k_shape(op):
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims < 1:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    k, last = constant_value(op.inputs[1]), x.as_list()[-1]
    if k is not None and last is not None and last < int(k):
        raise shape_error(op, f"input must have last dimension >= k = {int(k)} but is "
                          f"{last}", computed={1: k})
    out = TensorShape(x.as_list()[:-1] + [None if k is None else int(k)])
    return [out, out]


define_op("TopKV2", _top_k_shape)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The k largest entries of each innermost row and their indices, largest first
    (ties: the lower index first): a TopKV2(values, indices)."""
    with op_scope("TopKV2", name, input, k) as scope:
        x = convert_to_tensor(input, name="input")
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        dtype, index_type = x.dtype.base_dtype, dtypes.as_dtype(index_type)
        op = make_op("TopKV2", [x, k], [dtype, index_type], name=scope,
                     attrs={"T": dtype, "sorted": bool(sorted), "Tk": k.dtype,
                            "index_type": index_type})
        return TopKV2(*op.outputs)


@RegisterGradient("TopKV2")
def _top_k_grad(op, grad, _):
    """TensorFlow's: the gradient scattered to the flat positions of the indices."""
    in_shape = array_ops.shape(op.inputs[0])
    ind_shape = array_ops.shape(op.outputs[1])
    ind_lastdim = slicing_ops.gather(math_ops.cast(ind_shape, dtypes.int64),
                                     array_ops.size(ind_shape) - 1)
    ind_2d = array_ops.reshape(op.outputs[1], joining_ops.stack([-1, ind_lastdim]))
    in_lastdim = slicing_ops.gather(math_ops.cast(in_shape, dtypes.int64),
                                    array_ops.size(in_shape) - 1)
    outerdim = array_ops.shape(ind_2d)[0]
    ind = array_ops.reshape(ind_2d + math_ops.cast(array_ops.expand_dims(
        math_ops._range(0, math_ops.cast(outerdim, dtypes.int64) * in_lastdim, in_lastdim),
        -1), dtypes.int32), [-1])
    return [array_ops.reshape(nd_indexing.scatter_nd(array_ops.expand_dims(ind, -1),
                                                      array_ops.reshape(grad, [-1]),
                                                      [math_ops.reduce_prod(in_shape)]),
                              in_shape),
            array_ops.zeros([], dtype=dtypes.int32)]
