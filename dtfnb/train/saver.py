"""tf.train.Saver: checkpoints as ops in the graph, as TensorFlow 1 builds them.

A Saver adds, under the name scope `save`, a filename tensor (`save/Const:0`), one
SaveShard and one RestoreV2 per device holding variables (when `sharded`; otherwise one
of each), a WriteCheckpointIndex that completes a save, and `save/restore_all`. Saving
feeds the filename and runs the index op, so the bytes are written by the tasks that
hold the variables; the client then records the checkpoint in the directory's
"checkpoint" state file. docs/checkpoints.md describes the files.
"""

import contextlib
import numbers
import os
import time

from google.protobuf import message, text_format

from dtfnb.base import errors
from dtfnb.base.atomic_file import write_atomically
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.framework.importer import import_graph_def
from dtfnb.ops import checkpoint_ops, state_ops
from dtfnb.ops.constant_op import constant
from dtfnb.ops.control_flow_ops import group
from dtfnb.ops.variables import PartitionedVariable
from dtfnb.protos import checkpoint_pb2
from dtfnb.train import checkpoint_management
from dtfnb.train.training_util import global_step as global_step_value


class Saver:
    """Saves and restores variables.

    ```python
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(init)
        for step in range(1000):
            sess.run(train_op)
            if step % 100 == 0:
                saver.save(sess, "/tmp/run/model.ckpt", global_step=step)
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint("/tmp/run"))
    ```

    Args:
      var_list: the variables to save: a list (each saved under its op name; a
        partitioned variable, or its parts, under the full variable's name, as slices)
        or a dict name -> variable, PartitionedVariable or list of its parts. Default:
        every global variable (and saveable object).
      max_to_keep: how many recent checkpoints to keep; older ones are deleted. None or
        0 keeps all (and lists only the newest in the state file).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      sharded: one data file per device, written by the task holding its variables.
      name: the name scope of the saver's ops (default "save").
      restore_sequentially, reshape, builder, write_version: accepted for TensorFlow's
        signature and unused (shards restore in parallel; there is one format).
      saver_def: a SaverDef to drive existing ops by name (import_meta_graph uses it).
      defer_build: build the ops only when `build()` is called.
      allow_empty: with no variables, do nothing instead of raising ValueError.
      save_relative_paths: write paths relative to the directory into the state file.
      pad_step_number: zero-pad the global step in file names to 8 digits.
      filename: the default value of the filename tensor.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None,
                 restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=None, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._saver_def = saver_def
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._is_built = False
        self._is_empty = False
        self._last_checkpoints = []  # [(prefix, time)], oldest first
        self._checkpoints_to_be_deleted = []
        if saver_def is not None:
            self._max_to_keep = saver_def.max_to_keep
            self._sharded = saver_def.sharded
            self._keep_checkpoint_every_n_hours = saver_def.keep_checkpoint_every_n_hours
        self._next_checkpoint_time = time.time() + self._keep_checkpoint_every_n_hours * 3600
        if not defer_build:
            self.build()

    # -- building -----------------------------------------------------------------

    def build(self):
        """Builds the save and restore ops (once; what the constructor does unless `defer_build`).
        """
        if self._is_built:
            return
        self._is_built = True
        if self._saver_def is not None:
            return
        saveables = _saveables(self._var_list)
        if not saveables:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        graph = saveables[0][2].graph
        with graph.name_scope(self._name or "save"):
            # Fed with the path on every save and restore (TensorFlow 1's `save/Const:0`).
            filename = constant(self._filename or "model", name="Const")
            shards = _by_device(saveables) if self._sharded else [(None, saveables)]
            parts, restores = [], []
            for i, (device, shard) in enumerate(shards):
                names, specs, variables = zip(*shard)
                with _on(graph, device):
                    parts.append(checkpoint_ops.save_shard(
                        filename, names, specs, [v.value() for v in variables], i,
                        len(shards)))
                    restores.append(_restore_shard(filename, shard))
            with _on(graph, shards[0][0]):
                save = checkpoint_ops.write_checkpoint_index(filename, parts)
            restore_all = group(*restores, name="restore_all")
        self._saver_def = checkpoint_pb2.SaverDef(
            filename_tensor_name=filename.name, save_tensor_name=save.name,
            restore_op_name=restore_all.name, max_to_keep=self._max_to_keep or 0,
            sharded=self._sharded,
            keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours)
        graph.add_to_collection(GraphKeys.SAVERS, self)

    def as_saver_def(self):
        """The SaverDef naming this saver's filename tensor, save tensor and restore op."""
        return self._saver_def

    @property
    def saver_def(self):
        """Generates a `SaverDef` representation of this saver."""
        return self._saver_def

    # -- saving -------------------------------------------------------------------

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True):
        """Saves the variables to checkpoint `save_path` (with `-<global_step>` appended);
        returns the checkpoint's prefix.

        The save ops write the data files and then the index; only then is the prefix
        added to the state file `latest_filename` ("checkpoint") of its directory, and
        checkpoints beyond `max_to_keep` deleted.
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if self._is_empty:
            return None
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Integral):
                global_step = global_step_value(sess, global_step)
            step = f"{int(global_step):08d}" if self._pad_step_number else str(int(global_step))
            checkpoint_file = f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': "
                                 f"'{latest_filename}' and '{save_path}'")
        save_dir = os.path.dirname(save_path)
        if not os.path.isdir(save_dir or "."):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        prefix = sess.run(self._saver_def.save_tensor_name,
                          {self._saver_def.filename_tensor_name: checkpoint_file})
        prefix = prefix.decode() if isinstance(prefix, bytes) else str(prefix)
        if write_meta_graph:
            export_meta_graph(checkpoint_management.meta_graph_filename(
                checkpoint_file, meta_graph_suffix), graph=sess.graph, saver_def=self._saver_def)
        if write_state:
            self._record_last_checkpoint(prefix)
            checkpoint_management.update_checkpoint_state(
                save_dir, prefix, self.last_checkpoints, latest_filename,
                save_relative_paths=self._save_relative_paths)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return prefix

    def _record_last_checkpoint(self, prefix):
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix="meta"):
        """Deletes the checkpoint that fell off the list, unless it is the first one made
        after another `keep_checkpoint_every_n_hours` went by."""
        while self._checkpoints_to_be_deleted:
            prefix, saved_at = self._checkpoints_to_be_deleted.pop(0)
            if saved_at > self._next_checkpoint_time:
                self._next_checkpoint_time += self._keep_checkpoint_every_n_hours * 3600
                continue
            checkpoint_management.remove_checkpoint(prefix, meta_graph_suffix=meta_graph_suffix)

    @property
    def last_checkpoints(self):
        """The prefixes of the checkpoints this saver still keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """DEPRECATED in TensorFlow: sets the list of old checkpoint filenames, kept forever."""
        # An infinite time: these are kept however old (TensorFlow does the same).
        self._last_checkpoints = [(p, float("inf")) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        """Takes over `[(prefix, timestamp)]`, oldest first, as the checkpoints kept."""
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over the checkpoints among `checkpoint_paths` that exist (say, from
        `get_checkpoint_state(dir).all_model_checkpoint_paths` after a restart), so
        max_to_keep counts them."""
        paths = [p for p in checkpoint_paths if checkpoint_management.checkpoint_exists(p)]
        self.set_last_checkpoints_with_time(
            list(zip(paths, checkpoint_management.get_checkpoint_mtimes(paths))))

    # -- restoring ----------------------------------------------------------------

    def restore(self, sess, save_path):
        """Restores the saved variables from checkpoint `save_path` (a prefix).

        Raises:
          ValueError: `save_path` is None or names no whole checkpoint.
          NotFoundError: a variable is not in the checkpoint.
          DataLossError: a file of the checkpoint is truncated or corrupt.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_management.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        try:
            sess.run(self._saver_def.restore_op_name,
                     {self._saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            raise _restore_error(err, "a Variable name or other graph key that is missing "
                                 "from the checkpoint") from None
        except errors.InvalidArgumentError as err:
            raise _restore_error(err, "a mismatch between the current graph and the graph "
                                 "from the checkpoint") from None

    def export_meta_graph(self, filename=None, *, as_text=False, clear_devices=False):
        """The MetaGraphDef of the default graph and this saver (see export_meta_graph)."""
        return export_meta_graph(filename, saver_def=self._saver_def,
                                 clear_devices=clear_devices, as_text=as_text)


def _restore_error(err, likely_cause):
    """`err` with TensorFlow's hint of what is most likely wrong in front of its message."""
    return type(err)(err.node_def, err.op, (
        f"Restoring from checkpoint failed. This is most likely due to {likely_cause}. Please "
        "ensure that you have not altered the graph expected based on the checkpoint. "
        f"Original error:\n\n{err.message}"))


def _saveables(var_list):
    """[(checkpoint name, slice spec, Variable)] from a list, a dict or the defaults.

    As in TensorFlow, a list names each variable by its op name, but the parts of a
    partitioned variable (the PartitionedVariable, or parts found on their own) by the
    full variable's name, each part a slice of it; a dict's value may be a variable, a
    PartitionedVariable or a list of parts.
    """
    if var_list is None:
        graph = get_default_graph()
        var_list = (graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                    + graph.get_collection(GraphKeys.SAVEABLE_OBJECTS))
    if isinstance(var_list, dict):
        named = var_list
    else:
        named = {}
        for var in var_list:
            if isinstance(var, PartitionedVariable):
                if var.name in named:
                    raise ValueError(f"At least two variables have the same name: {var.name}")
                named[var.name] = var
            elif getattr(var, "_save_slice_info", None) is not None:
                name = var._save_slice_info.full_name
                if not isinstance(named.setdefault(name, []), list):
                    raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
                named[name].append(var)
            else:
                if not hasattr(var, "_variable"):
                    raise TypeError(f"Variable to save is not a Variable: {var}")
                if var.op.name in named:
                    raise ValueError(f"At least two variables have the same name: {var.op.name}")
                named[var.op.name] = var
    saveables = []
    for name, value in named.items():
        if isinstance(value, (PartitionedVariable, list, tuple)):
            parts = list(value)
            saveables += [(name, spec, part) for spec, part in zip(_slice_specs(parts), parts)]
        elif hasattr(value, "_variable"):
            saveables.append((name, "", value))
        else:
            raise TypeError(f"Variable to save is not a Variable: {value}")
    return saveables


def _slice_specs(parts):
    """Each part's slice spec; the parts must all be slices of one variable."""
    infos = [getattr(part, "_save_slice_info", None) for part in parts]
    for part, info in zip(parts, infos):
        if info is None:
            raise ValueError(f"Slices must all be slices: {part}")
        if info.full_name != infos[0].full_name:
            raise ValueError(f"Slices must all be from the same tensor: "
                             f"{infos[0].full_name} != {info.full_name}")
    return [info.spec for info in infos]


def _by_device(saveables):
    """[(device, [saveable])]: one shard per device holding variables (a partitioned
    variable's parts in the shards of their devices), in first-seen order; its ops go
    to CPU:0 of that device's task (save kernels run on CPU)."""
    shards = {}
    for saveable in saveables:
        device = DeviceSpec.from_string(saveable[2].device).to_string()  # "/cpu:0" is CPU:0
        shards.setdefault(device, []).append(saveable)
    return [(_cpu0(device), shard) for device, shard in shards.items()]


def _cpu0(device):
    spec = DeviceSpec.from_string(device)
    spec.device_type, spec.device_index = "CPU", 0
    return spec.to_string()


@contextlib.contextmanager
def _on(graph, device):
    """The device block of one shard: exactly `device` (outer blocks and device functions
    ignored), or the surrounding blocks for an unsharded saver (device None)."""
    if device is None:
        yield
        return
    with graph.device(None), graph.device(device):
        yield


def _restore_shard(filename, shard):
    names, specs, variables = zip(*shard)
    tensors = checkpoint_ops.restore_v2(filename, names, specs,
                                        [v.dtype.base_dtype for v in variables])
    return group(*[state_ops.assign(v, t, validate_shape=v.shape.is_fully_defined())
                   for v, t in zip(variables, tensors)], name="restore_shard")


# -- meta graphs ----------------------------------------------------------------------

def export_meta_graph(filename=None, *, graph=None, saver_def=None, clear_devices=False,
                      as_text=False):
    """A MetaGraphDef of `graph` (default: the default graph) and `saver_def`, written
    atomically to `filename` when given. Collections are not exported."""
    graph = graph or get_default_graph()
    graph_def = graph.as_graph_def()
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    meta = checkpoint_pb2.MetaGraphDef(graph_def=graph_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    if filename:
        data = (text_format.MessageToString(meta).encode() if as_text
                else meta.SerializeToString(deterministic=True))
        write_atomically(filename, [data])
    return meta


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None):
    """Imports a `.meta` file's graph into the default graph; returns a Saver driving its
    save and restore ops (None when it has no saver)."""
    meta = meta_graph_or_file
    if not isinstance(meta, checkpoint_pb2.MetaGraphDef):
        path = os.fspath(meta_graph_or_file)
        meta = checkpoint_pb2.MetaGraphDef()
        with open(path, "rb") as f:
            data = f.read()
        try:
            meta.ParseFromString(data)
        except message.DecodeError:  # written with as_text=True
            text_format.Parse(data.decode(), meta)
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def)()
        graph_def.CopyFrom(meta.graph_def)
        for node in graph_def.node:
            node.device = ""
    import_graph_def(graph_def, name=import_scope or "")
    if not meta.HasField("saver_def"):
        return None
    saver_def = checkpoint_pb2.SaverDef()
    saver_def.CopyFrom(meta.saver_def)
    if import_scope:
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(saver_def, field, f"{import_scope}/{getattr(saver_def, field)}")
    return Saver(saver_def=saver_def)
