"""tf.random (TensorFlow 1.x's aliases): re-exports only (see dtfnb/ops/random_ops.py)."""

from dtfnb.framework.api import set_random_seed  # noqa: F401 - re-exported
from dtfnb.ops.random_ops import (  # noqa: F401 - re-exported
    categorical,
    multinomial,
    truncated_normal,
)
from dtfnb.ops.random_ops import random_normal as normal  # noqa: F401 - re-exported
from dtfnb.ops.random_ops import random_shuffle as shuffle  # noqa: F401 - re-exported
from dtfnb.ops.random_ops import random_uniform as uniform  # noqa: F401 - re-exported
