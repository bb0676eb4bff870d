"""tf.distribute.cluster_resolver: the cluster and this task, from the environment."""

from dtfnb.distributed_runtime.resolvers import SlurmClusterResolver, TFConfigClusterResolver

__all__ = ["SlurmClusterResolver", "TFConfigClusterResolver"]
