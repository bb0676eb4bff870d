"""Checkpoint ops: SaveShard, WriteCheckpointIndex, RestoreV2 (kernels/checkpoint.py).

As in TensorFlow, saving and restoring are ops that run where they are placed: a
Saver puts each shard's SaveShard and RestoreV2 on its variables' device, so the
task that holds the variables reads and writes their bytes.
"""

from dtfnb.base import dtypes
from dtfnb.base.shapes import scalar
from dtfnb.framework.convert import convert_to_tensor
from dtfnb.framework.registry import NotDifferentiable, define_op
from dtfnb.ops.building import make_op, make_tensor

define_op("SaveShard", lambda op: [scalar()], stateful=True)
define_op("WriteCheckpointIndex", lambda op: [scalar()], stateful=True)
define_op("RestoreV2", None, stateful=True)
for _op in ("SaveShard", "WriteCheckpointIndex", "RestoreV2"):
    NotDifferentiable(_op)


def _strings(values, name):
    return convert_to_tensor(values, dtype=dtypes.string, name=name)


def save_shard(prefix, tensor_names, shape_and_slices, tensors, shard, num_shards, name=None):
    """Writes `tensors` to `<prefix>.data-<shard>-of-<num_shards>`; returns this shard's part
    of the index (a serialized CheckpointIndex), for write_checkpoint_index. A tensor with
    a slice spec in `shape_and_slices` ("5 3 0,2:0,3", else "") is saved as that slice of
    the tensor its name names, as TensorFlow's SaveV2 does."""
    tensors = [convert_to_tensor(t) for t in tensors]
    return make_tensor(
        "SaveShard", [prefix, _strings(tensor_names, "tensor_names"),
                      _strings(shape_and_slices, "shape_and_slices"), *tensors], dtypes.string,
        name=name or "SaveShard",
        attrs={"shard": shard, "num_shards": num_shards, "dtypes": [t.dtype for t in tensors]})


def write_checkpoint_index(prefix, shard_indexes, name=None):
    """Writes `<prefix>.index` from the shards' parts; returns `prefix` once it is written."""
    return make_tensor("WriteCheckpointIndex", [prefix, *shard_indexes], dtypes.string,
                       name=name or "WriteCheckpointIndex")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes_, name=None):
    """The tensors `tensor_names` of checkpoint `prefix`, one per dtype in `dtypes_`."""
    op = make_op("RestoreV2", [prefix, _strings(tensor_names, "tensor_names"),
                               _strings(shape_and_slices, "shape_and_slices")],
                 list(dtypes_), name=name or "RestoreV2", attrs={"dtypes": list(dtypes_)})
    return op.outputs
