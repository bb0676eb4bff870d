"""Finding checkpoints: the "checkpoint" state file of a directory, and which prefixes
name whole checkpoints (docs/checkpoints.md).

A checkpoint `<prefix>` is whole when `<prefix>.index` and every data file it names by
its count (`<prefix>.data-0000K-of-0000N`, K < N) exist. Savers write the index last
and the state file after it, so a save cut short leaves no index and is never picked.
"""

import contextlib
import glob
import logging
import os
import re

from google.protobuf import text_format

from dtfnb.base.atomic_file import write_atomically
from dtfnb.protos import checkpoint_pb2

CheckpointState = checkpoint_pb2.CheckpointState
_DATA_FILE = re.compile(r"\.data-(\d{5})-of-(\d{5})$")
_log = logging.getLogger("dtfnb.train")


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    """`model.ckpt-123` → `model.ckpt-123.meta`."""
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return f"{basename}.{meta_graph_suffix}"


def _data_files(prefix):
    return glob.glob(glob.escape(prefix) + ".data-[0-9][0-9][0-9][0-9][0-9]-of-[0-9]*")


def checkpoint_exists(checkpoint_prefix):
    """True when `checkpoint_prefix` names a whole checkpoint: its index and all its
    data files exist."""
    prefix = os.fspath(checkpoint_prefix)
    if not os.path.isfile(prefix + ".index"):
        return False
    shards = {}
    for path in _data_files(prefix):
        match = _DATA_FILE.search(path)
        if match:
            shards.setdefault(int(match.group(2)), set()).add(int(match.group(1)))
    return any(found == set(range(count)) for count, found in shards.items())


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times (seconds since the epoch) of the checkpoints that exist."""
    return [os.path.getmtime(p + ".index") for p in checkpoint_prefixes
            if checkpoint_exists(p)]


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None,
                      meta_graph_suffix="meta"):
    """Deletes a checkpoint's files: the index first, so what is left is never taken for
    a whole checkpoint."""
    paths = [checkpoint_prefix + ".index", *_data_files(checkpoint_prefix),
             meta_graph_filename(checkpoint_prefix, meta_graph_suffix)]
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def _state_path(save_dir, latest_filename):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False):
    """Writes the state file `<save_dir>/checkpoint` (or `latest_filename`) atomically.

    `all_model_checkpoint_paths` lists the checkpoints still kept, oldest first; the
    newest, `model_checkpoint_path`, is appended when missing.
    """
    path = _state_path(save_dir, latest_filename)
    if os.path.abspath(path) == os.path.abspath(model_checkpoint_path):
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for "
                           "checkpoint state.  Please use a different save path.")
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if save_relative_paths:
        paths = [os.path.relpath(p, save_dir) if os.path.isabs(p) else p for p in paths]
    state = CheckpointState(model_checkpoint_path=paths[-1], all_model_checkpoint_paths=paths,
                            all_model_checkpoint_timestamps=all_model_checkpoint_timestamps or [],
                            last_preserved_timestamp=last_preserved_timestamp or 0.0)
    write_atomically(path, [text_format.MessageToString(state).encode()])


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir`'s state file, or None when there is none.

    Relative paths in it are taken relative to `checkpoint_dir`."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    state = CheckpointState()
    try:
        text_format.Parse(text, state)
    except text_format.ParseError as e:
        _log.warning("%s: %s: %s", type(e).__name__, path, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    for i, p in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            state.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest whole checkpoint the state file lists, or None.

    Where the newest listed one is torn or gone (TensorFlow then gives None), the newest
    whole one before it is returned, so training resumes from the last good state."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    candidates = [state.model_checkpoint_path,
                  *reversed(state.all_model_checkpoint_paths)]
    for prefix in candidates:
        if checkpoint_exists(prefix):
            if prefix != state.model_checkpoint_path:
                _log.warning("Checkpoint %s is incomplete; using %s",
                             state.model_checkpoint_path, prefix)
            return prefix
    _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None
