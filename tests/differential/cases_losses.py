"""tf.losses: every loss's graph op for op, its values under each reduction and weights
shape, the weights checks (static errors and the dynamic Assert), the squeezing of
trailing dimensions of 1, label smoothing, the LOSSES collections and gradients."""

import numpy as np
from observe import node_defs, outcome, run

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


_LABELS = np.float32([[0, 1, 1], [1, 0, 1]])
_PREDICTIONS = np.float32([[0.1, 0.8, 0.6], [0.7, 0.4, 0.9]])
_UNIT = np.float32([[0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
_LOGITS = np.float32([[2.0, -1.0, 0.5], [0.3, 1.2, -0.7]])
_CLASSES = np.int32([2, 1])


def _every_loss(tf, labels, predictions, weights=1.0, **kwargs):
    """Each loss of tf.losses on the same operands (classes where a loss needs them)."""
    return [
        tf.losses.absolute_difference(labels, predictions, weights, **kwargs),
        tf.losses.cosine_distance(_UNIT, tf.constant(_UNIT[::-1].copy()), axis=1,
                                  weights=weights, **kwargs),
        tf.losses.hinge_loss(labels, predictions, weights, **kwargs),
        tf.losses.huber_loss(labels, predictions * 3, weights, delta=0.5, **kwargs),
        tf.losses.log_loss(labels, predictions, weights, **kwargs),
        tf.losses.mean_squared_error(labels, predictions, weights, **kwargs),
        tf.losses.sigmoid_cross_entropy(labels, predictions, weights, **kwargs),
        tf.losses.softmax_cross_entropy(labels, predictions, weights, **kwargs),
    ]


@case
def every_loss_with_default_weights(tf):
    """The default reduction (the sum over the number of nonzero weights) of each loss,
    the graphs TensorFlow builds for them, and what the LOSSES collection holds."""
    labels, predictions = tf.constant(_LABELS), tf.constant(_PREDICTIONS)
    losses = _every_loss(tf, labels, predictions)
    losses.append(tf.losses.sparse_softmax_cross_entropy(_CLASSES, tf.constant(_LOGITS)))
    losses.append(tf.losses.mean_pairwise_squared_error(labels, predictions))
    collected = [t.name for t in tf.losses.get_losses()]
    return run(tf, losses), collected, node_defs(tf.get_default_graph())


@case
def each_reduction_and_weights_shape(tf):
    """Scalar, per-example ([2, 1]) and per-element weights, zeros among them, under each
    reduction: values, shapes and dtypes (a float64 loss is cast back)."""
    labels, predictions = tf.constant(_LABELS), tf.constant(_PREDICTIONS)
    built = []
    for weights in (2.0, np.float32([[1.0], [0.0]]), np.float32([[1, 0, 2], [0, 0, 3]]),
                    0.0):
        for reduction in tf.losses.Reduction.all():
            built.append(tf.losses.mean_squared_error(labels, predictions, weights,
                                                      reduction=reduction))
            built.append(tf.losses.compute_weighted_loss(
                tf.constant(_PREDICTIONS.astype(np.float64)), weights, reduction=reduction))
    return run(tf, built), [(t.dtype.name, t.shape.as_list()) for t in built]


@case
def weights_checked_at_build(tf):
    """Weights whose rank or dimensions cannot broadcast are a ValueError at build; an
    unknown reduction key, a missing argument and a cosine distance without an axis too."""
    labels, predictions = tf.constant(_LABELS), tf.constant(_PREDICTIONS)
    return [
        outcome(tf.losses.mean_squared_error, labels, predictions, np.float32([1, 2])),
        outcome(tf.losses.mean_squared_error, labels, predictions,
                np.float32([[1, 2], [3, 4]])),
        outcome(tf.losses.absolute_difference, labels, predictions, reduction="mean"),
        outcome(tf.losses.log_loss, None, predictions),
        outcome(tf.losses.hinge_loss, labels, None),
        outcome(tf.losses.cosine_distance, labels, predictions),
        outcome(tf.losses.cosine_distance, labels, predictions, axis=1, dim=1),
        outcome(tf.losses.mean_squared_error, labels, tf.constant([[1.0, 2.0]])),
        outcome(tf.losses.Reduction.validate, "sum"),
    ]


@case
def weights_checked_at_run(tf):
    """Weights of unknown shape: TensorFlow's dynamic check (a cond over the ranks and a
    set difference of the dimensions), passing for broadcastable weights and failing the
    step with both shapes otherwise; its graph op for op."""
    labels = tf.placeholder(tf.float32, [None, 3])
    weights = tf.placeholder(tf.float32)
    loss = tf.losses.mean_squared_error(labels, tf.constant(_PREDICTIONS), weights)
    feeds = [np.float32(2.0), np.float32([[1.0], [0.5]]), np.float32([[1, 0, 2], [0, 0, 3]]),
             np.float32([1, 2, 3]), np.float32([[1, 2], [3, 4]]),
             np.float32([[[1, 2, 3]], [[4, 5, 6]]])]
    results = [outcome(run, tf, loss, {labels: _LABELS, weights: w}) for w in feeds]
    return results, node_defs(tf.get_default_graph())


@case
def sparse_labels_and_weights_squeezed(tf):
    """A trailing dimension of 1 on the class labels or the weights is dropped, statically
    where ranks are known and by conds where they are not."""
    logits = tf.constant(_LOGITS)
    known = [tf.losses.sparse_softmax_cross_entropy(_CLASSES[:, None], logits),
             tf.losses.sparse_softmax_cross_entropy(_CLASSES, logits,
                                                    np.float32([[2.0], [0.5]]))]
    classes = tf.placeholder(tf.int32)
    weights = tf.placeholder(tf.float32)
    unknown = tf.losses.sparse_softmax_cross_entropy(
        classes, tf.placeholder_with_default(_LOGITS, None), weights, scope="unknown")
    values = run(tf, known)
    values += [outcome(run, tf, unknown, {classes: c, weights: w})
               for c, w in ((_CLASSES, np.float32([2.0, 0.5])),
                            (_CLASSES[:, None], np.float32([[2.0], [0.5]])),
                            (_CLASSES, np.float32(3.0)))]
    return values, node_defs(tf.get_default_graph())


@case
def label_smoothing(tf):
    """Labels smoothed toward uniform (softmax) or toward 1/2 (sigmoid), and their graphs."""
    labels, logits = tf.constant(_LABELS), tf.constant(_LOGITS)
    built = [tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.1),
             tf.losses.sigmoid_cross_entropy(labels, logits, label_smoothing=0.2),
             tf.losses.sigmoid_cross_entropy(tf.constant([[1, 0, 1], [0, 0, 1]]), logits,
                                             weights=np.float32([[1.0], [2.0]]))]
    return run(tf, built), node_defs(tf.get_default_graph())


@case
def pairwise_squared_error_and_every_loss_weighted(tf):
    """mean_pairwise_squared_error with per-example weights (its own reduction) on rank 2
    and 3, and the other losses with weights that need broadcast_weights."""
    labels, predictions = tf.constant(_LABELS), tf.constant(_PREDICTIONS)
    cube = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    built = [tf.losses.mean_pairwise_squared_error(labels, predictions,
                                                   np.float32([[1.0], [3.0]])),
             tf.losses.mean_pairwise_squared_error(cube, cube * cube, 0.5),
             tf.losses.mean_pairwise_squared_error(labels, predictions, 0.0)]
    built += _every_loss(tf, labels, predictions, np.float32([[1.0], [0.0]]),
                         reduction=tf.losses.Reduction.MEAN)
    return run(tf, built), node_defs(tf.get_default_graph())


@case
def collections_and_total_loss(tf):
    """Where losses go: LOSSES, another collection or none; get_losses by scope;
    regularization losses and the total loss (with and without them)."""
    labels, predictions = tf.constant(_LABELS), tf.constant(_PREDICTIONS)
    with tf.name_scope("tower_0"):
        first = tf.losses.mean_squared_error(labels, predictions)
    with tf.name_scope("tower_1"):
        second = tf.losses.absolute_difference(labels, predictions)
    tf.losses.huber_loss(labels, predictions, loss_collection="mine")
    tf.losses.log_loss(labels, predictions, loss_collection=None)
    no_regularization = tf.losses.get_regularization_loss()
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.25, name="l2"))
    tf.losses.add_loss(tf.constant(1.5, name="extra"))
    names = [[t.name for t in tf.losses.get_losses(scope)] for scope in (None, "tower_1")]
    names.append([t.name for t in tf.losses.get_losses(loss_collection="mine")])
    names.append([t.name for t in tf.losses.get_regularization_losses()])
    totals = [tf.losses.get_total_loss(), tf.losses.get_total_loss(False, name="plain"),
              tf.losses.get_total_loss(scope="tower_0"), tf.losses.get_regularization_loss(),
              no_regularization]
    return names, [t.name for t in totals], run(tf, [first, second] + totals)


@case
def gradients_through_the_losses(tf):
    """Training through a weighted loss: the gradients' values and TensorFlow's gradient
    graph (div_no_nan, the casts and the weights' broadcast)."""
    w = tf.Variable(np.float32([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [0.2, 0.1, 0.9]]))
    logits = tf.matmul(tf.constant(_PREDICTIONS), w)
    loss = (tf.losses.sparse_softmax_cross_entropy(_CLASSES, logits, np.float32([1.0, 2.0]))
            + tf.losses.mean_squared_error(_LABELS, logits, np.float32([[1.0], [0.0]])))
    grad, = tf.gradients(loss, [w])
    with tf.Session() as sess:
        sess.run(w.initializer)
        values = sess.run([loss, grad])
    return values, node_defs(tf.get_default_graph())
