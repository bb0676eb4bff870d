"""Neural-network kernels: activations and their gradients, softmax, losses, bias_add, in_top_k.

Every kernel works on any `xp` (numpy or cupy) and keeps the input dtype. Softmax
and the cross entropies subtract the row maximum first (log-sum-exp), so large
logits never overflow.
"""

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.shapes import dims_string
from dtfnb.kernels.registry import register_kernel

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


# -- activations ----------------------------------------------------------------------

_ZEROS_KEPT = 1 << 20   # elements: up to 8 MB of zeros kept per dtype
_zeros = {}   # dtype: read-only zeros, as many as the largest Relu input asked for


def _zeros_like(x):
    """A read-only array of zeros of x's shape and dtype, a view of one kept per dtype."""
    zeros = _zeros.get(x.dtype)
    if zeros is None or zeros.size < x.size:
        zeros = np.zeros(x.size, x.dtype)
        zeros.flags.writeable = False
        _zeros[x.dtype] = zeros
    return zeros[:x.size].reshape(x.shape)


@register_kernel("Relu")
def _relu(ctx, step, x):
    # numpy's maximum of two arrays is SIMD, of an array and a scalar element by element:
    # 4.7 against 15 us for 128 x 300 float32s.
    if ctx.xp is np and x.flags.c_contiguous and 0 < x.size <= _ZEROS_KEPT:
        return np.maximum(x, _zeros_like(x))
    return ctx.xp.maximum(x, x.dtype.type(0))  # a Python 0 costs numpy a type resolution


@register_kernel("ReluGrad")
def _relu_grad(ctx, step, grad, features):
    return grad * (features > 0)  # a bool factor: no float copy of the mask


@register_kernel("Relu6")
def _relu6(ctx, step, x):
    return ctx.xp.clip(x, 0, 6)


@register_kernel("Relu6Grad")
def _relu6_grad(ctx, step, grad, features):
    return grad * ((features > 0) & (features < 6)).astype(grad.dtype)


@register_kernel("Elu")
def _elu(ctx, step, x):
    xp = ctx.xp
    # expm1 of the clipped value: the unused branch of `where` must not overflow.
    return xp.where(x < 0, xp.expm1(xp.minimum(x, 0)), x)


@register_kernel("EluGrad")
def _elu_grad(ctx, step, grad, outputs):
    return ctx.xp.where(outputs < 0, grad * (outputs + 1), grad)


@register_kernel("Selu")
def _selu(ctx, step, x):
    xp = ctx.xp
    negative = (SELU_SCALE * SELU_ALPHA) * xp.expm1(xp.minimum(x, 0))
    return xp.where(x < 0, negative, SELU_SCALE * x).astype(x.dtype)


@register_kernel("SeluGrad")
def _selu_grad(ctx, step, grad, outputs):
    xp = ctx.xp
    return xp.where(outputs < 0, grad * (outputs + SELU_SCALE * SELU_ALPHA),
                    grad * SELU_SCALE).astype(grad.dtype)


@register_kernel("LeakyRelu")
def _leaky_relu(ctx, step, x):
    alpha = ctx.attrs.get("alpha", 0.2)
    return ctx.xp.where(x > 0, x, x * alpha).astype(x.dtype)


@register_kernel("LeakyReluGrad")
def _leaky_relu_grad(ctx, step, grad, features):
    alpha = ctx.attrs.get("alpha", 0.2)
    return ctx.xp.where(features > 0, grad, grad * alpha).astype(grad.dtype)


@register_kernel("Sigmoid")
def _sigmoid(ctx, step, x):
    xp = ctx.xp
    # exp(-|x|) never overflows; both branches of the logistic are then exact.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


@register_kernel("SigmoidGrad")
def _sigmoid_grad(ctx, step, y, dy):
    return dy * y * (1 - y)


@register_kernel("Tanh")
def _tanh(ctx, step, x):
    return ctx.xp.tanh(x)


@register_kernel("TanhGrad")
def _tanh_grad(ctx, step, y, dy):
    return dy * (1 - y * y)


@register_kernel("Softplus")
def _softplus(ctx, step, x):
    """TensorFlow's: x itself where exp(x) may overflow and log(1 + exp(x)) is x within
    epsilon, exp(x) where it is exp(x) within epsilon, else log(exp(x) + 1)."""
    xp = ctx.xp
    threshold = x.dtype.type(np.log(np.finfo(x.dtype).eps) + 2)
    exp = xp.exp(x)
    return xp.where(x > -threshold, x, xp.where(x < threshold, exp, xp.log(exp + 1)))


@register_kernel("Softsign")
def _softsign(ctx, step, x):
    return x / (ctx.xp.abs(x) + 1)


@register_kernel("SoftsignGrad")
def _softsign_grad(ctx, step, grad, features):
    return grad / ctx.xp.square(ctx.xp.abs(features) + 1)


# -- softmax and cross entropies ------------------------------------------------------

def _log_softmax(xp, logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


def _check_rank_at_least_1(x, what):
    if x.ndim < 1:
        raise InvalidArgumentError(None, None, f"{what} must have rank >= 1, got shape "
                                   f"{list(x.shape)}")


@register_kernel("Softmax")
def _softmax(ctx, step, logits):
    xp = ctx.xp
    _check_rank_at_least_1(logits, "logits")
    e = xp.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@register_kernel("LogSoftmax")
def _log_softmax_kernel(ctx, step, logits):
    _check_rank_at_least_1(logits, "logits")
    return _log_softmax(ctx.xp, logits)


@register_kernel("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(ctx, step, features, labels):
    xp = ctx.xp
    if features.shape[-1:] != labels.shape[-1:] or features.ndim < 1:
        raise InvalidArgumentError(
            None, None, "logits and labels must be broadcastable: logits_size="
            f"{list(features.shape)} labels_size={list(labels.shape)}")
    log_p = _log_softmax(xp, features)
    labels = labels.astype(features.dtype)
    loss = -(labels * log_p).sum(axis=-1)
    return loss, xp.exp(log_p) - labels


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(ctx, step, features, labels):
    # A matrix and a vector, as TensorFlow's kernel takes them: its Python function
    # reshapes logits of another rank around the op.
    if features.ndim != 2:
        raise InvalidArgumentError(
            None, None, f"logits must be 2-D, but got shape {dims_string(features.shape)}")
    if labels.ndim != 1:
        raise InvalidArgumentError(
            None, None, f"labels must be 1-D, but got shape {dims_string(labels.shape)}")
    rows, classes = features.shape
    if rows != labels.shape[0]:
        raise InvalidArgumentError(
            None, None, "logits and labels must have the same first dimension, got logits "
            f"shape {dims_string(features.shape)} and labels shape {dims_string(labels.shape)}")
    if classes == 0:
        raise InvalidArgumentError(None, None, "Must have at least one class, but got logits "
                                   f"shape {dims_string(features.shape)}")
    # As TensorFlow's check: the smallest label if negative, else the largest if too big.
    low, high = (int(labels.min()), int(labels.max())) if rows else (0, 0)
    if low < 0 or high >= classes:
        value = low if low < 0 else high
        listing = " ".join(str(int(v)) for v in labels.tolist())
        raise InvalidArgumentError(
            None, None, f"Received a label value of {value} which is outside the valid range "
            f"of [0, {classes}).  Label values: {listing}")
    xp = ctx.xp
    # TensorFlow's arithmetic: the loss is log(sum(exp(shifted))) - shifted[label], the
    # backprop exp(shifted) / sum(exp(shifted)) less one at the label.
    shifted = features - features.max(axis=-1, keepdims=True)
    backprop = xp.exp(shifted)
    total = backprop.sum(axis=-1, keepdims=True)
    at_labels = labels + xp.arange(0, rows * classes, classes)   # each label's flat index
    loss = xp.log(total.reshape(-1))
    loss -= shifted.reshape(-1)[at_labels]
    backprop /= total
    backprop.reshape(-1)[at_labels] -= 1   # fresh arrays of ours, so changing them is safe
    return loss, backprop


@register_kernel("L2Loss")
def _l2_loss(ctx, step, x):
    return ctx.xp.asarray(ctx.xp.sum(x * x) / 2, dtype=x.dtype)


# -- bias_add and in_top_k ------------------------------------------------------------

def _channel_axis(ctx, ndim):
    return 1 if ctx.attrs.get("data_format", "NHWC").startswith("NC") and ndim > 2 else -1


@register_kernel("BiasAdd")
def _bias_add(ctx, step, value, bias):
    if bias.ndim != 1:
        raise InvalidArgumentError(None, None, f"Biases must be 1D: {list(bias.shape)}")
    axis = _channel_axis(ctx, value.ndim)
    if value.ndim < 2 or value.shape[axis] != bias.shape[0]:
        raise InvalidArgumentError(
            None, None, "Must provide as many biases as the channel dimension of the input "
            f"tensor: {list(bias.shape)} vs. {list(value.shape)}")
    if axis == 1:
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


@register_kernel("BiasAddGrad")
def _bias_add_grad(ctx, step, out_backprop):
    axis = _channel_axis(ctx, out_backprop.ndim) % out_backprop.ndim
    axes = tuple(i for i in range(out_backprop.ndim) if i != axis)
    return out_backprop.sum(axis=axes).astype(out_backprop.dtype)


@register_kernel("InTopKV2")
def _in_top_k(ctx, step, predictions, targets, k):
    xp = ctx.xp
    k = int(k)
    batch, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    safe = xp.where(valid, targets, 0)
    target_values = predictions[xp.arange(batch), safe]
    # A target is in the top k when fewer than k predictions are strictly larger (ties win).
    larger = xp.sum(predictions > target_values[:, None], axis=1)
    return valid & xp.isfinite(target_values) & (larger < k)


@register_kernel("TopKV2")
def _top_k(ctx, step, x, k):
    k = int(k)
    if k < 0:
        raise InvalidArgumentError(None, None, f"Need k >= 0, got {k}")
    if x.ndim < 1:
        raise InvalidArgumentError(None, None, "input must be >= 1-D, got shape "
                                   f"{dims_string(x.shape)}")
    if x.shape[-1] < k:
        raise InvalidArgumentError(None, None, "input must have at least k columns. Had "
                                   f"{x.shape[-1]}, needed {k}")
    # Largest first, ties to the lower index: a stable ascending sort of the reversed
    # row, read from its end.
    n = x.shape[-1]
    order = n - 1 - ctx.xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    values = ctx.xp.take_along_axis(x, order, axis=-1)
    return values, order.astype(ctx.output_types[1].as_numpy_dtype)
