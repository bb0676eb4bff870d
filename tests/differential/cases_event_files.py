"""tf.summary.FileWriter: which events a script writes, in which order, at which steps,
with which values, read back with tf.train.summary_iterator; the writer's errors.

A graph no session has run is written as TensorFlow writes it; one a session placed is
written with its placed devices (docs/differences.md), which no case here compares.
"""

import os
import shutil
import tempfile

from observe import outcome


def case(fn):
    CASES[fn.__name__] = fn
    return fn


CASES = {}


def _written(tf, write):
    """What `write(logdir)` left in a fresh log directory: per event file, each event's
    kind and step, with a summary's tags and values and a graph's nodes."""
    logdir = tempfile.mkdtemp(prefix="dtfnb-events-")
    try:
        write(logdir)
        files = sorted(name for name in os.listdir(logdir) if "tfevents" in name)
        return [[_event(tf, e) for e in tf.train.summary_iterator(os.path.join(logdir, name))]
                for name in files]
    finally:
        shutil.rmtree(logdir)


def _event(tf, event):
    kind = event.WhichOneof("what")
    seen = {"kind": kind, "step": event.step}
    if kind == "file_version":
        seen["version"] = event.file_version
    elif kind == "summary":
        seen["values"] = [(v.tag, v.simple_value, v.HasField("metadata"))
                          for v in event.summary.value]
    elif kind == "graph_def":
        graph = tf.GraphDef.FromString(event.graph_def)
        seen["nodes"] = [(n.name, n.op, n.device, list(n.input)) for n in graph.node]
    elif kind == "session_log":
        seen["status"] = event.session_log.status
    elif kind == "tagged_run_metadata":
        seen["tag"] = event.tagged_run_metadata.tag
    return seen


@case
def events_of_a_training_script(tf):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [], name="x")
        loss = tf.square(x, name="square")
    summary = tf.summary.scalar("loss", loss)
    graph = tf.get_default_graph()

    def write(logdir):
        writer = tf.summary.FileWriter(logdir, graph)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
        with tf.Session() as sess:
            for step in range(3):
                writer.add_summary(sess.run(summary, {x: step + 0.5}), step)
        writer.add_run_metadata(tf.RunMetadata(), "step2", 2)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), 3)
        writer.flush()
        writer.close()
    # dtfnb writes the graph with its placed devices, again once the session ran it: only
    # the first graph event's nodes are compared, without their devices.
    [events] = _written(tf, write)
    graphs = [e for e in events if e["kind"] == "graph_def"]
    graphs[0]["nodes"] = [node[:2] + node[3:] for node in graphs[0]["nodes"]]
    return [e for e in events if e not in graphs[1:]]


@case
def a_summary_proto_and_plugin_metadata_of_a_repeated_tag(tf):
    value = tf.Summary.Value(tag="accuracy", simple_value=0.75)
    value.metadata.plugin_data.plugin_name = "scalars"

    def write(logdir):
        with tf.summary.FileWriter(logdir) as writer:
            for step in (5, 6, 7):
                writer.add_summary(tf.Summary(value=[value]), global_step=step)
            writer.add_summary(tf.Summary(value=[value]).SerializeToString())
    return _written(tf, write)


@case
def a_graph_def_given_as_graph_def(tf):
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    return _written(tf, lambda logdir: tf.summary.FileWriter(logdir, graph_def=graph_def).close())


@case
def writer_errors(tf):
    logdir = tempfile.mkdtemp(prefix="dtfnb-events-")
    try:
        with tf.summary.FileWriter(logdir) as writer:
            writer.add_run_metadata(tf.RunMetadata(), "once")
            return [outcome(writer.add_run_metadata, tf.RunMetadata(), "once"),
                    outcome(writer.add_graph, tf.get_default_graph(), graph_def=tf.GraphDef()),
                    outcome(writer.add_graph, 3)]
    finally:
        shutil.rmtree(logdir)
