"""tf.train.Supervisor, the chapter-era way to train: a SessionManager, a Coordinator and,
on the chief, threads that save a checkpoint every `save_model_secs` and write summaries
every `save_summaries_secs`.

    sv = tf.train.Supervisor(is_chief=task == 0, logdir="/tmp/train", global_step=step)
    with sv.managed_session(server.target) as sess:
        while not sv.should_stop():
            sess.run(train_op)

The chief restores the latest checkpoint of `logdir` or runs `init_op`; the other
workers wait until it has. Only the chief writes events, as in TensorFlow: into a
FileWriter of `logdir` (a new event file per Supervisor) go the graph, a SessionLog
START at the global step it starts from, `summary_op`'s summaries and `global_step/sec`,
a CHECKPOINT per save and a STOP when it stops.
"""

import contextlib
import logging
import os
import time

from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import summary_ops, variables
from dtfnb.ops.control_flow_ops import group
from dtfnb.protos.event_pb2 import SessionLog
from dtfnb.protos.summary_pb2 import Summary
from dtfnb.summary.writer import FileWriter
from dtfnb.train import training_util
from dtfnb.train.coordinator import Coordinator, LooperThread
from dtfnb.train.saver import Saver, export_meta_graph
from dtfnb.train.session_manager import SessionManager, close_quietly

log = logging.getLogger("dtfnb.train")


class Supervisor:
    """Initialises or restores the model, runs the queue runners and saves checkpoints.

    Each op argument left at USE_DEFAULT is taken from its graph collection
    (READY_OP, INIT_OP, LOCAL_INIT_OP, SAVERS, SUMMARY_OP, GLOBAL_STEP ...) or created
    as TensorFlow does (`summary_op`: `tf.summary.merge_all()`); None turns the service
    off. `logdir`, the services and the summary writer are the chief's only. The graph
    is finalized.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._ready_op = self._default(
                ready_op, GraphKeys.READY_OP, variables.report_uninitialized_variables)
            self._ready_for_local_init_op = self._default(
                ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
            self._init_op = self._default(
                init_op, GraphKeys.INIT_OP, variables.global_variables_initializer)
            self._local_init_op = self._default(
                local_init_op, GraphKeys.LOCAL_INIT_OP, lambda: group(
                    variables.local_variables_initializer(),
                    *self._graph.get_collection(GraphKeys.TABLE_INITIALIZERS)))
            self._saver = self._default(saver, GraphKeys.SAVERS, _default_saver)
            self._summary_op = self._default(summary_op, GraphKeys.SUMMARY_OP,
                                             summary_ops.merge_all)
            if global_step is Supervisor.USE_DEFAULT:
                global_step = training_util.get_global_step(self._graph)
            self._global_step = global_step
        self._is_chief = is_chief
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        # What writes checkpoints and events is the chief's alone.
        self._logdir = logdir if is_chief else None
        self._save_path = os.path.join(logdir, checkpoint_basename) if self._logdir else None
        self._save_model_secs = save_model_secs if is_chief else None
        self._save_summaries_secs = save_summaries_secs if is_chief else None
        if not is_chief:
            summary_writer = None
        elif summary_writer is Supervisor.USE_DEFAULT:
            summary_writer = FileWriter(logdir) if logdir else None
        self._summary_writer = summary_writer
        self._graph_added_to_summary = False
        self._stop_grace_secs = stop_grace_secs
        self._coord = Coordinator()
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        self._graph.finalize()

    def _default(self, given, collection_key, make):
        """`given`, else the first op of the collection, else `make()` (then collected)."""
        if given is not Supervisor.USE_DEFAULT:
            return given
        found = self._graph.get_collection(collection_key)
        if found:
            return found[0]
        op = make()
        if op is not None and op not in self._graph.get_collection(collection_key):
            self._graph.add_to_collection(collection_key, op)
        return op

    # -- sessions -------------------------------------------------------------------

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief's session restored or initialised (its graph written and its
        services started), or, on other workers, a session once the chief is done;
        then the queue runners start."""
        if self._coord.joined:
            self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def _write_graph(self):
        # Once per opening of the writer, which writes it again as sessions place it.
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(export_meta_graph(
                graph=self._graph, saver_def=self._saver.saver_def if self._saver else None))
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Writes a SessionLog START at the current global step, then starts the
        threads that write summaries and `global_step/sec` every `save_summaries_secs`
        and save a checkpoint every `save_model_secs` (chief only, with a `logdir`);
        returns the threads started."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            # Without a step, TensorBoard could not tell which events a START supersedes.
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 self._step(sess))
        loops = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                loops.append((self._save_summaries_secs, self._summary_loop))
            if self._global_step is not None:
                loops.append((self._save_summaries_secs, _StepCounter(self, sess).record))
        if self._saver and self._save_model_secs:
            loops.append((self._save_model_secs, self._checkpoint_loop))
        return [LooperThread.loop(self._coord, secs, target, args=(sess,))
                for secs, target in loops]

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the threads of `queue_runners` (default: QUEUE_RUNNERS) under `coord`."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        return [thread for qr in queue_runners
                for thread in qr.create_threads(sess, coord=self._coord, daemon=True,
                                                start=True)]

    def _summary_loop(self, sess):
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        log.info("Recording summary at step %s.", step)
        self._summary_writer.add_summary(summary, step)

    def _checkpoint_loop(self, sess):
        log.info("Saving checkpoint to path %s", self._save_path)
        step = self._step(sess)
        self._saver.save(sess, self._save_path, global_step=step)
        if self._summary_writer and step is not None:
            self._summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)

    def _step(self, sess):
        if self._global_step is None:
            return None
        return training_util.global_step(sess, self._global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A session for a `with` block; on exit the threads are stopped and joined and
        the session closed. An OutOfRangeError from the block ends training cleanly;
        other errors are re-raised after the clean-up."""
        sess = self.prepare_or_wait_for_session(
            master=master, config=config, start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as err:
            self.request_stop(err)
        finally:
            try:
                self.stop()
            finally:
                close_quietly(sess)  # which cancels what threads were blocked on

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Requests a stop and joins the threads; re-raises what a thread failed with.
        Then, with `close_summary_writer`, writes a SessionLog STOP and closes the writer."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            # Last, as the threads write to it; without a step, as the session may be gone.
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        """Request that the coordinator stop the threads (see `Coordinator.request_stop`)."""
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        """Check if the coordinator was told to stop."""
        return self._coord.should_stop()

    def stop_on_exception(self):
        """Context handler to stop the supervisor when an exception is raised."""
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        """Block waiting for the coordinator to stop."""
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes `summary` (a Summary proto or its bytes, as a summary op returns it) at
        `global_step`, by default the current one."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = self._step(sess)
        self._summary_writer.add_summary(summary, global_step)

    # -- what it was built with -----------------------------------------------------

    @property
    def coord(self):
        """Return the Coordinator used by the Supervisor."""
        return self._coord

    @property
    def is_chief(self):
        """Return True if this is a chief supervisor."""
        return self._is_chief

    @property
    def session_manager(self):
        """Return the SessionManager used by the Supervisor."""
        return self._session_manager

    @property
    def init_op(self):
        """Return the Init Op used by the supervisor."""
        return self._init_op

    @property
    def init_feed_dict(self):
        """Return the feed dictionary used when evaluating the `init_op`."""
        return self._init_feed_dict

    @property
    def ready_op(self):
        """Return the Ready Op used by the supervisor."""
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        """Return the op that says when local init may run."""
        return self._ready_for_local_init_op

    @property
    def summary_writer(self):
        """Return the FileWriter used by the chief supervisor, or None."""
        return self._summary_writer

    @property
    def summary_op(self):
        """Return the Summary Tensor used by the chief supervisor."""
        return self._summary_op

    @property
    def save_summaries_secs(self):
        """Return the delay between summary computations."""
        return self._save_summaries_secs

    @property
    def global_step(self):
        """Return the global_step Tensor used by the supervisor."""
        return self._global_step

    @property
    def saver(self):
        """Return the Saver used by the supervisor."""
        return self._saver

    @property
    def save_model_secs(self):
        """Return the delay between checkpoints."""
        return self._save_model_secs

    @property
    def save_path(self):
        """Return the save path used by the supervisor."""
        return self._save_path


class _StepCounter:
    """The `global_step/sec` summary of a Supervisor: the steps since its last record,
    over the seconds since."""

    def __init__(self, sv, sess):
        self._sv = sv
        self._tag = f"{sv.global_step.op.name}/sec"
        self._last_time = time.time()
        self._last_step = sv._step(sess)

    def record(self, sess):
        """Writes the rate since the last call, at the current global step."""
        step, now = self._sv._step(sess), time.time()
        elapsed = now - self._last_time
        steps_per_sec = (step - self._last_step) / elapsed if elapsed > 0 else float("inf")
        self._last_step, self._last_time = step, now
        self._sv.summary_writer.add_summary(
            Summary(value=[Summary.Value(tag=self._tag, simple_value=steps_per_sec)]), step)
        log.info("%s: %g", self._tag, steps_per_sec)


def _default_saver():
    return Saver() if variables.global_variables() else None
