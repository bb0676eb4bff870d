"""The standard SessionRunHooks: stop at a step, save checkpoints and summaries, log
tensors and speed.

As in TensorFlow, hooks log through Python's `logging` (logger "dtfnb.train") and
never print: they may run in any thread. Those that write events (the summaries, the
steps per second, the graph and a SessionLog per checkpoint) share one FileWriter per
directory, `tf.summary.FileWriterCache.get(dir)`.
"""

import logging
import os
import time

import numpy as np

from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.protos.event_pb2 import SessionLog
from dtfnb.protos.summary_pb2 import Summary
from dtfnb.summary.writer import FileWriterCache
from dtfnb.train import training_util
from dtfnb.train.saver import export_meta_graph
from dtfnb.train.session_run_hook import SessionRunArgs, SessionRunHook

log = logging.getLogger("dtfnb.train")

_GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


class NanLossDuringTrainingError(RuntimeError):
    """Raised by NanTensorHook (fail_on_nan_loss=True) when the loss is NaN."""
    def __str__(self):
        return "NaN loss during training."


def _global_step_read(graph=None):
    """A tensor holding a copy of the global step (`global_step/add:0`), made once per graph.

    A copy, not the variable itself, so that what a hook fetches is the value from
    before the run's train op, never a ref that the train op changes under it.
    """
    graph = graph or get_default_graph()
    cached = graph.get_collection(_GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = training_util.get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None), graph.name_scope(step.op.name + "/"):
        read = step + 0
    graph.add_to_collection(_GLOBAL_STEP_READ_KEY, read)
    return read


def _required_global_step_read(hook_name):
    step = _global_step_read()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _as_graph_element(obj):
    """A tensor of the default graph from a tensor or a name ("loss" means "loss:0")."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one)."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        """Forgets the last trigger, so that the next step triggers."""
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """True at the first call, then once the interval has passed (never twice a step)."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the last one, or Nones."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        """The step of the last trigger, or None."""
        return self._last_triggered_step


class _NeverTriggerTimer(SecondOrStepTimer):
    """The timer of a LoggingTensorHook that logs only at the end."""

    def __init__(self):
        super().__init__(every_steps=1)

    def should_trigger_for_step(self, step):
        return False


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or start + `num_steps`)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        """Finds the global step (which the hook requires)."""
        self._global_step_tensor = _required_global_step_read("StopAtStepHook")

    def after_create_session(self, session, coord):
        """Fixes the last step from `num_steps` once the global step is known."""
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        """Asks each run for the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        """Requests a stop once the global step reaches the last step."""
        # The value read may predate this run's increment: check the real one before stopping.
        if run_values.results + 1 >= self._last_step:
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called by CheckpointSaverHook around each save; `after_save` returning True stops."""

    def begin(self):
        """Called once, before the session is created."""

    def before_save(self, session, global_step_value):
        """Called before each checkpoint is saved."""

    def after_save(self, session, global_step_value):
        """Called after each checkpoint is saved; True requests a stop."""

    def end(self, session, global_step_value):
        """Called after the last checkpoint, at the end of the session."""


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when a session is created, every N seconds or steps, and at the end.

    Checkpoints are `<checkpoint_dir>/<checkpoint_basename>-<global step>`, written by
    `saver`, the scaffold's saver, or the one Saver in the SAVERS collection (with a
    `.meta` file each unless `save_graph_def=False`). Into `checkpoint_dir`'s event file
    go the graph and its MetaGraphDef when a session is created, and a SessionLog
    CHECKPOINT at the global step of each save.
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self):
        """Finds the global step and the writer, and tells the listeners the session begins."""
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = _required_global_step_read("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        """Writes the graph, then saves the state the session starts from (initialized
        or restored)."""
        step = int(session.run(self._global_step_tensor))
        # Here, not in begin(): other hooks' begin() may still add to the graph.
        graph = get_default_graph()
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(export_meta_graph(
            graph=graph, saver_def=self._get_saver().saver_def))
        # The state at creation (initialised or just restored) is a checkpoint too.
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        """Asks each run for the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        """Saves a checkpoint when `save_secs` or `save_steps` have passed."""
        if self._timer.should_trigger_for_step(run_values.results + 1):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        """Saves a last checkpoint unless the last step already has one."""
        step = int(session.run(self._global_step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        """Saves; True if a listener asks training to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                log.info("A CheckpointSaverListener requested that training be stopped. "
                         "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver "
                               "to the collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` every N runs or seconds, and/or at the end.

    `tensors` is a list of tensors or names, or a dict from tag to tensor or name.
    Lines read `tag = value, tag = value (0.123 sec)`, or `formatter(values)`.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        """Starts counting iterations afresh."""
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(tensor)
                                 for tag, tensor in self._tensors.items()}

    def before_run(self, run_context):
        """Asks for the tensors on the iterations that log."""
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def after_run(self, run_context, run_values):
        """Logs the tensors' values when this iteration logs."""
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        """Logs the tensors once more at the end, with `at_end`."""
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))

    def _log_tensors(self, values):
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            log.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
        if elapsed_secs is None:
            log.info("%s", stats)
        else:
            log.info("%s (%.3f sec)", stats, elapsed_secs)


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or stops when `loss_tensor` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        """Asks each run for the loss."""
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        """Raises NanLossDuringTrainingError, or requests a stop, if the loss is NaN."""
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                log.error(message)
                raise NanLossDuringTrainingError
            log.warning(message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Writes the summaries of `summary_op` (one op or a list; else the scaffold's)
    every N steps or seconds, at the global step after the run that computed them.

    Writes to `summary_writer`, else to `output_dir`'s FileWriter. After its first run
    it also writes a SessionLog START at the global step: TensorBoard then drops what
    a job before a restart wrote at that step and later (lost since its last checkpoint).
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        """Finds the global step and the writer."""
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _required_global_step_read("SummarySaverHook")

    def before_run(self, run_context):
        """Asks each run for the global step, and for the summaries when they are due."""
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        summary_ops = self._get_summary_op() if self._request_summary else None
        if summary_ops is not None:
            requests["summary"] = summary_ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        """Writes the summaries fetched (and, after the first run, a START)."""
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            # The real value after the train op (other workers may have stepped too).
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        """Flushes the writer, so that TensorBoard sees every summary written."""
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        """The summary ops to fetch, as a list, or None."""
        summary_op = (self._summary_op if self._summary_op is not None
                      else self._scaffold.summary_op)
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


class StepCounterHook(SessionRunHook):
    """Logs `global_step/sec` every N steps or seconds, and writes it as a summary at
    the global step to `summary_writer`, or to `output_dir`'s FileWriter, if given."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir

    def begin(self):
        """Finds the global step and the writer, and names the steps/sec summary after
        the global step."""
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _required_global_step_read("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def after_create_session(self, session, coord):
        """Starts counting afresh (a recreated session too)."""
        # A recreated session starts counting afresh.
        self._last_global_step = None
        self._global_step_check_count = 0
        self._timer.reset()

    def before_run(self, run_context):
        """Asks each run for the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        """Logs (and writes as a summary) the global steps per second, every so often."""
        stale_step = run_values.results
        if self._timer.should_trigger_for_step(stale_step + 1):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
                if elapsed_secs is not None:
                    self._log_and_record(elapsed_steps / elapsed_secs, step)
        if stale_step == self._last_global_step:
            # Some optimizers (SyncReplicasOptimizer on a worker) do not step every run.
            self._global_step_check_count += 1
            if self._global_step_check_count % 20 == 0:
                self._global_step_check_count = 0
                log.warning("It seems that global step (tf.train.get_global_step) has not "
                            "been increased. Current value (could be stable): %s vs previous "
                            "value: %s. You could increase the global step by passing "
                            "tf.train.get_global_step() to Optimizer.apply_gradients or "
                            "Optimizer.minimize.", stale_step, self._last_global_step)
        else:
            self._global_step_check_count = 0
        self._last_global_step = stale_step

    def _log_and_record(self, steps_per_sec, step):
        if self._summary_writer is not None:
            self._summary_writer.add_summary(Summary(value=[Summary.Value(
                tag=self._summary_tag, simple_value=steps_per_sec)]), step)
        log.info("%s: %g", self._summary_tag, steps_per_sec)


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()`'s feed_dict to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        """Feeds what `feed_fn()` returns into each run."""
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        """The values of the final ops, once the session has ended."""
        return self._final_ops_values

    def end(self, session):
        """Runs the final ops, with `final_ops_feed_dict`, and keeps their values."""
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)

