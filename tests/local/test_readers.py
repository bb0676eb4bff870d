"""Readers through real sessions: keys, values, counters, reset, errors, sharing, threads."""

import collections
import threading

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.ops.building import make_tensor


def write(path, text):
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def filename_queue(paths, name="filename_queue"):
    """A queue of filenames, and the op that fills it with `paths` and closes it."""
    queue = tf.FIFOQueue(capacity=max(10, len(paths)), dtypes=[tf.string], shapes=[()],
                         name=name)
    with tf.control_dependencies([queue.enqueue_many([paths])]):
        return queue, queue.close()


def read_all(sess, tensors):
    """Runs `tensors` until the filename queue is exhausted."""
    out = []
    while True:
        try:
            out.append(sess.run(tensors))
        except tf.errors.OutOfRangeError:
            return out


CSV = "x1, x2 , target\n1.,, 0\n4., 5. , 1\n7., 8. , 0\n"  # the chapter's my_test.csv


def test_text_line_reader_keys_values_and_end_of_queue(tmp_path):
    path = write(tmp_path / "my_test.csv", CSV)
    queue, fill = filename_queue([path])
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(queue)
    assert (key.name, value.name, key.dtype, value.shape.ndims) == \
        ("ReaderReadV2:0", "ReaderReadV2:1", tf.string, 0)
    assert reader.reader_ref.op.type == "TextLineReaderV2"
    with tf.Session() as sess:
        sess.run(fill)
        assert read_all(sess, [key, value]) == [
            [f"{path}:2".encode(), b"1.,, 0"], [f"{path}:3".encode(), b"4., 5. , 1"],
            [f"{path}:4".encode(), b"7., 8. , 0"]]
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            sess.run(value)
    assert info.value.message.startswith("FIFOQueue '_")
    assert "filename_queue' is closed and has insufficient elements (requested 1, current " \
        "size 0)" in info.value.message


def test_text_line_reader_crlf_empty_lines_and_no_final_newline(tmp_path):
    path = write(tmp_path / "a.txt", "a\r\n\nb\r\nc")
    queue, fill = filename_queue([path])
    key, value = tf.TextLineReader().read(queue)
    with tf.Session() as sess:
        sess.run(fill)
        records = read_all(sess, [key, value])
    assert records == [[f"{path}:{n}".encode(), v] for n, v in
                       [(1, b"a"), (2, b""), (3, b"b"), (4, b"c")]]


def test_the_chapter_cell_reader_decode_csv_and_instance_queue(tmp_path):
    path = write(tmp_path / "my_test.csv", CSV)
    filename_queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[()])
    filename = tf.placeholder(tf.string)
    enqueue_filename = filename_queue.enqueue([filename])
    close_filename_queue = filename_queue.close()
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(filename_queue)
    x1, x2, target = tf.decode_csv(value, record_defaults=[[-1.], [-1.], [-1]])
    features = tf.stack([x1, x2])
    instance_queue = tf.RandomShuffleQueue(
        capacity=10, min_after_dequeue=2, dtypes=[tf.float32, tf.int32], shapes=[[2], []],
        name="instance_q", shared_name="shared_instance_q")
    enqueue_instance = instance_queue.enqueue([features, target])
    close_instance_queue = instance_queue.close()
    minibatch_instances, minibatch_targets = instance_queue.dequeue_up_to(2)
    batches = []
    with tf.Session() as sess:
        sess.run(enqueue_filename, feed_dict={filename: path})
        sess.run(close_filename_queue)
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                sess.run(enqueue_instance)
        sess.run(close_instance_queue)
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                batches.append(sess.run([minibatch_instances, minibatch_targets]))
    assert [len(t) for _, t in batches] == [2, 1]
    rows = sorted((tuple(x), int(t)) for xs, ts in batches for x, t in zip(xs, ts))
    assert rows == [((1.0, -1.0), 0), ((4.0, 5.0), 1), ((7.0, 8.0), 0)]


def test_counters_and_reset(tmp_path):
    paths = [write(tmp_path / f"f{i}.txt", "h\n1\n2\n") for i in range(3)]
    queue, fill = filename_queue(paths)
    reader = tf.TextLineReader(skip_header_lines=1)
    key, _ = reader.read(queue)
    produced, completed = reader.num_records_produced(), reader.num_work_units_completed()
    assert (produced.name, produced.dtype, completed.name, completed.dtype) == (
        "ReaderNumRecordsProducedV2:0", tf.int64, "ReaderNumWorkUnitsCompletedV2:0", tf.int64)
    reset = reader.reset()
    with tf.Session() as sess:
        sess.run(fill)
        assert sess.run([produced, completed]) == [0, 0]
        assert [sess.run(key) for _ in range(2)] == [f"{paths[0]}:{n}".encode() for n in (2, 3)]
        assert sess.run([produced, completed]) == [2, 0]  # the end of a file is seen later
        assert sess.run(key) == f"{paths[1]}:2".encode()
        assert sess.run([produced, completed]) == [3, 1]
        assert sess.run(reset) is None
        assert sess.run([produced, completed]) == [0, 0]
        # the current file was dropped: reading goes on with the next one
        assert sess.run(key) == f"{paths[2]}:2".encode()
        sess.run(key)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(key)
        assert sess.run([produced, completed]) == [2, 1]


def test_missing_file_names_path_and_reading_goes_on(tmp_path):
    missing = str(tmp_path / "x.csv")
    good = write(tmp_path / "y.csv", "1\n")
    queue, fill = filename_queue([missing, good])
    reader = tf.TextLineReader()
    key, value = reader.read(queue)
    with tf.Session() as sess:
        sess.run(fill)
        with pytest.raises(tf.errors.NotFoundError) as info:
            sess.run(value)
        assert info.value.message.split("\n")[0] == f"{missing}; No such file or directory"
        assert sess.run([key, value]) == [f"{good}:1".encode(), b"1"]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(value)
        # the missing file was taken from the queue but never started, so not completed
        assert sess.run(reader.num_work_units_completed()) == 1


def test_read_up_to_stops_at_the_end_of_a_file(tmp_path):
    paths = [write(tmp_path / "a.txt", "a1\na2\na3\n"), write(tmp_path / "b.txt", "b1\n")]
    queue, fill = filename_queue(paths)
    keys, values = tf.TextLineReader().read_up_to(queue.queue_ref, 2)
    assert keys.name == "ReaderReadUpToV2:0" and keys.shape.as_list() == [None]
    with tf.Session() as sess:
        sess.run(fill)
        batches = [list(v) for _, v in read_all(sess, [keys, values])]
    assert batches == [[b"a1", b"a2"], [b"a3"], [b"b1"]]


def test_fixed_length_record_reader(tmp_path):
    path = write(tmp_path / "r.bin", b"HH" + b"abcdefg" + b"F")
    queue, fill = filename_queue([path])
    reader = tf.FixedLengthRecordReader(record_bytes=3, header_bytes=2, footer_bytes=1)
    hopping = tf.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=1, hop_bytes=2)
    other_queue, fill_other = filename_queue([path], name="other")
    with tf.Session() as sess:
        sess.run([fill, fill_other])
        assert read_all(sess, list(reader.read(queue))) == [
            [f"{path}:0".encode(), b"abc"], [f"{path}:1".encode(), b"def"]]
        assert [v for _, v in read_all(sess, list(hopping.read(other_queue)))] == \
            [b"abc", b"cde", b"efg"]


def test_tfrecord_reader_keys_are_offsets_and_corruption_is_data_loss(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in (b"one", b"three"):
            writer.write(record)
    gz = str(tmp_path / "r.tfrecord.gz")
    options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    with tf.python_io.TFRecordWriter(gz, options=options) as writer:
        writer.write(b"zipped")
    data = bytearray((tmp_path / "r.tfrecord").read_bytes())
    data[-6] ^= 1  # a byte of "three"
    bad = write(tmp_path / "bad.tfrecord", bytes(data))

    queue, fill = filename_queue([path, bad])
    gz_queue, fill_gz = filename_queue([gz], name="gz")
    reader = tf.TFRecordReader()
    with tf.Session() as sess:
        sess.run([fill, fill_gz])
        key, value = reader.read(queue)
        assert sess.run([key, value]) == [f"{path}:0".encode(), b"one"]
        assert sess.run([key, value]) == [f"{path}:19".encode(), b"three"]
        assert sess.run(value) == b"one"
        for _ in range(2):  # the file stays in progress: it fails again at the same record
            with pytest.raises(tf.errors.DataLossError) as info:
                sess.run(value)
            assert info.value.message.split("\n")[0] == "corrupted record at 31"
        zipped = tf.TFRecordReader(options=options).read(gz_queue)
        assert sess.run(zipped) == (f"{gz}:0".encode(), b"zipped")


def test_whole_file_reader(tmp_path):
    paths = [write(tmp_path / "a", "alpha\nbeta"), write(tmp_path / "b", b"\x00\x01")]
    queue, fill = filename_queue(paths)
    key, value = tf.WholeFileReader().read(queue)
    with tf.Session() as sess:
        sess.run(fill)
        assert read_all(sess, [key, value]) == [[paths[0].encode(), b"alpha\nbeta"],
                                                [paths[1].encode(), b"\x00\x01"]]


def _csv_files(tmp_path, n_files=6, lines=5):
    paths = [write(tmp_path / f"part{f}.csv", "".join(f"{f},{i}\n" for i in range(lines)))
             for f in range(n_files)]
    expected = collections.Counter(f"{f},{i}".encode() for f in range(n_files)
                                   for i in range(lines))
    return paths, expected


def _read_in_threads(sess, values):
    seen = collections.Counter()
    lock = threading.Lock()

    def loop(value):
        for got in read_all(sess, value):
            with lock:
                seen[got] += 1

    threads = [threading.Thread(target=loop, args=(v,)) for v in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


def test_five_threads_on_one_reader_see_every_record_once(tmp_path):
    paths, expected = _csv_files(tmp_path)
    queue, fill = filename_queue(paths)
    _, value = tf.TextLineReader().read(queue)
    with tf.Session() as sess:
        sess.run(fill)
        assert _read_in_threads(sess, [value] * 5) == expected


def test_five_readers_in_threads_see_every_record_once(tmp_path):
    paths, expected = _csv_files(tmp_path)
    queue, fill = filename_queue(paths)
    values = [tf.TextLineReader().read(queue)[1] for _ in range(5)]
    with tf.Session() as sess:
        sess.run(fill)
        assert _read_in_threads(sess, values) == expected


def test_a_timed_out_read_does_not_hold_the_reader(tmp_path):
    path = write(tmp_path / "a.txt", "a\n")
    queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[()])
    _, value = tf.TextLineReader().read(queue)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(value, options=tf.RunOptions(timeout_in_ms=50))
        sess.run(queue.enqueue(path))
        assert sess.run(value) == b"a"


def _shared_reader_graph(queue_name):
    graph = tf.Graph()
    with graph.as_default():
        queue = tf.FIFOQueue(10, tf.string, shapes=[()], shared_name=queue_name)
        ref = make_tensor("TextLineReaderV2", [], tf.resource, name="reader", attrs={
            "skip_header_lines": 0, "container": "", "shared_name": "shared_reader"})
        reader = tf.ReaderBase(ref)
        return graph, queue, reader.read(queue)[1], reader.num_records_produced()


def test_a_reader_shared_by_shared_name_across_sessions(cluster, tmp_path):
    path = write(tmp_path / "a.txt", "1\n2\n3\n")
    server = cluster({"local": 1})["local", 0]
    graph1, queue, value1, _ = _shared_reader_graph("files")
    graph2, _, value2, produced2 = _shared_reader_graph("files")
    with tf.Session(server.target, graph=graph1) as sess1, \
            tf.Session(server.target, graph=graph2) as sess2:
        sess1.run(queue.enqueue(path))
        assert sess1.run(value1) == b"1"
        assert sess2.run(value2) == b"2"  # the same reader, in the middle of the file
        assert sess2.run(produced2) == 2
        assert sess1.run(value1) == b"3"


def test_read_up_to_values_are_string_vectors(tmp_path):
    path = write(tmp_path / "a.txt", "x\n")
    queue, fill = filename_queue([path])
    keys, values = tf.TextLineReader().read_up_to(queue, 5)
    with tf.Session() as sess:
        sess.run(fill)
        got = sess.run(values)
    assert isinstance(got, np.ndarray) and got.dtype == object and list(got) == [b"x"]


def test_session_close_cancels_reads_waiting_for_a_file_or_for_their_turn():
    queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[()])
    _, value = tf.TextLineReader().read(queue)
    sess = tf.Session()
    errors = []

    def read():
        try:
            sess.run(value)
        except tf.errors.OpError as error:
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    threads[0].join(0.2)
    sess.close()
    for thread in threads:
        thread.join(5)
    assert not any(t.is_alive() for t in threads)
    assert [type(e) for e in errors] == [tf.errors.CancelledError] * 2


def test_match_filenames_once_feeds_a_reader_pipeline(tmp_path):
    for name, lines in [("b.csv", "3\n4\n"), ("a.csv", "1\n2\n"), ("notes.txt", "x\n")]:
        (tmp_path / name).write_text(lines)
    files = tf.train.match_filenames_once(str(tmp_path / "*.csv"))
    assert files.name == "matching_filenames:0"
    assert tf.local_variables() == [files] and tf.global_variables() == []
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader().read(queue)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(files).tolist() == [str(tmp_path / n).encode() for n in ("a.csv", "b.csv")]
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run(line))
        coord.request_stop()
        coord.join(threads)
    assert got == [b"1", b"2", b"3", b"4"]


def test_matching_files_takes_a_glob_or_a_vector_of_them(tmp_path):
    for name in ("a.csv", "b.txt"):
        (tmp_path / name).write_text("")
    both = tf.matching_files([str(tmp_path / "b*"), str(tmp_path / "a*")])
    none = tf.matching_files(str(tmp_path / "missing" / "*"))
    with tf.Session() as sess:
        assert sess.run(both).tolist() == [str(tmp_path / n).encode() for n in ("a.csv", "b.txt")]
        assert sess.run(none).shape == (0,)
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        tf.matching_files([["a"]])


def test_identity_reader_gives_each_work_unit_as_key_and_value():
    queue = tf.FIFOQueue(4, tf.string)
    reader = tf.IdentityReader()
    key, value = reader.read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([["a", "b"]]))
        assert sess.run([key, value]) == [b"a", b"a"]
        assert sess.run(reader.read_up_to(queue, 5)) == (np.array([b"b"], object),) * 2
        assert sess.run([reader.num_records_produced(),
                         reader.num_work_units_completed()]) == [2, 2]


@pytest.mark.parametrize("encoding", ["ZLIB", "GZIP"])
def test_fixed_length_records_of_compressed_files(tmp_path, encoding):
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "GZIP" else 15)
    path = write(tmp_path / "f", packer.compress(bytes(range(10))) + packer.flush())
    queue, fill = filename_queue([path])
    reader = tf.FixedLengthRecordReader(3, header_bytes=1, footer_bytes=2, encoding=encoding)
    with tf.Session() as sess:
        sess.run(fill)
        assert read_all(sess, reader.read(queue).value) == [b"\1\2\3", b"\4\5\6"]


def test_serialized_state_restores_the_counters_and_a_bad_one_resets(tmp_path):
    paths = [write(tmp_path / "a", "A"), write(tmp_path / "b", "B")]
    queue, fill = filename_queue(paths)
    first, second = tf.WholeFileReader(), tf.WholeFileReader(name="second")
    counters = [second.num_records_produced(), second.num_work_units_completed()]
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(first.read(queue))
        state = sess.run(first.serialize_state())
        sess.run(second.restore_state(state))
        assert sess.run(counters) == [1, 1]
        assert sess.run(second.read(queue)) == (paths[1].encode(), b"B")
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(second.restore_state(b"\xff"))
        assert info.value.message.split("\n")[0] == \
            "Could not parse state for WholeFileReader 'second': \\377"
        assert sess.run(counters) == [0, 0]
        with pytest.raises(tf.errors.UnimplementedError, match="Reader SerializeState"):
            sess.run(tf.TextLineReader().serialize_state())
