"""tf.train.MonitoredSession and MonitoredTrainingSession: a session that initialises or
restores itself, runs hooks around every `run`, runs the queue runners, and recovers.

A MonitoredSession is a stack of wrappers, each with one job, as in TensorFlow:

    _RecoverableSession    on AbortedError/UnavailableError: close, create anew, retry
      _CoordinatedSession  a Coordinator, the queue-runner threads, errors from them
        _HookedSession     hooks' before_run/after_run around each run
          Session          created by a ChiefSessionCreator or WorkerSessionCreator

The chief's creator restores the latest checkpoint of `checkpoint_dir` or runs the
scaffold's init op; other workers wait until the chief has done so. So when a ps
task restarts empty, or the task serving the session restarts, the next `run` comes
back on a new session from the last checkpoint (chief) or once the chief has
(worker).

    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task == 0,
                                           checkpoint_dir="/tmp/ckpt",
                                           hooks=[tf.train.StopAtStepHook(1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
"""

import logging
import time

from dtfnb.base import errors
from dtfnb.framework.graph import get_default_graph
from dtfnb.framework.graph_keys import GraphKeys
from dtfnb.ops import summary_ops, variables
from dtfnb.ops.control_flow_ops import group
from dtfnb.ops.variables import report_uninitialized_variables
from dtfnb.protos import config_pb2
from dtfnb.train import basic_session_run_hooks
from dtfnb.train.coordinator import Coordinator
from dtfnb.train.queue_runner import start_queue_runners
from dtfnb.train.saver import Saver
from dtfnb.train.session_manager import SessionManager, close_quietly
from dtfnb.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

log = logging.getLogger("dtfnb.train")

# The errors of a restarted or unreachable task: the session is recreated, not failed.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

# A failed attempt to create a session returns at once (TensorFlow's blocks in C++ while
# a task is down): pause between attempts rather than spin.
_RECREATE_WAIT_SECS = 0.5

# "Not given": MonitoredTrainingSession then picks TensorFlow's default.
USE_DEFAULT = object()


class Scaffold:
    """The ops and saver a MonitoredSession needs; `finalize()` fills in the missing ones
    (from the graph's collections, else TensorFlow's defaults) and finalizes the graph.

    Defaults: init_op = global_variables_initializer(); ready_op = the uninitialized
    global and local variables; ready_for_local_init_op = the uninitialized global
    variables; local_init_op = local_variables_initializer() and the table
    initializers; summary_op = tf.summary.merge_all() (None without summaries);
    saver = the one in SAVERS, else a new sharded Saver.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            # Arguments given here win over the copied scaffold's.
            copied = copy_from_scaffold
            init_op = _given_or(init_op, copied.init_op)
            init_feed_dict = _given_or(init_feed_dict, copied.init_feed_dict)
            init_fn = _given_or(init_fn, copied._user_init_fn)
            ready_op = _given_or(ready_op, copied.ready_op)
            ready_for_local_init_op = _given_or(ready_for_local_init_op,
                                                copied.ready_for_local_init_op)
            local_init_op = _given_or(local_init_op, copied.local_init_op)
            local_init_feed_dict = _given_or(local_init_feed_dict,
                                             copied.local_init_feed_dict)
            summary_op = _given_or(summary_op, copied.summary_op)
            saver = _given_or(saver, copied.saver)
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the ops not given, then finalizes the default graph."""
        graph = get_default_graph()
        if graph.finalized:
            return self
        with graph.as_default():
            if self._init_op is None:
                self._init_op = Scaffold.get_or_default(
                    "init_op", GraphKeys.INIT_OP, variables.global_variables_initializer)
            if self._ready_op is None:
                self._ready_op = Scaffold.get_or_default(
                    "ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
            if self._ready_for_local_init_op is None:
                self._ready_for_local_init_op = Scaffold.get_or_default(
                    "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                    lambda: report_uninitialized_variables(variables.global_variables()))
            if self._local_init_op is None:
                self._local_init_op = Scaffold.get_or_default(
                    "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
            if self._summary_op is None:
                self._summary_op = Scaffold.get_or_default(
                    "summary_op", GraphKeys.SUMMARY_OP, summary_ops.merge_all)
            if self._saver is None:
                self._saver = _saver_or_default(graph)
        graph.finalize()
        log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        """A function `init_fn(scaffold, session)` run after `init_op`, or None."""
        return self._init_fn

    @property
    def init_op(self):
        """The op that initializes the model (run by the chief when nothing is restored)."""
        return self._init_op

    @property
    def ready_op(self):
        """An op reporting the uninitialized variables: an empty result means ready."""
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        """An op reporting what must be initialized before `local_init_op` may run."""
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        """The op that initializes local variables and tables, on every worker."""
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        """The feed dict for `local_init_op`, or None."""
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        """The op that merges the graph's summaries, or None."""
        return self._summary_op

    @property
    def saver(self):
        """The Saver that restores and saves checkpoints."""
        return self._saver

    @property
    def init_feed_dict(self):
        """The feed dict for `init_op`, or None."""
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one op in `collection_key`, else `default_constructor()` (then added to it)."""
        graph = get_default_graph()
        found = graph.get_collection(collection_key)
        if len(found) > 1:
            raise RuntimeError(f"More than one item in the collection \"{collection_key}\". "
                               f"Please indicate which one to use by passing it to the "
                               f"tf.Scaffold constructor as:  tf.Scaffold({arg_name}=item to "
                               "use)")
        if found:
            return found[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initialises the local variables and the tables."""
        return group(variables.local_variables_initializer(),
                     *get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS))


def _given_or(given, default):
    # Not `given or default`: that would ask a Tensor for its truth value.
    return given if given is not None else default


def _saver_or_default(graph):
    savers = graph.get_collection(GraphKeys.SAVERS)
    if len(savers) > 1:
        raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                           "indicate which one to use by passing it to the constructor.")
    if savers:
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    if saver not in graph.get_collection(GraphKeys.SAVERS):  # a non-empty one adds itself
        graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


class SessionCreator:
    """Creates a tf.Session for a MonitoredSession."""

    def create_session(self):
        """Returns a new tf.Session; subclasses say how."""
        raise NotImplementedError("create_session is not implemented for "
                                  f"{type(self).__name__}.")


class _ScaffoldSessionCreator(SessionCreator):
    """What the chief's and the other workers' creators share: a Scaffold, finalized
    when the first session is created, and the SessionManager made from it."""

    def __init__(self, scaffold, master, config):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = _session_manager(self._scaffold)
        return self._session_manager


class ChiefSessionCreator(_ScaffoldSessionCreator):
    """The chief's sessions: restored from the latest checkpoint, else initialised."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        super().__init__(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        """A session restored from the latest checkpoint, else initialized."""
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(_ScaffoldSessionCreator):
    """Other workers' sessions: wait (up to `max_wait_secs`) until the chief initialised."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config)
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        """A session once the chief has initialized the model (up to `max_wait_secs`)."""
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


def _session_manager(scaffold):
    return SessionManager(local_init_op=scaffold.local_init_op,
                          local_init_feed_dict=scaffold.local_init_feed_dict,
                          ready_op=scaffold.ready_op,
                          ready_for_local_init_op=scaffold.ready_for_local_init_op,
                          graph=get_default_graph())


class _MonitoredSession:
    """What MonitoredSession and SingularMonitoredSession share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs)
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        return None if self._tf_sess() is None else self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` as `tf.Session.run` does, with every hook around it."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def should_stop(self):
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        # An exhausted input is the normal end of training, not an error.
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    def _close_internal(self, exception_type=None):
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    # Give the graph back as the caller had it, so it can grow again.
                    self._graph._finalized = False

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session with hooks, queue runners and recovery from preempted tasks.

    Created: hooks' `begin()`, the scaffold is finalized, a session is created by
    `session_creator` (default ChiefSessionCreator), queue runners start, hooks'
    `after_create_session()`. Each `run`: hooks' `before_run`, the run with their
    fetches and feeds added, hooks' `after_run`; on AbortedError or UnavailableError
    the session is recreated and the run retried. Closed: hooks' `end()` (not on
    error), the coordinator's threads are stopped and joined, the session closed.

    ```python
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.assign_add(global_step, 1)
    hooks = [tf.train.StopAtStepHook(last_step=100)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    ```

    `tf.train.MonitoredTrainingSession(master, is_chief, checkpoint_dir, hooks=...)`
    builds one for a task of a cluster, with checkpoint and summary hooks.
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief's MonitoredSession without recovery; `raw_session()` is its tf.Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The tf.Session underneath, without hooks."""
        return self._tf_sess()


def _every(steps, secs, default):
    """A periodic hook's (steps, secs): `default` when neither was given, else what was
    given, the other one None."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default
    return (None if steps is USE_DEFAULT else steps, None if secs is USE_DEFAULT else secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession for distributed training, set up as TensorFlow sets it up.

    The chief (`is_chief=True`) restores from `checkpoint_dir` or initialises the
    model, and also runs `chief_only_hooks` and, when it has a directory to write to:
    into `summary_dir` (default `checkpoint_dir`) a StepCounterHook every
    `log_step_count_steps` steps and a SummarySaverHook of the scaffold's summary op
    (default `tf.summary.merge_all()`) every `save_summaries_steps` (default 100) or
    `save_summaries_secs`; into `checkpoint_dir` a CheckpointSaverHook (every 600 s by
    default, or every `save_checkpoint_steps`), which writes the graph. Other workers
    wait up to `max_wait_secs` for the chief, and run only `hooks`: a worker that should
    write summaries too adds its own SummarySaverHook, into a directory of its own.
    """
    save_summaries_steps, save_summaries_secs = _every(
        save_summaries_steps, save_summaries_secs, default=(100, None))
    save_checkpoint_steps, save_checkpoint_secs = _every(
        save_checkpoint_steps, save_checkpoint_secs, default=(None, 600))
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(basic_session_run_hooks.StepCounterHook(
                output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if _positive(save_summaries_steps) or _positive(save_summaries_secs):
            all_hooks.append(basic_session_run_hooks.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and (_positive(save_checkpoint_secs) or _positive(save_checkpoint_steps)):
        all_hooks.append(basic_session_run_hooks.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold, save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)


def _positive(every):
    return every is not None and every > 0


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the session, starts a Coordinator and the queue runners, tells the hooks."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        # Keeps every error, OutOfRangeError too, for the caller to see.
        self.coord = Coordinator(clean_stop_exception_types=[])
        try:
            start_queue_runners(sess=self.tf_sess, coord=self.coord)
            for hook in self._hooks:
                hook.after_create_session(self.tf_sess, self.coord)
        except BaseException:
            # A recovery may try again: leave no threads or session of this try behind.
            self.coord.request_stop()
            close_quietly(self.tf_sess)
            raise
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _WrappedSession:
    """Passes calls to the session it wraps; `should_stop()` asks every layer."""

    def __init__(self, sess):
        self._sess = sess

    @property
    def graph(self):
        return self._sess.graph

    def should_stop(self):
        if self._check_stop():
            return True
        if self._sess:  # a plain tf.Session at the bottom never asks to stop
            return isinstance(self._sess, _WrappedSession) and self._sess.should_stop()
        return True

    def _check_stop(self):
        return False

    def close(self):
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as err:
                log.error("An error occurred when attempting to close the session. This may "
                          "be due to a preemption in a connected worker or parameter server. "
                          "Error: %s", err)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)


class _RecoverableSession(_WrappedSession):
    """Recreates the session when a task is preempted or restarted, and retries the run."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as err:
                log.info("An error was raised while a session was being created. This may be "
                         "due to a preemption of a connected worker or parameter server. A new "
                         "session will be created. Error: %s", err)
                time.sleep(_RECREATE_WAIT_SECS)

    def _check_stop(self):
        try:
            return self._sess._check_stop() if self._sess else True
        except _PREEMPTION_ERRORS as err:
            log.info("An error was raised while considering whether the session is complete. "
                     "This may be due to a preemption in a connected worker or parameter "
                     "server. The current session will be closed and a new session will be "
                     "created. Error: %s", err)
            self.close()
            self._sess = self._create_session()
            return False
        except Exception:  # the coordinator's error: stop, and let close() raise it
            return True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as err:
                log.info("An error was raised. This may be due to a preemption in a connected "
                         "worker or parameter server. The current session will be closed and "
                         "a new session will be created. Error: %s", err)
                self.close()
                self._sess = None


class _CoordinatedSession(_WrappedSession):
    """Stops when the coordinator does; on close, stops and joins its threads."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception as err:  # closing cancels what the threads were blocked on
                log.debug("Ignored error closing the session: %s", err)

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception as err:
            # A preemption that a queue-runner thread saw first is the root cause.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS as cause:
                raise cause from err
            except Exception:  # a thread's other error: the run's own says more
                pass
            raise


class _HookedSession(_WrappedSession):
    """Calls the hooks around each run, merging their fetches, feeds and options in."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        options = options or config_pb2.RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or config_pb2.RunMetadata()
        outputs = super().run(actual_fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(
                results=outputs.get(hook), options=options, run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        return {**user_feed_dict, **hook_feeds}


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(map(str, common))}")


def _merge_run_options(options, incoming):
    """The strictest of both: the higher trace level, the longer timeout."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.output_partition_graphs |= incoming.output_partition_graphs
