"""TFRecord files: the format byte for byte, compression, corruption and truncation messages,
and tf.train.Example records shared with TensorFlow."""

import json
import subprocess
import textwrap
import zlib

import pytest

import dtfnb as tf
from dtfnb.resources import tfrecord
from tests.helpers import tensorflow_python

TF_PYTHON = tensorflow_python()
RECORDS = [b"hello", b"", b"world!" * 1000]


def write(path, records, options=None):
    with tf.python_io.TFRecordWriter(str(path), options) as writer:
        for record in records:
            writer.write(record)


def read(path, options=None):
    return list(tf.python_io.tf_record_iterator(str(path), options))


def test_crc32c_known_values():
    assert tfrecord.crc32c(b"") == 0
    assert tfrecord.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert tfrecord.crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720, B.4


def test_the_exact_bytes_tensorflow_writes(tmp_path):
    write(tmp_path / "a", [b"hello", b"world!"])
    assert (tmp_path / "a").read_bytes().hex() == (
        "0500000000000000eab2043e68656c6c6fbb1f1c19"
        "06000000000000007369d537776f726c64210ac6af4f")


@pytest.mark.parametrize("options", [None, "", "GZIP", "ZLIB",
                                     tf.python_io.TFRecordOptions("GZIP"),
                                     tf.python_io.TFRecordOptions(
                                         tf.python_io.TFRecordCompressionType.ZLIB, 9)],
                         ids=["None", "empty", "GZIP", "ZLIB", "options-GZIP", "options-ZLIB-9"])
def test_round_trip(tmp_path, options):
    write(tmp_path / "r", RECORDS, options)
    assert read(tmp_path / "r", options) == RECORDS


def test_compressed_files_are_gzip_and_zlib_streams(tmp_path):
    write(tmp_path / "g", RECORDS, "GZIP")
    write(tmp_path / "z", RECORDS, "ZLIB")
    write(tmp_path / "plain", RECORDS)
    plain = (tmp_path / "plain").read_bytes()
    assert zlib.decompress((tmp_path / "g").read_bytes(), 31) == plain
    assert zlib.decompress((tmp_path / "z").read_bytes()) == plain


def test_writer_api(tmp_path):
    writer = tf.python_io.TFRecordWriter(str(tmp_path / "w"))
    writer.write("text")  # str is written as UTF-8
    writer.flush()
    assert read(tmp_path / "w") == [b"text"]
    writer.close()
    writer.close()
    for call in (lambda: writer.write(b"x"), writer.flush):
        with pytest.raises(tf.errors.FailedPreconditionError, match="^Writer is closed.$"):
            call()


def test_missing_files_and_bad_options(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope; No such file or directory"):
        tf.python_io.tf_record_iterator(str(tmp_path / "nope"))  # raised at once, as in TF
    with pytest.raises(tf.errors.NotFoundError, match="x; No such file or directory"):
        tf.python_io.TFRecordWriter(str(tmp_path / "no_dir" / "x"))
    with pytest.raises(ValueError, match='^Not a valid compression_type: "BZ2"$'):
        tf.python_io.TFRecordOptions("BZ2")
    assert tf.python_io.TFRecordOptions.get_compression_type_string(
        tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)) == "GZIP"


def test_reader_offsets_for_later_reader_ops(tmp_path):
    write(tmp_path / "o", [b"hello", b"world!"])
    reader = tfrecord.RecordReader(str(tmp_path / "o"))
    assert [reader.read(), reader.read(), reader.read()] == [(0, b"hello"), (21, b"world!"),
                                                             None]
    reader.close()


# -- corruption and truncation, with TensorFlow 2.21's messages -------------------------

def damaged(tmp_path, change):
    write(tmp_path / "good", [b"hello", b"world!"])  # records at offsets 0 and 21
    data = bytearray((tmp_path / "good").read_bytes())
    path = tmp_path / "bad"
    path.write_bytes(change(data))
    return path


def flip(index):
    def change(data):
        data[index] ^= 1
        return bytes(data)
    return change


@pytest.mark.parametrize("change, message", [
    (flip(0), "corrupted record at 0 (Is this even a TFRecord file?)"),  # the length
    (flip(9), "corrupted record at 0 (Is this even a TFRecord file?)"),  # the length's CRC
    (flip(13), "corrupted record at 12"),  # the data
    (flip(21), "corrupted record at 21"),  # the second record's length
    (flip(42), "corrupted record at 33"),  # the second record's data CRC
    (lambda d: bytes(d[:38]), "truncated record at 21' failed with Read less bytes than "
                              "requested"),
    (lambda d: bytes(d[:12]), "truncated record at 0' failed with Read less bytes than "
                              "requested"),
], ids=["length", "length-crc", "data", "second-length", "second-data-crc", "truncated-data",
        "no-data"])
def test_damaged_files_raise_data_loss_naming_the_offset(tmp_path, change, message):
    path = damaged(tmp_path, change)
    with pytest.raises(tf.errors.DataLossError) as info:
        read(path)
    assert info.value.message == message


def test_a_file_ending_inside_a_header_just_ends(tmp_path):
    assert read(damaged(tmp_path, lambda d: bytes(d[:31]))) == [b"hello"]  # as TensorFlow


def test_damaged_compressed_files(tmp_path):
    write(tmp_path / "plain", [b"hello", b"world!"])
    plain = (tmp_path / "plain").read_bytes()
    (tmp_path / "cut").write_bytes(zlib.compress(plain[:-3]))
    with pytest.raises(tf.errors.DataLossError, match="^truncated record at 21' failed with "
                                                      "EOF reached"):
        read(tmp_path / "cut", "ZLIB")
    with pytest.raises(tf.errors.DataLossError, match=r"^inflate\(\) failed with error -3: "
                                                      "incorrect header check"):
        read(tmp_path / "plain", "GZIP")


def test_an_iterator_at_the_end_reads_on_as_the_file_grows(tmp_path):
    path = str(tmp_path / "growing")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"one")
        writer.flush()
        records = tf.python_io.tf_record_iterator(path)
        assert next(records) == b"one"
        for _ in range(2):
            with pytest.raises(StopIteration):
                next(records)
        writer.write(b"two")
        writer.flush()
        assert list(records) == [b"two"]


def test_a_truncated_record_fails_until_it_is_complete(tmp_path):
    write(tmp_path / "whole", [b"good", b"truncated"])
    whole = (tmp_path / "whole").read_bytes()
    with open(tmp_path / "cut", "wb", buffering=0) as file:
        file.write(whole[:-1])
        records = tf.python_io.tf_record_iterator(str(tmp_path / "cut"))
        assert next(records) == b"good"
        for _ in range(2):
            with pytest.raises(tf.errors.DataLossError, match="truncated record at 20"):
                next(records)
        file.write(whole[-1:])
        assert list(records) == [b"truncated"]


def test_random_reader_reads_at_any_record_offset(tmp_path):
    write(tmp_path / "records", RECORDS)
    reader = tf.python_io.tf_record_random_reader(str(tmp_path / "records"))
    offsets, offset = [], 0
    for record in RECORDS:
        offsets.append(offset)
        read_record, offset = reader.read(offset)
        assert read_record == record
    with pytest.raises(IndexError, match=f"^Out of range at reading offset {offset}$"):
        reader.read(offset)
    assert reader.read(offsets[1]) == (RECORDS[1], offsets[2])
    with pytest.raises(tf.errors.DataLossError, match="^corrupted record at 1$"):
        reader.read(1)
    reader.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        reader.read(0)


def test_zlib_options_shape_the_compressed_file(tmp_path):
    records = [bytes(range(256)) * 64, b"abc" * 5000]
    sizes = {}
    for name, settings in {"default": {}, "level 1": {"compression_level": 1},
                           "small window": {"window_bits": 9},
                           "huffman only": {"compression_strategy": zlib.Z_HUFFMAN_ONLY},
                           "full flushes": {"flush_mode": zlib.Z_FULL_FLUSH,
                                            "input_buffer_size": 1024}}.items():
        options = tf.python_io.TFRecordOptions("ZLIB", **settings)
        write(tmp_path / name, records, options)
        assert read(tmp_path / name, "ZLIB") == records
        sizes[name] = (tmp_path / name).stat().st_size
    assert all(sizes[name] > sizes["default"] for name in sizes if name != "default"), sizes


# -- interoperability with TensorFlow itself -------------------------------------------

@pytest.mark.skipif(TF_PYTHON is None, reason="no TensorFlow interpreter: make tfvenv")
def test_tensorflow_reads_ours_and_we_read_theirs(tmp_path):
    compressions = ["", "GZIP", "ZLIB"]
    for compression in compressions:
        write(tmp_path / f"ours{compression}", RECORDS, compression)
    script = textwrap.dedent(f"""
        import tensorflow.compat.v1 as tf
        for compression in {compressions!r}:
            path = {str(tmp_path)!r} + "/ours" + compression
            records = list(tf.python_io.tf_record_iterator(path, compression))
            assert records == {RECORDS!r}, records
            path = {str(tmp_path)!r} + "/theirs" + compression
            with tf.python_io.TFRecordWriter(path, compression) as writer:
                for record in records:
                    writer.write(record)
    """)
    subprocess.run([TF_PYTHON, "-c", script], check=True, capture_output=True, timeout=120)
    for compression in compressions:
        assert read(tmp_path / f"theirs{compression}", compression) == RECORDS


def _example(x, label, tags):
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags))}))


@pytest.mark.skipif(TF_PYTHON is None, reason="no TensorFlow interpreter: make tfvenv")
def test_tensorflow_parses_our_examples_and_we_parse_theirs(tmp_path):
    """tf.train.Example records written by dtfnb parse in TensorFlow, and the reverse:
    the protocol buffers share TensorFlow's field numbers."""
    ours = [_example([1.5, -2.0], 3, [b"a"]), _example([0.25, 8.0], -1, [b"b", b"c"])]
    write(tmp_path / "ours", [e.SerializeToString() for e in ours])
    script = textwrap.dedent(f"""
        import json
        import tensorflow.compat.v1 as tf
        read = [tf.train.Example.FromString(r) for r in
                tf.python_io.tf_record_iterator({str(tmp_path / "ours")!r})]
        print(json.dumps([[list(e.features.feature["x"].float_list.value),
                           list(e.features.feature["label"].int64_list.value),
                           [t.decode() for t in e.features.feature["tags"].bytes_list.value]]
                          for e in read]))
        with tf.python_io.TFRecordWriter({str(tmp_path / "theirs")!r}) as writer:
            for x, label, tags in [([7.0, 0.5], 11, [b"z"]), ([1.0, 2.0], 0, [])]:
                writer.write(tf.train.Example(features=tf.train.Features(feature={{
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags))}}))
                    .SerializeToString())
    """)
    done = subprocess.run([TF_PYTHON, "-c", script], check=True, capture_output=True,
                          text=True, timeout=120)
    assert json.loads(done.stdout.splitlines()[-1]) == [[[1.5, -2.0], [3], ["a"]],
                                                        [[0.25, 8.0], [-1], ["b", "c"]]]
    records = tf.data.TFRecordDataset(str(tmp_path / "theirs")).map(
        lambda r: tf.parse_single_example(r, {"x": tf.FixedLenFeature([2], tf.float32),
                                              "label": tf.FixedLenFeature([], tf.int64)}))
    batch = records.batch(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        parsed = sess.run(batch)
    assert parsed["x"].tolist() == [[7.0, 0.5], [1.0, 2.0]]
    assert parsed["label"].tolist() == [11, 0]
