"""tf.summary.FileWriter and FileWriterCache (TensorFlow 1's): summaries, graphs, run
metadata and session logs as events in a log directory that TensorBoard reads.

One deliberate difference: a graph is written with the device each node was *placed*
on by a session (as far as sessions have placed it), not only the device the user asked
for, so TensorBoard's "colour by device" shows where ops really ran. A graph written
before its session placed it is written again, with the placement, at the writer's next
flush (`flush()`, `close()`, or every `flush_secs`); TensorBoard shows a run's newest graph.
"""

import logging
import threading
import time
import warnings

from dtfnb.framework.graph import Graph, get_default_graph
from dtfnb.protos import checkpoint_pb2, config_pb2, event_pb2, graph_pb2, summary_pb2
from dtfnb.summary.event_file import EventFileWriter

log = logging.getLogger("tensorflow")  # tf.logging's logger, as TensorFlow warns on


class FileWriter:
    """Writes `Summary` protos and other events to an event file in `logdir`.

    ```python
    loss_summary = tf.summary.scalar("loss", loss)
    writer = tf.summary.FileWriter("logs/run1", sess.graph)
    for step in range(100):
        _, summary = sess.run([train_op, loss_summary])
        writer.add_summary(summary, step)
    writer.close()        # then: tensorboard --logdir logs
    ```

    Events are written by a thread and become visible at most `flush_secs` later, or at
    `flush()`/`close()`. `max_queue` events may wait before an add waits for the thread.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise ValueError(
                "FileWriter(session=...) shares a summary-writer resource of TensorFlow 2's "
                "summary ops, which dtfnb does not have; give no session: the writer "
                "writes from this process")
        self._graph = None        # the Graph whose placement may still grow
        self._graph_step = None
        self._graph_written = None  # its placement count when last written
        self._lock = threading.Lock()
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix,
                                            before_flush=self._placed_graph)
        self._closed = False
        self._run_metadata_tags = set()
        self._seen_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            given = graph if graph is not None else graph_def
            self.add_meta_graph(checkpoint_pb2.MetaGraphDef(  # as TensorFlow's, beside it
                graph_def=given.as_graph_def(add_shapes=True) if isinstance(given, Graph)
                else given))

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def get_logdir(self):
        """The directory the event files are written in."""
        return self.event_writer.get_logdir()

    def add_summary(self, summary, global_step=None):
        """Adds a `Summary` (a proto, or the serialized bytes a summary op returns) at
        `global_step`. A tag's plugin metadata is written with its first value only."""
        if isinstance(summary, bytes):
            summary = summary_pb2.Summary.FromString(summary)
        elif not isinstance(summary, summary_pb2.Summary):
            summary = summary_pb2.Summary.FromString(summary.SerializeToString())
        else:
            summary = _copy(summary)
        for value in summary.value:
            if value.HasField("metadata"):
                if value.tag in self._seen_tags:
                    value.ClearField("metadata")
                else:
                    self._seen_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Adds a `SessionLog` (START, STOP or CHECKPOINT) at `global_step`."""
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds a `Graph` (such as `sess.graph`), each node with the device a session
        placed it on where one has; a `GraphDef` (deprecated) is written as it is."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if not isinstance(graph, Graph) and isinstance(graph_def, Graph):
            log.warning("When passing a `Graph` object, please use the `graph` named argument "
                    "instead of `graph_def`.")
            graph, graph_def = graph_def, None
        if isinstance(graph, Graph):
            self._warn_if_closed()
            with self._lock:
                self._graph, self._graph_step = graph, global_step
                self._graph_written = None
            # Made when written, so that no graph placed earlier comes after it.
            self.event_writer.add_event(self._placed_graph)
            return
        given = graph if graph is not None else graph_def
        if not isinstance(given, graph_pb2.GraphDef):
            raise TypeError("The passed graph must be an instance of `Graph` or the "
                            "deprecated `GraphDef`")
        log.warning("Passing a `GraphDef` to the SummaryWriter is deprecated. Pass a `Graph` "
                "object instead, such as `sess.graph`.")
        self._add_event(event_pb2.Event(graph_def=_readable(given).SerializeToString()),
                        global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Adds a `MetaGraphDef` (as `tf.train.export_meta_graph` returns)."""
        if not isinstance(meta_graph_def, checkpoint_pb2.MetaGraphDef):
            raise TypeError("meta_graph_def must be type MetaGraphDef, saw type: "
                            f"{type(meta_graph_def)}")
        meta_graph_def = _copy(meta_graph_def)
        meta_graph_def.graph_def.CopyFrom(_readable(meta_graph_def.graph_def))
        self._add_event(event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()),
                        global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Adds the `RunMetadata` of one `sess.run` (its step stats: TensorBoard's
        compute-time and memory colouring) under `tag`, which must be new."""
        if tag in self._run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._run_metadata_tags.add(tag)
        if not isinstance(run_metadata, config_pb2.RunMetadata):
            run_metadata = config_pb2.RunMetadata.FromString(run_metadata.SerializeToString())
        tagged = event_pb2.TaggedRunMetadata(
            tag=tag, run_metadata=_readable_run_metadata(run_metadata).SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event):
        """Adds an `Event` proto as it is."""
        self._warn_if_closed()
        self.event_writer.add_event(event)

    def flush(self):
        """Writes every event added so far to the file, visible to TensorBoard."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self):
        """Flushes, then closes the event file; `reopen()` starts a new one."""
        self.event_writer.close()
        self._closed = True

    def reopen(self):
        """After `close()`, starts a new event file in the same directory."""
        self.event_writer.reopen()
        self._closed = False

    def _add_event(self, event, step):
        self._warn_if_closed()
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def _warn_if_closed(self):
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                          "noop unless the FileWriter is explicitly reopened.", stacklevel=3)

    def _placed_graph(self):
        """The graph to write: after `add_graph`, and again where sessions placed more
        of it since it was written (the writer's thread asks before each flush)."""
        with self._lock:
            graph = self._graph
            if graph is None or graph._placed_updates == self._graph_written:
                return []
            self._graph_written = graph._placed_updates
            step = self._graph_step
        event = _graph_event(graph)
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        return [event]


class FileWriterCache:
    """One FileWriter per log directory, shared by whoever asks for it (the summary
    hooks, Supervisor)."""

    _cache = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir):
        """The FileWriter of `logdir`, made (with the default graph) on first use."""
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return FileWriterCache._cache[logdir]

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}


def _graph_event(graph):
    """`graph` as a graph event: its GraphDef with shapes, each node on the device a
    session placed it on, else on the device it asked for."""
    graph_def = _readable(graph.as_graph_def(add_shapes=True))
    placed = dict(graph._placed_devices)
    for node in graph_def.node:
        node.device = placed.get(node.name, node.device)
    return event_pb2.Event(graph_def=graph_def.SerializeToString())


def _readable(graph_def):
    """`graph_def` as TensorBoard can parse it: dtfnb's function library (traced
    tf.data functions) is its own format, not TensorFlow's FunctionDefLibrary."""
    if not graph_def.library:
        return graph_def
    graph_def = _copy(graph_def)
    graph_def.ClearField("library")
    return graph_def


def _readable_run_metadata(run_metadata):
    if not any(graph.library for graph in run_metadata.partition_graphs):
        return run_metadata
    run_metadata = _copy(run_metadata)
    for graph in run_metadata.partition_graphs:
        graph.ClearField("library")
    return run_metadata


def _copy(message):
    copied = type(message)()
    copied.CopyFrom(message)
    return copied
