"""Readers as a task's resources: TextLine, FixedLengthRecord, TFRecord, WholeFile, Identity.

Shaped like TensorFlow's ReaderBase: a reader turns work units (filenames, taken
from a queue whenever it has no work in progress) into records (key, value). Each
subclass only says how one work unit becomes records (`_work_records`, an iterator);
the base keeps the current work, the counters and the state. A work unit that fails
to start (a file that cannot be opened) is not started, and the next read takes the
next one; one that fails once started stays in progress and fails the same way at
every read until a reset, as in TensorFlow. A reader serves one read at a time
(TensorFlow holds its mutex from the dequeue to the record), but a read waiting for
its turn still honours its step's deadline and cancellation.
"""

import os
import threading
import zlib

import numpy as np
from google.protobuf.message import DecodeError

from dtfnb.base.dtypes import string
from dtfnb.base.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from dtfnb.base.locks import BackoffRLock
from dtfnb.protos.reader_pb2 import ReaderBaseState
from dtfnb.resources import tfrecord
from dtfnb.resources.files import not_found


class _Owned:
    """A step as a reader's dequeue sees it: waits and is cancelled like the step, but
    a filename once taken stays taken (the reader owns it now) even if the step then
    fails; otherwise the queue would hand the same file out again."""

    __slots__ = ("_step",)

    def __init__(self, step):
        self._step = step

    @property
    def error(self):
        return self._step.error

    def wait(self, cond, ready):
        self._step.wait(cond, ready)

    def on_abort(self, callback):
        """The queue's give-back for a step that fails later: the file stays taken."""


class ReaderBase:
    """Records from the work units of a queue; `name` says which reader in messages
    ("TextLineReader 'node'", as TensorFlow's).

    The state behind `tf.TextLineReader` and the others: `read` takes a work unit
    (a filename) from a queue when the current one is used up, and returns its next
    (key, value). Subclasses say how a work unit becomes records (`_work_records`).

    ```python
    import numpy as np
    from dtfnb.base import dtypes
    from dtfnb.resources.queues import FIFOQueue
    from dtfnb.resources.readers import IdentityReader
    from dtfnb.runtime.step import Step

    step = Step()
    filenames = FIFOQueue("filenames", [dtypes.string], [()], capacity=-1)
    filenames.enqueue_many(step, [np.array([b"a.csv", b"b.csv"], dtype=object)])
    reader = IdentityReader("IdentityReader 'reader'")
    print(reader.read(step, filenames))         # (b'a.csv', b'a.csv')
    print(reader.work_units_completed)
    ```
    """

    def __init__(self, name):
        self.name = name
        self.records_produced = 0
        self.work_started = 0
        self.work_units_completed = 0
        self.work = b""  # the current work unit, or the last one
        self._records = None  # the current work's records; None when none is in progress
        self._failure = None  # what the current work failed with, raised again by every read
        self._lock = BackoffRLock()  # taken directly for a read's turn; waits use _cond
        self._cond = threading.Condition(self._lock)
        self._busy = False
        self._turn_end = _TurnEnd(self)

    def _work_records(self, work):
        """An iterator over the (key, value) records of `work`; raising here means the work
        did not start. Subclasses say how."""
        raise NotImplementedError

    def _turn(self, step):
        """Waits for this reader's turn; returns the context that ends it."""
        with self._lock:
            if self._busy:
                step.wait(self._cond, lambda: not self._busy)
            self._busy = True
        return self._turn_end

    def _end_turn(self):
        with self._lock:
            self._busy = False
            self._cond.notify_all()

    def _next_record(self, step, queue):
        """The next record of the current work; None when that work has just ended."""
        if self._records is None:
            self.work = _next_work(step, queue)
            self._records = self._work_records(self.work)
            self.work_started += 1
        if self._failure is not None:
            raise self._failure.with_traceback(None)
        try:
            record = next(self._records, None)
        except Exception as err:
            self._failure = err
            raise
        if record is None or self.one_record_per_work:
            self._records = None
            self.work_units_completed = self.work_started
        return record

    def read(self, step, queue):
        """The next record, from the next work unit when the current one ends."""
        with self._turn(step):
            while (record := self._next_record(step, queue)) is None:
                pass
            self.records_produced += 1
            return record

    def read_up_to(self, step, queue, n):
        """Up to n records; fewer when a work unit ends, but at least one unless the queue
        does."""
        records = []
        with self._turn(step):
            while len(records) < n:
                record = self._next_record(step, queue)
                if record is None:
                    if records:
                        break
                    continue
                records.append(record)
                self.records_produced += 1
                if self._records is None:  # the work ended with this record
                    break
        return records

    def reset(self, step):
        """Zeroes the counters and drops the current work."""
        with self._turn(step):
            self._reset()

    def _reset(self):
        if self._records is not None and hasattr(self._records, "close"):
            self._records.close()
        self._records = self._failure = None
        self.records_produced = self.work_started = self.work_units_completed = 0
        self.work = b""

    def serialize_state(self, step):
        """The reader's state as a serialized ReaderBaseState, where the kind supports it."""
        with self._turn(step):
            if not self.supports_serialize:
                raise UnimplementedError(None, None, "Reader SerializeState")
            return ReaderBaseState(
                work_started=self.work_started, work_finished=self.work_units_completed,
                num_records_produced=self.records_produced,
                current_work=self.work).SerializeToString()

    def restore_state(self, step, state):
        """Restores a state from serialize_state; a state refused resets the reader."""
        with self._turn(step):
            try:
                self._restore(state)
            except Exception:
                self._reset()
                raise

    supports_serialize = False
    one_record_per_work = False  # then a work unit ends with its record, not at the next read

    def _restore(self, state):
        if not self.supports_serialize:
            raise UnimplementedError(None, None, "Reader RestoreState")
        proto = ReaderBaseState()
        try:
            proto.ParseFromString(state)
        except DecodeError:
            raise InvalidArgumentError(None, None, f"Could not parse state for {self.name}: "
                                       f"{_c_escape(state)}") from None
        self._reset()
        self.work_started, self.work_units_completed = proto.work_started, proto.work_finished
        self.records_produced, self.work = proto.num_records_produced, proto.current_work
        if min(proto.work_started, proto.work_finished, proto.num_records_produced) < 0:
            raise InvalidArgumentError(None, None, f"Unexpected negative value when restoring "
                                       f"in {self.name}: {proto}")
        if proto.work_started > proto.work_finished:
            raise InvalidArgumentError(None, None, f"Inconsistent work started vs. finished "
                                       f"when restoring in {self.name}: {proto}")


class _TurnEnd:
    """Leaving it ends a read's turn at the reader (a class: a generator-based context
    manager costs more than a whole read of a short line)."""

    __slots__ = ("_reader",)

    def __init__(self, reader):
        self._reader = reader

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self._reader._end_turn()


def _next_work(step, queue):
    if len(queue.dtypes) != 1:
        raise InvalidArgumentError(None, None, "Expected single component queue")
    if queue.dtypes[0] is not string:
        raise InvalidArgumentError(None, None, "Expected queue with single string component")
    (value,) = queue.dequeue(_Owned(step))
    if np.size(value) != 1:
        raise InvalidArgumentError(None, None, "Expected to dequeue a one-element string tensor")
    work = np.asarray(value).reshape(()).item()
    return work.encode() if isinstance(work, str) else work


def _c_escape(data):
    """Bytes as absl::CEscape writes them: octal escapes for what is not printable ASCII."""
    named = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
             ord("'"): "\\'", ord("\\"): "\\\\"}
    return "".join(named.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}") for b in data)


def _open(work):
    path = os.fsdecode(work)
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the record generator
    except FileNotFoundError:
        raise not_found(path) from None


class TextLineReader(ReaderBase):
    """One record per line, without its newline; keys `<path>:<line>`, counting from 1
    and counting the skipped header lines."""

    def __init__(self, name, skip_header_lines=0):
        super().__init__(name)
        self.skip_header_lines = skip_header_lines

    def _work_records(self, work):
        return self._lines(_open(work), work + b":")

    def _lines(self, file, prefix):
        with file:
            for number, line in enumerate(file, 1):
                if number > self.skip_header_lines:
                    if line.endswith(b"\n"):
                        line = line[:-1].removesuffix(b"\r")
                    yield prefix + b"%d" % number, line


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` between a header and a footer, each starting `hop_bytes`
    after the previous one (0: right after it); keys `<path>:<record number>` from 0.
    `encoding` "ZLIB" or "GZIP" reads the file through that decompression."""

    _WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS | 16}

    def __init__(self, name, record_bytes, header_bytes=0, footer_bytes=0, hop_bytes=0,
                 encoding=""):
        super().__init__(name)
        for attr, value in [("header_bytes", header_bytes), ("record_bytes", record_bytes),
                            ("footer_bytes", footer_bytes), ("hop_bytes", hop_bytes)]:
            if value < 0:
                raise InvalidArgumentError(None, None, f"{attr} must be >= 0 not {value}")
        self.record_bytes = record_bytes
        self.header_bytes = header_bytes
        self.footer_bytes = footer_bytes
        self.hop_bytes = hop_bytes or record_bytes
        self.wbits = self._WBITS.get(encoding)

    def _work_records(self, work):
        with _open(work) as file:
            data = file.read()
        if self.wbits is not None:
            data = zlib.decompress(data, self.wbits)
        if len(data) < self.header_bytes:  # the header cannot be skipped: not started
            raise OutOfRangeError(None, None, "reached end of file" if self.wbits is None
                                  else "EOF reached")
        return self._records_of(data, work + b":")

    def _records_of(self, data, prefix):
        last_start = len(data) - self.footer_bytes - self.record_bytes
        for number, start in enumerate(range(self.header_bytes, last_start + 1, self.hop_bytes)):
            yield prefix + b"%d" % number, data[start:start + self.record_bytes]


class TFRecordReader(ReaderBase):
    """The records of TFRecord files; keys `<path>:<offset of the record>`."""

    def __init__(self, name, compression_type=""):
        super().__init__(name)
        self.compression_type = compression_type

    def _work_records(self, work):
        return self._records_of(tfrecord.RecordReader(os.fsdecode(work), self.compression_type),
                                work + b":")

    @staticmethod
    def _records_of(reader, prefix):
        try:
            while (item := reader.read()) is not None:
                offset, data = item
                yield prefix + b"%d" % offset, data
        finally:
            reader.close()


class WholeFileReader(ReaderBase):
    """One record per file: the key is its path, the value its contents. The file is read
    at the read, so a missing one fails the read, again at every read."""

    supports_serialize = True
    one_record_per_work = True

    def _work_records(self, work):
        yield work, _read_file(work)


def _read_file(work):
    with _open(work) as file:
        return file.read()


class IdentityReader(ReaderBase):
    """One record per work unit: the work itself as key and value."""

    supports_serialize = True
    one_record_per_work = True

    def _work_records(self, work):
        return iter([(work, work)])
