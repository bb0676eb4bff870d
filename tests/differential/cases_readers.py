"""Readers fed by a queue of filenames, TFRecord files from Python, decode_csv, decode_raw.

Each reading case writes its files into a fresh temporary folder and runs its steps
in one session; keys and messages name that folder as <dir>, and a private resource's
process-wide counter (`'_12_fifo_queue'`) as `'_N_`, so that both interpreters agree.
TensorFlow's protobuf starts a message's debug string with a marker that changes from
run to run (`goo.gle/debugonly  `, `goo.gle/debugproto `...); it is left out.
"""

import itertools
import os
import re
import shutil
import tempfile
import zlib

import numpy as np
from observe import _attr, error_message, outcome, run

_PRIVATE = re.compile(r"'_\d+_")
_DEBUG_MARKER = re.compile(r"goo\.gle/debug\w+ *\n")


class _Files:
    """A temporary folder holding `files` ({name: bytes}); removed on leaving."""

    def __init__(self, files):
        self.files = files

    def __enter__(self):
        self.root = tempfile.mkdtemp(prefix="dtfnb-readers-")
        for name, data in self.files.items():
            with open(self.path(name), "wb") as f:
                f.write(data)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.root)

    def path(self, name):
        return os.path.join(self.root, name)

    def scrub(self, value):
        """`value` with the folder's path as <dir> and private counters as '_N_."""
        if isinstance(value, BaseException):
            return ("error", type(value).__name__, self.scrub(error_message(value)))
        if isinstance(value, bytes):
            return value.replace(self.root.encode(), b"<dir>")
        if isinstance(value, str):
            value = _DEBUG_MARKER.sub("", value.replace(self.root, "<dir>"))
            return _PRIVATE.sub("'_N_", value)
        if isinstance(value, np.ndarray) and value.dtype == object:
            out = np.empty(value.shape, object)
            out.reshape(-1)[:] = [self.scrub(v) for v in value.reshape(-1)]
            return out
        if isinstance(value, (list, tuple)):
            items = [self.scrub(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
        return value


def _steps(tf, files, build, names=None, close=True, timeout_ms=50):
    """Writes `files`, fills a queue with the paths of `names` (every file by default),
    closes it unless told not to, and runs each fetch that `build(queue, files)` lists
    in one session, in order; what each gave or raised. A read waits for work only from
    an open queue: only then do the steps get a deadline, so that a loaded machine cannot
    time out the others."""
    with _Files(files) as where:
        queue = tf.FIFOQueue(10, tf.string, shapes=[[]])
        paths = [where.path(n) for n in (files if names is None else names)]
        fill = [queue.enqueue_many([paths])] if paths else []
        if close:
            fill.append(queue.close())
        steps = build(queue, where)
        options = None if close else tf.RunOptions(timeout_in_ms=timeout_ms)
        with tf.Session() as sess:
            for op in fill:
                sess.run(op)
            return [where.scrub(outcome(sess.run, step, options=options)) for step in steps]


def _counted(reader, reads):
    """`reads` reads, then the counters."""
    return lambda queue, where: [reader.read(queue)] * reads + [
        [reader.num_records_produced(), reader.num_work_units_completed()]]


# -- every reader, reading whole files ----------------------------------------------------

TEXT = {"a.txt": b"h1\nh2\nline 3\r\nline 4\n\nlast", "b.txt": b"h\nx\n", "c.txt": b"",
        "d.txt": b"only\n"}


def _text_line(skip):
    def case(tf):
        reader = tf.TextLineReader(skip_header_lines=skip)
        return _steps(tf, TEXT, _counted(reader, 9))
    return case


def _text_line_up_to(n):
    def case(tf):
        reader = tf.TextLineReader(skip_header_lines=1)
        return _steps(tf, TEXT, lambda q, w: [reader.read_up_to(q, n)] * 5 + [
            [reader.num_records_produced(), reader.num_work_units_completed()]])
    return case


FIXED = {"a.bin": bytes(range(20)), "b.bin": bytes(range(100, 107)), "c.bin": b""}


def _fixed(record_bytes, header_bytes, footer_bytes, hop_bytes):
    def case(tf):
        reader = tf.FixedLengthRecordReader(record_bytes, header_bytes=header_bytes,
                                            footer_bytes=footer_bytes, hop_bytes=hop_bytes)
        return _steps(tf, FIXED, _counted(reader, 12))
    return case


def _compressed(data, encoding):
    packer = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "GZIP" else 15)
    return packer.compress(data) + packer.flush()


def _fixed_encoded(encoding, header_bytes, footer_bytes, hop_bytes):
    def case(tf):
        files = {name: _compressed(data, encoding) for name, data in FIXED.items()}
        reader = tf.FixedLengthRecordReader(3, header_bytes=header_bytes,
                                            footer_bytes=footer_bytes, hop_bytes=hop_bytes,
                                            encoding=encoding)
        return _steps(tf, files, _counted(reader, 12))
    return case


def _fixed_up_to(n):
    def case(tf):
        reader = tf.FixedLengthRecordReader(4, header_bytes=1)
        return _steps(tf, FIXED, lambda q, w: [reader.read_up_to(q, n)] * 5 + [
            reader.num_records_produced()])
    return case


def _write_records(tf, path, records, compression):
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    with tf.python_io.TFRecordWriter(path, options=options) as writer:
        for record in records:
            writer.write(record)


RECORDS = {"a.tfr": [b"first", b"", b"third record"], "b.tfr": [], "c.tfr": [b"z" * 70]}


def _tfrecord(compression, up_to=None):
    def case(tf):
        options = tf.python_io.TFRecordOptions(compression) if compression else None
        reader = tf.TFRecordReader(options=options)

        def build(queue, where):
            for name, records in RECORDS.items():
                _write_records(tf, where.path(name), records, compression)
            read = reader.read(queue) if up_to is None else reader.read_up_to(queue, up_to)
            return [read] * 6 + [[reader.num_records_produced(),
                                  reader.num_work_units_completed()]]
        return _steps(tf, dict.fromkeys(RECORDS, b""), build)
    return case


WHOLE = {"a": b"alpha", "b": b"", "c": b"\x00\xff gamma\n"}


def whole_file(tf):
    reader = tf.WholeFileReader()
    return _steps(tf, WHOLE, _counted(reader, 4))


def whole_file_up_to(tf):
    reader = tf.WholeFileReader()
    return _steps(tf, WHOLE, lambda q, w: [reader.read_up_to(q, 2)] * 3 + [
        reader.num_work_units_completed()])


def identity(tf):
    reader = tf.IdentityReader()
    return _steps(tf, WHOLE, _counted(reader, 4), names=["a", "x", "y"])


def identity_up_to(tf):
    reader = tf.IdentityReader()
    return _steps(tf, WHOLE, lambda q, w: [reader.read_up_to(q, 2)] * 3 + [
        reader.num_records_produced()], names=["a", "x", "y"])


# -- the counters, reset, and state -------------------------------------------------------

def _readers(tf):
    return {"text": tf.TextLineReader(), "fixed": tf.FixedLengthRecordReader(2),
            "record": tf.TFRecordReader(), "whole": tf.WholeFileReader(),
            "identity": tf.IdentityReader()}


def _reset(kind):
    def case(tf):
        reader = _readers(tf)[kind]
        files = {"a": b"1\n2\n", "b": b"3\n"} if kind != "record" else {"a": b"", "b": b""}

        def build(queue, where):
            if kind == "record":
                _write_records(tf, where.path("a"), [b"1", b"2"], None)
                _write_records(tf, where.path("b"), [b"3"], None)
            counters = [reader.num_records_produced(), reader.num_work_units_completed()]
            return [reader.read(queue), counters, reader.reset(), counters,
                    reader.read(queue), counters, reader.read(queue), counters]
        return _steps(tf, files, build)
    return case


def _serialize(kind):
    def case(tf):
        reader = _readers(tf)[kind]
        return reader.supports_serialize, _steps(tf, {"a": b"12\n", "b": b"34\n"}, lambda q, w: [
            reader.serialize_state(), reader.read(q), reader.serialize_state(),
            reader.read(q), reader.serialize_state()])
    return case


def _state(tf, started, finished, produced, work=b""):
    """A ReaderBaseState, as serialize_state writes it (protobuf varints and bytes)."""
    def varint(n):
        n &= (1 << 64) - 1
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)
    fields = b""
    for number, value in ((1, started), (2, finished), (3, produced)):
        if value:
            fields += bytes([number << 3]) + varint(value)
    if work:
        fields += b"\x22" + varint(len(work)) + work
    return fields


def _restore(kind, state):
    def case(tf):
        reader = _readers(tf)[kind]
        return _steps(tf, {"a": b"12\n", "b": b"34\n"}, lambda q, w: [
            reader.restore_state(_state(tf, *state)), [reader.num_records_produced(),
                                                       reader.num_work_units_completed()],
            reader.serialize_state(), reader.read(q), reader.serialize_state()])
    return case


def restore_garbage(tf):
    reader = tf.IdentityReader(name="ident")
    return _steps(tf, {"a": b""}, lambda q, w: [
        reader.read(q), reader.restore_state(b"\xff\xff not a proto"), reader.serialize_state(),
        reader.num_records_produced()])


def restore_not_a_scalar(tf):
    reader = tf.IdentityReader()
    return [(type(err).__name__, error_message(err).split(" for '")[0])
            for err in (outcome(reader.restore_state, []),
                        outcome(reader.restore_state, ["a", "b"]))]


def restore_then_continue(tf):
    """A restored work in progress is read on; it is not taken from the queue again."""
    first, second = tf.WholeFileReader(), tf.WholeFileReader()

    def build(queue, where):
        state = first.serialize_state()
        return [first.read(queue), state, second.restore_state(state), second.read(queue),
                [second.num_records_produced(), second.num_work_units_completed()]]
    return _steps(tf, {"a": b"A", "b": b"B", "c": b"C"}, build)


# -- errors -------------------------------------------------------------------------------

def missing_file(tf):
    reader = tf.TextLineReader()
    return _steps(tf, {"a": b"x\n"}, lambda q, w: [reader.read(q)] * 3 + [
        [reader.num_records_produced(), reader.num_work_units_completed()]],
        names=["missing", "a"])


def _missing(kind):
    def case(tf):
        reader = _readers(tf)[kind]
        return _steps(tf, {}, lambda q, w: [reader.read(q), reader.read(q)],
                      names=[], close=False) + [outcome(run, tf, reader.read_up_to(
                          tf.FIFOQueue(1, tf.string), 3), timeout_ms=10)]
    return case


def _missing_file_kind(kind):
    def case(tf):
        reader = _readers(tf)[kind]
        with _Files({}) as where:
            queue = tf.FIFOQueue(2, tf.string)
            fill = queue.enqueue(where.path("nothing"))
            with tf.Session() as sess:
                sess.run(fill)
                return where.scrub(outcome(sess.run, reader.read(queue)))
    return case


def closed_queue(tf):
    reader = tf.WholeFileReader()
    return _steps(tf, {}, lambda q, w: [reader.read(q), reader.read_up_to(q, 2),
                                        reader.num_work_units_completed()], names=[])


def wrong_queues(tf):
    reader = tf.WholeFileReader()
    ints = tf.FIFOQueue(2, tf.int32)
    pairs = tf.FIFOQueue(2, [tf.string, tf.string])
    vectors = tf.FIFOQueue(2, tf.string)
    with tf.Session() as sess:
        sess.run([ints.enqueue(1), pairs.enqueue(["a", "b"]), vectors.enqueue([["a", "b"]])])
        return [outcome(sess.run, reader.read(q)) for q in (ints, pairs, vectors)]


def fixed_bad_attrs(tf):
    return [outcome(run, tf, tf.FixedLengthRecordReader(**kw).num_records_produced()) for kw in (
        {"record_bytes": 0}, {"record_bytes": -1}, {"record_bytes": 2, "header_bytes": -1},
        {"record_bytes": 2, "footer_bytes": -2}, {"record_bytes": 2, "hop_bytes": -3})]


def read_up_to_zero(tf):
    reader = tf.IdentityReader()
    return _steps(tf, {"a": b""}, lambda q, w: [
        reader.read_up_to(q, 0), reader.read_up_to(q, 1), reader.read_up_to(q, 0)])


def tfrecord_corrupt(tf):
    reader = tf.TFRecordReader()
    return _steps(tf, {"bad": b"this is no tfrecord file at all", "short": b"\x05" + b"\0" * 7},
                  lambda q, w: [reader.read(q), reader.read(q)])


def tfrecord_wrong_compression(tf):
    reader = tf.TFRecordReader(options=tf.python_io.TFRecordOptions("ZLIB"))

    def build(queue, where):
        _write_records(tf, where.path("a"), [b"plain"], None)
        return [reader.read(queue)]
    return _steps(tf, {"a": b""}, build)


# -- graphs -------------------------------------------------------------------------------

def reader_nodes(tf):
    queue = tf.FIFOQueue(2, tf.string, name="files")
    tf.TextLineReader(skip_header_lines=2, name="lines").read(queue, name="r1")
    tf.FixedLengthRecordReader(4, 1, 2, 3, name="fixed", encoding="ZLIB").read_up_to(queue, 2)
    tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP"))
    reader = tf.WholeFileReader()
    reader.num_records_produced()
    reader.num_work_units_completed()
    reader.reset()
    reader.serialize_state()
    reader.restore_state("s")
    tf.IdentityReader(name="ident")
    return _node_defs(tf.get_default_graph(), skip=("files",))


def reader_tensors(tf):
    queue = tf.FIFOQueue(2, tf.string)
    reader = tf.TextLineReader()
    key, value = reader.read(queue)
    keys, values = reader.read_up_to(queue, 3)
    return (key, value, keys, values, reader.num_records_produced(),
            reader.num_work_units_completed(), reader.serialize_state(),
            reader.reader_ref, [r.supports_serialize for r in _readers(tf).values()])


def read_from_queue_ref(tf):
    reader = tf.IdentityReader()
    return _steps(tf, {"a": b""}, lambda q, w: [reader.read(q.queue_ref)])


def _node_defs(graph, skip):
    """observe.node_defs with string attrs as str, without a Const's value and without
    the attrs whose names start with `_`: what `get_attr` returns for strings and
    tensors, and dtfnb's own `_output_types`, are the graph's business, not the readers'."""
    def attr(op, name):
        value = op.get_attr(name)
        return value.decode() if isinstance(value, bytes) else _attr(op, name)
    return [{"name": op.name, "type": op.type, "device": op.node_def.device,
             "inputs": list(op.node_def.input),
             "attrs": {name: attr(op, name) for name in sorted(op.node_def.attr)
                       if not name.startswith("_") and name != "value"}}
            for op in graph.get_operations() if op.name not in skip]


# -- tf.python_io -------------------------------------------------------------------------

def _python_io(compression, level=None):
    def case(tf):
        with _Files({}) as where:
            path = where.path("f")
            options = tf.python_io.TFRecordOptions(compression, compression_level=level) \
                if compression is not None else None
            with tf.python_io.TFRecordWriter(path, options) as writer:
                for record in (b"a", b"", b"long" * 100, "text"):
                    writer.write(record)
            return list(tf.python_io.tf_record_iterator(path, options))
    return case


def python_io_compression_names(tf):
    options = tf.python_io.TFRecordOptions
    kinds = tf.python_io.TFRecordCompressionType
    return ([options.get_compression_type_string(c) for c in (
        None, "", "ZLIB", "GZIP", kinds.NONE, kinds.ZLIB, kinds.GZIP, options("GZIP"))],
        outcome(options, "LZ4"), outcome(options.get_compression_type_string, "zip"))


def python_io_missing(tf):
    with _Files({}) as where:
        return [where.scrub(outcome(lambda: list(tf.python_io.tf_record_iterator(
                    where.path("x"))))),
                where.scrub(outcome(tf.python_io.TFRecordWriter, where.path("no/such/f")))]


def python_io_corrupt(tf):
    with _Files({"f": b"\x03" + b"\0" * 11 + b"abc"}) as where:
        return where.scrub(outcome(list, tf.python_io.tf_record_iterator(where.path("f"))))


def python_io_truncated(tf):
    with _Files({}) as where:
        path = where.path("f")
        with tf.python_io.TFRecordWriter(path) as writer:
            writer.write(b"abcdef")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:-6])
        return where.scrub(outcome(list, tf.python_io.tf_record_iterator(path)))


def python_io_wrong_compression(tf):
    with _Files({}) as where:
        path = where.path("f")
        with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions("GZIP")) as w:
            w.write(b"x")
        return [where.scrub(outcome(list, tf.python_io.tf_record_iterator(path, options)))
                for options in (None, tf.python_io.TFRecordOptions("ZLIB"))]


def python_io_writer_closed(tf):
    with _Files({}) as where:
        writer = tf.python_io.TFRecordWriter(where.path("f"))
        writer.write(b"x")
        writer.flush()
        writer.close()
        return [outcome(writer.write, b"y"), outcome(writer.flush), outcome(writer.close)]




# -- decode_csv and decode_raw ------------------------------------------------------------

def _csv(records, defaults, **kwargs):
    def case(tf):
        given = [_default(tf, d) for d in defaults] if isinstance(defaults, list) else defaults
        built = outcome(tf.decode_csv, records, given, **kwargs)
        if isinstance(built, Exception):  # how a shape error shows the node is not decode_csv's
            return type(built).__name__, error_message(built).split(" for '")[0]
        return [(t.dtype, t.get_shape()) for t in built], outcome(run, tf, built)
    return case


def decode_csv_nodes(tf):
    tf.decode_csv(["1,a"], [[0], tf.constant([], tf.string)], field_delim=";", na_value="-",
                  use_quote_delim=False, name="csv")
    tf.decode_csv("1,2,3", [[0.5], [1]], select_cols=[0, 2])
    tf.decode_raw([b"ab"], tf.uint16, little_endian=False, name="raw")
    return _node_defs(tf.get_default_graph(), skip=())


def _default(tf, default):
    """A record default; an empty one as a typed constant (a field that must be there)."""
    if isinstance(default, np.ndarray) and not default.size:
        return tf.constant(default)
    return default


CSV_CASES = {
    "plain": (["1,2.5,x", "3,4,y"], [[0], [0.0], [""]], {}),
    "scalar_record": ("1,2", [[0], [0]], {}),
    "matrix_records": ([["1,2", "3,4"], ["5,6", "7,8"]], [[0], [0.0]], {}),
    "empty_uses_default": ([",", "1,"], [[7], [1.5]], {}),
    "required_missing": ([",2"], [np.array([], np.int32), [0]], {}),
    "int64_float64": (["9007199254740993,0.1"], [[np.int64(0)], [np.float64(0)]], {}),
    "delim": (["1;2"], [[0], [0]], {"field_delim": ";"}),
    "tab": (["1\t2"], [[0], [0]], {"field_delim": "\t"}),
    "bad_delim": (["1,2"], [[0], [0]], {"field_delim": ";;"}),
    "quoted": (['"a,b",2', '"say ""hi""",3'], [[""], [0]], {}),
    "no_quote_delim": (['"a",2'], [[""], [0]], {"use_quote_delim": False}),
    "bad_quote": (['"a"b,2'], [[""], [0]], {}),
    "quote_inside": (['a"b,2'], [[""], [0]], {}),
    "na_value": (["NA,2", "1,NA"], [[5], [6]], {"na_value": "NA"}),
    "select_cols": (["1,2,3,4"], [[0], [0]], {"select_cols": [1, 3]}),
    "select_cols_order": (["1,2,3"], [[0], [0]], {"select_cols": [2, 1]}),
    "select_cols_negative": (["1,2,3"], [[0]], {"select_cols": [-1]}),
    "select_cols_length": (["1,2,3"], [[0], [0]], {"select_cols": [1]}),
    "select_cols_beyond": (["1,2"], [[0], [0]], {"select_cols": [1, 5]}),
    "too_few_fields": (["1"], [[0], [0]], {}),
    "too_many_fields": (["1,2,3"], [[0], [0]], {}),
    "not_an_int": (["1.5,2"], [[0], [0]], {}),
    "not_a_float": (["abc,2"], [[0.0], [0]], {}),
    "int32_overflow": (["3000000000,2"], [[0], [0]], {}),
    "float_specials": (["inf,-Infinity,nan, 1e3 "], [[0.0]] * 4, {}),
    "spaces_in_int": ([" 12 ,3"], [[0], [0]], {}),
    "trailing_delim": (["1,"], [[0], [9]], {}),
    "empty_record": ([""], [[0]], {}),
    "two_defaults": (["1"], [[1, 2]], {}),
    "matrix_default": (["1"], [[[1]]], {}),
    "bool_default": (["1"], [[True]], {}),
    "crlf": (["1,2\r\n"], [[0], [0]], {}),
    "string_default": ([",b"], [["dflt"], [""]], {}),
    "no_records": ([], [[0]], {}),
    "numpy_defaults": (["1,2"], np.zeros(2), {}),
    "tuple_defaults": (["1,2"], ([0], [0.0]), {}),
}


def _raw(values, out_type, little_endian=True):
    def case(tf):
        built = outcome(tf.decode_raw, values, getattr(tf, out_type),
                        little_endian=little_endian)
        if isinstance(built, Exception):
            return built
        return built.dtype, built.get_shape(), outcome(run, tf, built)
    return case


RAW_CASES = {
    "uint8": ([b"abc", b"xyz"], "uint8"),
    "int16": ([b"\x01\x02\x03\x04"], "int16"),
    "int16_big": ([b"\x01\x02\x03\x04"], "int16", False),
    "float32": ([b"\0\0\x80\x3f"], "float32"),
    "int64_scalar": (b"\1\0\0\0\0\0\0\0", "int64"),
    "uneven": ([b"ab", b"abc"], "uint8"),
    "not_multiple": ([b"abc"], "int16"),
    "empty": ([b"", b""], "int32"),
    "string_type": ([b"ab"], "string"),
}


CASES = {
    **{f"text_line_skip{n}": _text_line(n) for n in (0, 1, 2, 5)},
    **{f"text_line_up_to{n}": _text_line_up_to(n) for n in (1, 2, 3, 10)},
    **{f"fixed_{r}_{h}_{f}_{p}": _fixed(r, h, f, p)
       for r, h, f, p in [(1, 0, 0, 0), (3, 0, 0, 0), (4, 2, 3, 0), (3, 1, 1, 2),
                          (5, 0, 0, 7), (2, 3, 0, 5), (20, 0, 0, 0), (8, 6, 6, 0)]},
    **{f"fixed_{e.lower()}_{h}_{f}_{p}": _fixed_encoded(e, h, f, p)
       for e, (h, f, p) in itertools.product(("ZLIB", "GZIP"),
                                             [(0, 0, 0), (2, 1, 0), (1, 2, 4)])},
    **{f"fixed_up_to{n}": _fixed_up_to(n) for n in (1, 3, 6)},
    **{f"tfrecord_{c or 'none'}{'' if n is None else f'_up_to{n}'}": _tfrecord(c, n)
       for c, n in itertools.product((None, "ZLIB", "GZIP"), (None, 2))},
    **{f"reset_{kind}": _reset(kind) for kind in ("text", "fixed", "record", "whole",
                                                   "identity")},
    **{f"serialize_{kind}": _serialize(kind) for kind in ("text", "fixed", "record", "whole",
                                                           "identity")},
    **{f"restore_{kind}_{'_'.join(map(str, state[:3]))}": _restore(kind, state)
       for kind, state in [("identity", (2, 2, 5)), ("whole", (1, 1, 1)),
                           ("identity", (3, 2, 1, b"w")), ("whole", (-1, 0, 0)),
                           ("identity", (0, 0, -4)), ("whole", (2, 3, 0)),
                           ("text", (1, 1, 1))]},
    **{f"missing_{kind}": _missing(kind) for kind in ("text", "identity")},
    **{f"missing_file_{kind}": _missing_file_kind(kind) for kind in ("text", "fixed", "record",
                                                                     "whole")},
    **{f"decode_csv_{name}": _csv(records, defaults, **kwargs)
       for name, (records, defaults, kwargs) in CSV_CASES.items()},
    **{f"decode_raw_{name}": _raw(*args) for name, args in RAW_CASES.items()},
    **{f"python_io_{c or 'none'}{level or ''}": _python_io(c, level)
       for c, level in [(None, None), ("", None), ("ZLIB", None), ("GZIP", None),
                        ("ZLIB", 1), ("GZIP", 9)]},
    **{f.__name__: f for f in (
        whole_file, whole_file_up_to, identity, identity_up_to, restore_garbage,
        restore_not_a_scalar,
        restore_then_continue, missing_file, closed_queue, wrong_queues, fixed_bad_attrs,
        read_up_to_zero, decode_csv_nodes, tfrecord_corrupt, tfrecord_wrong_compression,
        reader_nodes, reader_tensors, read_from_queue_ref, python_io_compression_names,
        python_io_missing, python_io_corrupt, python_io_truncated, python_io_wrong_compression,
        python_io_writer_closed)},
}
