"""tf.train.SessionManager: sessions that start from a checkpoint, an init op, or a chief.

The chief restores the latest checkpoint (or runs the init op) and then the local
init op; other workers poll the `ready_op` (the names of uninitialized variables)
until the chief has done so. Readiness is a graph like any other: the model is
ready when `ready_op` returns an empty list.

    sm = tf.train.SessionManager()
    sess = sm.prepare_session(target, init_op=init, saver=saver, checkpoint_dir=dir)
    # on the other workers:
    sess = sm.wait_for_session(target, max_wait_secs=600)
"""

import logging
import math
import time

from dtfnb.base import errors
from dtfnb.client.session import Session
from dtfnb.framework.graph import get_default_graph
from dtfnb.train import checkpoint_management

log = logging.getLogger("dtfnb.train")


def _maybe_name(obj):
    return getattr(obj, "name", obj)


def _ready(op, sess, msg):
    """(True, None) if `op` reports nothing uninitialized, else (False, why)."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as err:
        if "uninitialized" not in str(err):
            log.warning("%s raised: %s", msg, err)
            raise
        return False, str(err)
    if value is None or value.size == 0:
        return True, None
    names = ", ".join(name.decode("utf-8") for name in value.reshape(-1))
    return False, "Variables not initialized: " + names


class SessionManager:
    """Creates sessions that are initialised, restored, or waited for.

    Args:
      local_init_op: run in every new session once `ready_for_local_init_op` is
        empty (local variables, tables).
      ready_op: a 1-D string tensor, empty when the model is ready.
      ready_for_local_init_op: a 1-D string tensor, empty when `local_init_op` may run.
      graph: the graph of the sessions (default: the default graph).
      recovery_wait_secs: seconds between readiness (and checkpoint) polls.
      local_init_run_options: RunOptions for `local_init_op`.
      local_init_feed_dict: feeds for `local_init_op`.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict

    def _restore_checkpoint(self, master, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs, config):
        """(session, restored): a new session, restored from a checkpoint if there is one."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        try:
            if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
                return sess, False
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            path = checkpoint_management.latest_checkpoint(checkpoint_dir)
            deadline = time.monotonic() + max_wait_secs
            while path is None:
                if not wait_for_checkpoint or time.monotonic() >= deadline:
                    return sess, False
                log.info("Waiting for checkpoint to be available.")
                time.sleep(min(self._recovery_wait_secs,
                               max(0.0, deadline - time.monotonic())))
                path = checkpoint_management.latest_checkpoint(checkpoint_dir)
            saver.restore(sess, path)
            # So that max_to_keep counts the checkpoints of earlier runs too.
            state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
            return sess, True
        except BaseException:
            close_quietly(sess)
            raise

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session restored from the latest checkpoint, else initialised by `init_op`
        and/or `init_fn(sess)`; then `local_init_op` runs. The chief's way in.

        Raises RuntimeError if the model is still not ready afterwards.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn "
                                       "or local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            local_init_ok, msg = self._try_run_local_init_op(sess)
            if not local_init_ok:
                raise RuntimeError("Init operations did not make model ready for local_init. "
                                   f" Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                                   f"error: {msg}")
            ready, msg = _ready(self._ready_op, sess, "Model not ready")
            if not ready:
                raise RuntimeError("Init operations did not make model ready.  Init op: "
                                   f"{_maybe_name(init_op)}, init fn: {init_fn}, "
                                   f"local_init_op: {_maybe_name(self._local_init_op)}, "
                                   f"error: {msg}")
        except BaseException:
            close_quietly(sess)
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(session, restored): a session restored from a checkpoint and ready, or a
        session that still needs initialising and False."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        try:
            local_init_ok, msg = self._try_run_local_init_op(sess)
        except BaseException:
            close_quietly(sess)
            raise
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_init_ok:
            log.info("Restoring model from %s did not make model ready for local init: %s",
                     source, msg)
            return sess, False
        ready, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ready:
            log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        log.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=math.inf):
        """A session once the model is ready (another task, the chief, initialises it),
        polling every `recovery_wait_secs`.

        Raises DeadlineExceededError if it is not ready within `max_wait_secs`.
        """
        if max_wait_secs is None:
            max_wait_secs = math.inf
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready_msg = None
            try:
                local_init_ok, not_ready_local_msg = self._try_run_local_init_op(sess)
                if local_init_ok:
                    ready, not_ready_msg = _ready(self._ready_op, sess, "Model not ready")
                    if ready:
                        return sess
            except BaseException:
                close_quietly(sess)
                raise
            close_quietly(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs:g} secs.")
            log.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                     not_ready_local_msg, not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = _ready(self._ready_for_local_init_op, sess,
                            "Model not ready for local init")
        if not ready:
            return False, msg
        log.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        log.info("Done running local_init_op.")
        return True, None


def close_quietly(sess):
    """Closes `sess`, logging (not raising) an error from a master that is gone."""
    try:
        sess.close()
    except errors.OpError as err:
        log.debug("Ignored error closing a session: %s", err)
