"""tf.train.SessionRunHook: code that MonitoredSession runs around every `run` call."""

from typing import Any, NamedTuple


class SessionRunArgs(NamedTuple):
    """What a hook adds to a run: extra fetches, feeds and RunOptions."""

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook gets back: its own fetches' values, and the run's options and metadata."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class SessionRunContext:
    """The run in progress, as a hook sees it in `before_run` and `after_run`."""

    def __init__(self, original_args, session):
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    def request_stop(self):
        """Ask the MonitoredSession to stop: its `should_stop()` becomes True after this run."""
        self._stop_requested = True

    @property
    def stop_requested(self):
        """Returns whether a stop is requested or not."""
        return self._stop_requested


class SessionRunHook:
    """Base class: every method is a no-op, so a hook overrides only what it needs."""

    def begin(self):
        """Called once before the graph is finalized; a hook may still add ops."""

    def after_create_session(self, session, coord):
        """Called when a session is created or recreated after an error."""

    def before_run(self, run_context):
        """Returns SessionRunArgs to add to the run, or None."""
        return None

    def after_run(self, run_context, run_values):
        """Called with the values of what `before_run` asked for."""

    def end(self, session):
        """Called once when the MonitoredSession closes without error."""
