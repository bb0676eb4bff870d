"""dtfnb's own additions to TensorFlow 1's API, under a name that says they are not
TensorFlow's: code that uses them does not run on TensorFlow.

    from dtfnb.extensions import StalenessAwareOptimizer

(dtfnb's own `ConfigProto` fields, such as `transfer_float_type` and `emulated_gpus`, stay
in `ConfigProto`, which is a proto; docs/differences.md lists every one.)
"""

from dtfnb.train.collective_all_reduce import CollectiveAllReduceOptimizer
from dtfnb.train.staleness import StalenessAwareOptimizer

__all__ = ["CollectiveAllReduceOptimizer", "StalenessAwareOptimizer"]
