"""tf.losses: each loss is an elementwise loss, weighted and reduced by
compute_weighted_loss, and added to the graph's LOSSES collection.

The graphs are TensorFlow's op for op: every loss checks its weights against the
elementwise losses first (assert_broadcastable, a control dependency of the result),
casts to float32 and back, and divides through div_no_nan, so that all-zero weights give
a loss of 0 rather than NaN."""

from dtfnb.base import dtypes
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import array_ops, constant_op, math_ops, nn_ops, unary_ops
from dtfnb.ops.building import graph_of, renamed_argument
from dtfnb.ops.cond import cond
from dtfnb.ops.weights_broadcast import assert_broadcastable, broadcast_weights


class Reduction:
    """How compute_weighted_loss reduces the weighted losses.

    NONE keeps their shape; SUM adds them; MEAN divides the sum by the sum of the
    weights; SUM_OVER_BATCH_SIZE by the number of losses; SUM_BY_NONZERO_WEIGHTS (the
    default, also named SUM_OVER_NONZERO_WEIGHTS) by the number of nonzero weights."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        """Every key, SUM_OVER_NONZERO_WEIGHTS and its alias both."""
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        """ValueError unless `key` is one of all()."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of "
                             f"{cls.all()}.")


# -- the collections -----------------------------------------------------------------


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (none if it is None or empty)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses of `loss_collection` whose names match `scope`."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The REGULARIZATION_LOSSES whose names match `scope`."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a constant 0.0 if there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant_op.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES (and, by default, the regularization losses) in `scope`."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)


# -- weighting and reducing ---------------------------------------------------------


def _safe_mean(losses, num_present):
    return math_ops.div_no_nan(math_ops.reduce_sum(losses), num_present, name="value")


def _num_present(losses, weights, per_batch=False):
    """How many losses have a nonzero weight, in all or (per_batch) per example."""
    with graph_of(losses, weights).name_scope("num_present") as scope:
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0),
                                  array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = broadcast_weights(present, losses)
        if per_batch:
            return math_ops.reduce_sum(
                present, axis=math_ops.range(1, array_ops.rank(present)), keepdims=True,
                name=scope)
        return math_ops.reduce_sum(present, name=scope)


def _num_elements(losses):
    with graph_of(losses).name_scope("num_elements") as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`losses` times `weights` (a scalar, or of the losses' rank with each dimension 1
    or theirs), reduced by `reduction`, in the losses' dtype; added to `loss_collection`."""
    Reduction.validate(reduction)
    graph = graph_of(losses, weights)
    with graph.name_scope(scope or "weighted_loss"):
        with graph.control_dependencies((assert_broadcastable(weights, losses),)):
            losses = convert_to_tensor(losses)
            input_dtype = losses.dtype
            losses = math_ops.cast(losses, dtype=dtypes.float32)
            weights = math_ops.cast(weights, dtype=dtypes.float32)
            loss = math_ops.multiply(losses, weights)
            if reduction != Reduction.NONE:
                loss = math_ops.reduce_sum(loss)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(
                        loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            add_loss(loss, loss_collection)
            return loss


def _check_given(**arguments):
    for name, value in arguments.items():
        if value is None:
            raise ValueError(f"Argument `{name}` must not be None.")


def _weighted_loss(default_name, scope, predictions, labels, weights, loss_collection,
                   reduction, elementwise):
    """`elementwise(predictions, labels)` of both cast to float32 (of compatible static
    shapes, else ValueError), weighted and reduced, in a scope named `scope` or the
    loss's own name: the common build of TensorFlow's losses."""
    with graph_of(predictions, labels, weights).name_scope(scope or default_name) as scope:
        predictions = math_ops.cast(predictions, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        return compute_weighted_loss(elementwise(predictions, labels), weights, scope,
                                     loss_collection, reduction=reduction)


# -- the losses ----------------------------------------------------------------------


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|, weighted and reduced."""
    _check_given(labels=labels, predictions=predictions)
    return _weighted_loss("absolute_difference", scope, predictions, labels, weights,
                          loss_collection, reduction,
                          lambda p, t: unary_ops.abs(math_ops.subtract(p, t)))


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - the sum over `axis` of predictions * labels (both assumed unit-normalized)."""
    axis = renamed_argument("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_given(labels=labels, predictions=predictions)
    return _weighted_loss(
        "cosine_distance_loss", scope, predictions, labels, weights, loss_collection,
        reduction, lambda p, t: 1 - math_ops.reduce_sum(math_ops.multiply(p, t),
                                                        axis=(axis,), keepdims=True))


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - y * logits) with labels 0/1 mapped to y = -1/1."""
    _check_given(labels=labels, logits=logits)

    def hinge(logits, labels):
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        return nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))

    return _weighted_loss("hinge_loss", scope, logits, labels, weights, loss_collection,
                          reduction, hinge)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Squared error for errors up to `delta`, linear beyond."""
    _check_given(labels=labels, predictions=predictions)

    def huber(predictions, labels):
        abs_error = unary_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        return math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))

    return _weighted_loss("huber_loss", scope, predictions, labels, weights, loss_collection,
                          reduction, huber)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The cross-entropy of probabilities `predictions` against 0/1 labels."""
    _check_given(labels=labels, predictions=predictions)
    return _weighted_loss(
        "log_loss", scope, predictions, labels, weights, loss_collection, reduction,
        lambda p, t: (-math_ops.multiply(t, unary_ops.log(p + epsilon))
                      - math_ops.multiply((1 - t), unary_ops.log(1 - p + epsilon))))


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """The mean, over each example's pairs of elements, of the squared difference between
    their differences in `predictions` and in `labels`; weighted per example."""
    _check_given(labels=labels, predictions=predictions)
    graph = graph_of(predictions, labels, weights)
    with graph.name_scope(scope or "mean_pairwise_squared_error"):
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        with graph.control_dependencies((assert_broadcastable(weights, labels),)):
            predictions = math_ops.cast(predictions, dtype=dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_ops.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = math_ops.reduce_sum(
                unary_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * math_ops.div_no_nan(
                sum_squares_diff_per_batch,
                math_ops.maximum(num_present_per_batch - 1, 0), name="value")
            sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * math_ops.div_no_nan(
                unary_ops.square(sum_diff),
                math_ops.maximum(math_ops.multiply(num_present_per_batch,
                                                   num_present_per_batch - 1), 0),
                name="value")
            loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
            mean_loss = array_ops.where(math_ops.reduce_sum(num_present_per_batch) > 0,
                                        loss, array_ops.zeros_like(loss), name="value")
            add_loss(mean_loss, loss_collection)
            return mean_loss


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels)², weighted and reduced."""
    _check_given(labels=labels, predictions=predictions)
    return _weighted_loss("mean_squared_error", scope, predictions, labels, weights,
                          loss_collection, reduction, math_ops.squared_difference)


def _logits_and_labels(logits, labels):
    """The labels cast to the logits' dtype, of a compatible static shape."""
    logits = convert_to_tensor(logits)
    labels = math_ops.cast(labels, logits.dtype)
    logits.shape.assert_is_compatible_with(labels.shape)
    return logits, labels


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sigmoid_cross_entropy_with_logits, labels smoothed toward 1/2 by `label_smoothing`."""
    _check_given(multi_class_labels=multi_class_labels, logits=logits)
    with graph_of(logits, multi_class_labels, weights).name_scope(
            scope or "sigmoid_cross_entropy_loss") as scope:
        logits, multi_class_labels = _logits_and_labels(logits, multi_class_labels)
        if label_smoothing > 0:
            multi_class_labels = (multi_class_labels * (1 - label_smoothing)
                                  + 0.5 * label_smoothing)
        losses = nn_ops.sigmoid_cross_entropy_with_logits(
            labels=multi_class_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """softmax_cross_entropy_with_logits_v2 with the labels' gradient stopped, labels
    smoothed toward uniform by `label_smoothing`."""
    _check_given(onehot_labels=onehot_labels, logits=logits)
    with graph_of(logits, onehot_labels, weights).name_scope(
            scope or "softmax_cross_entropy_loss") as scope:
        logits, onehot_labels = _logits_and_labels(logits, onehot_labels)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(
            labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def _squeeze_last_if(condition, x):
    return cond(condition, lambda: array_ops.squeeze(x, [-1]), lambda: x)


def _remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0):
    """Drops a trailing dimension of 1 from `predictions` or `labels` where their ranks
    differ by one more or one less than `expected_rank_diff` (a cond where ranks are
    unknown)."""
    with graph_of(labels, predictions).name_scope("remove_squeezable_dimensions"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        predictions_rank = predictions.shape.ndims
        labels_rank = labels.shape.ndims
        if labels_rank is not None and predictions_rank is not None:
            rank_diff = predictions_rank - labels_rank
            if (rank_diff == expected_rank_diff + 1
                    and predictions.shape.dims[-1].is_compatible_with(1)):
                predictions = array_ops.squeeze(predictions, [-1])
            elif (rank_diff == expected_rank_diff - 1
                  and labels.shape.dims[-1].is_compatible_with(1)):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
        if predictions_rank is None or predictions.shape.dims[-1].is_compatible_with(1):
            predictions = _squeeze_last_if(
                math_ops.equal(expected_rank_diff + 1, rank_diff), predictions)
        if labels_rank is None or labels.shape.dims[-1].is_compatible_with(1):
            labels = _squeeze_last_if(math_ops.equal(expected_rank_diff - 1, rank_diff), labels)
        return labels, predictions


def _squeezed_weights(labels, weights):
    """`weights` less a trailing dimension of 1 where it has one more than `labels`."""
    weights = convert_to_tensor(weights)
    labels_rank, weights_rank = labels.shape.ndims, weights.shape.ndims
    if labels_rank is not None and weights_rank is not None:
        return array_ops.squeeze(weights, [-1]) if weights_rank - labels_rank == 1 else weights
    rank_diff = array_ops.rank(weights) - array_ops.rank(labels)
    if weights_rank is None or (weights_rank > 0
                                and weights.shape.dims[-1].is_compatible_with(1)):
        weights = _squeeze_last_if(math_ops.equal(1, rank_diff), weights)
    return weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sparse_softmax_cross_entropy_with_logits of class indices `labels`; a trailing
    dimension of 1 on the labels or the weights is dropped."""
    _check_given(labels=labels, logits=logits)
    with graph_of(logits, labels, weights).name_scope(
            scope or "sparse_softmax_cross_entropy_loss") as scope:
        labels, logits = _remove_squeezable_dimensions(labels, logits, expected_rank_diff=1)
        weights = _squeezed_weights(labels, weights)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)
