"""tf.nn: re-exports only (the ops live in dtfnb/ops/nn_ops.py and embedding_ops.py)."""

from dtfnb.ops.embedding_ops import (  # noqa: F401 - re-exported
    embedding_lookup,
    embedding_lookup_sparse,
)
from dtfnb.ops.nn_ops import (  # noqa: F401 - re-exported
    batch_normalization,
    bias_add,
    dropout,
    elu,
    in_top_k,
    l2_loss,
    l2_normalize,
    leaky_relu,
    log_softmax,
    moments,
    relu,
    relu6,
    selu,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    softplus,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
    top_k,
)
