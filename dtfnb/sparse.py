"""tf.sparse (TensorFlow 1.x's names): re-exports only (see dtfnb/ops/sparse_ops.py)."""

from dtfnb.framework.sparse_tensor import SparseTensor  # noqa: F401 - re-exported
from dtfnb.ops.array_ops import sparse_placeholder as placeholder  # noqa: F401 - re-exported
from dtfnb.ops.sparse_ops import sparse_retain as retain  # noqa: F401 - re-exported
from dtfnb.ops.sparse_ops import (  # noqa: F401 - re-exported
    sparse_tensor_to_dense as to_dense,
)
