"""tf.summary.FileWriter: event files written with dtfnb, read back by the real
TensorBoard's loaders (its EventAccumulator, and its record reader, which checks every
CRC)."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dtfnb as tf

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")
tb_records = pytest.importorskip("tensorboard.compat.tensorflow_stub.pywrap_tensorflow")
tb_errors = pytest.importorskip("tensorboard.compat.tensorflow_stub.errors")


def _loaded(logdir):
    accumulator = event_accumulator.EventAccumulator(str(logdir))
    accumulator.Reload()
    return accumulator


def _event_files(logdir):
    return sorted(p for p in os.listdir(logdir) if "tfevents" in p)


def _records(path):
    """Every record of `path` through TensorBoard's own reader, which raises on a bad CRC."""
    reader = tb_records.PyRecordReader_New(str(path))
    records = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            return records
        records.append(reader.record())


def _loss_model():
    x = tf.placeholder(tf.float32, [], name="x")
    loss = tf.square(x, name="square")
    return x, loss, tf.summary.scalar("loss", loss)


def test_scalars_written_at_their_steps_load_in_tensorboard(tmp_path):
    x, _, summary = _loss_model()
    with tf.Session() as sess, tf.summary.FileWriter(tmp_path, sess.graph) as writer:
        for step in range(5):
            writer.add_summary(sess.run(summary, {x: step}), global_step=step * 10)
    scalars = _loaded(tmp_path).Scalars("loss")
    assert [(s.step, s.value) for s in scalars] == [(0, 0.0), (10, 1.0), (20, 4.0),
                                                    (30, 9.0), (40, 16.0)]


def test_an_event_file_is_named_and_framed_as_tensorflows(tmp_path):
    writer = tf.summary.FileWriter(tmp_path, filename_suffix=".v1")
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.5)]), 3)
    writer.close()
    [name] = _event_files(tmp_path)
    prefix, host_and_suffix = name.split(".tfevents.")
    seconds, _, rest = host_and_suffix.partition(".")
    assert prefix == "events.out" and len(seconds) == 10 and rest.endswith(".v1")
    first, second = [tf.Event.FromString(r) for r in _records(tmp_path / name)]
    assert first.file_version == "brain.Event:2"
    assert (second.step, second.summary.value[0].simple_value) == (3, 1.5)
    assert [e.step for e in tf.train.summary_iterator(str(tmp_path / name))] == [0, 3]


def test_a_corrupted_record_fails_both_readers(tmp_path):
    with tf.summary.FileWriter(tmp_path) as writer:
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]))
    [name] = _event_files(tmp_path)
    path = tmp_path / name
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF  # inside the last record's data
    path.write_bytes(bytes(data))
    with pytest.raises(tb_errors.DataLossError):
        _records(path)
    with pytest.raises(tf.errors.DataLossError):
        list(tf.train.summary_iterator(str(path)))


def test_events_become_visible_at_flush_and_nothing_is_lost_at_close(tmp_path):
    writer = tf.summary.FileWriter(tmp_path, max_queue=2, flush_secs=3600)
    for step in range(50):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]),
                           step)
    writer.flush()
    assert len(_loaded(tmp_path).Scalars("a")) == 50
    for step in range(50, 100):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]),
                           step)
    writer.close()
    assert [s.step for s in _loaded(tmp_path).Scalars("a")] == list(range(100))


def test_reopen_starts_a_new_file_and_a_closed_writer_warns(tmp_path):
    writer = tf.summary.FileWriter(tmp_path)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1)]), 1)
    writer.close()
    with pytest.warns(UserWarning, match="Attempting to use a closed FileWriter"):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=9)]), 9)
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=2)]), 2)
    writer.close()
    # Within one second both files would have TensorFlow's name: the second gets a
    # counter rather than truncating the first.
    assert len(_event_files(tmp_path)) == 2
    assert [s.step for s in _loaded(tmp_path).Scalars("a")] == [1, 2]


def test_a_graph_comes_with_the_devices_its_session_placed_it_on(tmp_path):
    with tf.device("/cpu:0"):
        x = tf.Variable(2.0, name="x")
        y = tf.multiply(x, 3.0, name="y")
    unrun = tf.identity(y, name="never_run")
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(tmp_path, sess.graph)
        sess.run(tf.global_variables_initializer())
        sess.run(y)
        writer.close()
    devices = {n.name: n.device for n in _loaded(tmp_path).Graph().node}
    placed = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert devices["x"] == devices["y"] == placed
    assert devices[unrun.op.name] == ""  # never placed: the device it asked for (none)


def test_run_metadata_loads_with_its_step_stats_and_a_tag_is_used_once(tmp_path):
    x, loss, _ = _loss_model()
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(loss, {x: 2.0}, run_metadata=metadata,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    with tf.summary.FileWriter(tmp_path) as writer:
        writer.add_run_metadata(metadata, "step1", global_step=1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(metadata, "step1")
    loaded = _loaded(tmp_path).RunMetadata("step1")
    nodes = {n.node_name for d in loaded.step_stats.dev_stats for n in d.node_stats}
    assert "square" in nodes


def test_session_logs_and_plugin_metadata_as_tensorflow_writes_them(tmp_path):
    value = tf.Summary.Value(tag="t", simple_value=1.0)
    value.metadata.plugin_data.plugin_name = "scalars"
    with tf.summary.FileWriter(tmp_path) as writer:
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
        writer.add_summary(tf.Summary(value=[value]), 1)
        writer.add_summary(tf.Summary(value=[value]).SerializeToString(), 2)
    [name] = _event_files(tmp_path)
    events = list(tf.train.summary_iterator(str(tmp_path / name)))
    assert events[1].session_log.status == tf.SessionLog.START
    # The first value of a tag keeps its metadata; later ones are stripped, as TensorFlow's.
    assert [e.summary.value[0].HasField("metadata") for e in events[2:]] == [True, False]


def test_file_writer_cache_gives_one_writer_per_directory(tmp_path):
    try:
        first = tf.summary.FileWriterCache.get(str(tmp_path / "a"))
        assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is first
        assert tf.summary.FileWriterCache.get(str(tmp_path / "b")) is not first
    finally:
        tf.summary.FileWriterCache.clear()
    assert len(_event_files(tmp_path / "a")) == 1


def test_bad_arguments_are_refused_with_tensorflows_errors(tmp_path):
    with pytest.raises(ValueError, match="session"):
        tf.summary.FileWriter(tmp_path, session=object())
    with tf.summary.FileWriter(tmp_path) as writer:
        with pytest.raises(TypeError, match="must be an instance of `Graph`"):
            writer.add_graph(np.zeros(2))
        with pytest.raises(ValueError, match="only graph"):
            writer.add_graph(tf.get_default_graph(), graph_def=tf.GraphDef())
        with pytest.raises(TypeError, match="must be type MetaGraphDef"):
            writer.add_meta_graph(tf.GraphDef())


def test_a_graph_def_is_written_as_given_with_a_warning(tmp_path, caplog):
    tf.constant(1.0, name="c")
    with warnings.catch_warnings(), tf.summary.FileWriter(tmp_path) as writer:
        writer.add_graph(tf.get_default_graph().as_graph_def())
    assert "deprecated" in caplog.text
    assert [n.name for n in _loaded(tmp_path).Graph().node] == ["c"]


def test_events_of_a_writer_never_closed_are_in_the_file_after_exit(tmp_path):
    script = textwrap.dedent(f"""
        import dtfnb as tf
        writer = tf.summary.FileWriter({str(tmp_path)!r}, flush_secs=3600)
        for step in range(20):
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]),
                               step)
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert [s.step for s in _loaded(tmp_path).Scalars("a")] == list(range(20))
