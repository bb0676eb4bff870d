"""Readers as a task's resources: TextLine, FixedLengthRecord, TFRecord and WholeFile.

Shaped like TensorFlow's ReaderBase: a reader turns work units (filenames, taken
from a queue whenever it has no current file) into records (key, value). Each
subclass only says how one file becomes records, as a generator; the base keeps
the current file and the counters. A reader serves one read at a time (TensorFlow
holds its mutex from the dequeue to the record), but a read waiting for its turn
still honours its step's deadline and cancellation.

One difference: a file that fails half-way (a corrupt record) is dropped, and the
next read goes on with the next file; TensorFlow fails again at the same place.
"""

import os
import threading

import numpy as np

from dtfnb.base.dtypes import string
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.base.locks import BackoffRLock
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
    """Records from the files named by a queue; `task` names the task in errors."""

    def __init__(self, name, task):
        self.name = name
        self.task = task
        self.records_produced = 0
        self.work_units_completed = 0
        self._records = None  # the current file's record generator; None between files
        self._lock = BackoffRLock()  # taken directly for a read's turn; waits use _cond
        self._cond = threading.Condition(self._lock)
        self._busy = False
        self._turn_end = _TurnEnd(self)

    def _file_records(self, path):
        """Yields the (key, value) records of the file at `path`; subclasses say how."""
        raise NotImplementedError

    def _open(self, path):
        try:
            return open(path, "rb")  # noqa: SIM115 - closed by the record generator
        except FileNotFoundError:
            raise not_found(path, self.task) from None

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
        """The next record of the current file; None when that file has just ended."""
        if self._records is None:
            self._records = self._file_records(_next_filename(step, queue))
        try:
            record = next(self._records, None)
        except BaseException:
            self._records = None  # a missing or corrupt file is dropped, the reader goes on
            raise
        if record is None:
            self._records = None
            self.work_units_completed += 1
        return record

    def read(self, step, queue):
        """The next record, from the next file when the current one ends."""
        with self._turn(step):
            while (record := self._next_record(step, queue)) is None:
                pass
            self.records_produced += 1
            return record

    def read_up_to(self, step, queue, n):
        """Up to n records; fewer when a file ends, but at least one unless the queue does."""
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
        return records

    def reset(self, step):
        """Zeroes the counters and drops the current file."""
        with self._turn(step):
            if self._records is not None:
                self._records.close()
            self._records = None
            self.records_produced = self.work_units_completed = 0


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


def _next_filename(step, queue):
    if len(queue.dtypes) != 1:
        raise InvalidArgumentError(None, None, "Expected single component queue")
    if queue.dtypes[0] is not string:
        raise InvalidArgumentError(None, None, "Expected queue with single string component")
    (value,) = queue.dequeue(_Owned(step))
    if np.size(value) != 1:
        raise InvalidArgumentError(None, None, "Expected to dequeue a one-element string tensor")
    return os.fsdecode(np.asarray(value).reshape(()).item())


def _key_prefix(path):
    """Keys are `<path>:<n>`: this, then b"%d" % n."""
    return os.fsencode(f"{path}:")


class TextLineReader(ReaderBase):
    """One record per line, without its newline; keys `<path>:<line>`, counting from 1
    and counting the skipped header lines."""

    def __init__(self, name, task, skip_header_lines=0):
        super().__init__(name, task)
        self.skip_header_lines = skip_header_lines

    def _file_records(self, path):
        prefix = _key_prefix(path)
        with self._open(path) as file:
            for number, line in enumerate(file, 1):
                if number > self.skip_header_lines:
                    if line.endswith(b"\n"):
                        line = line[:-1].removesuffix(b"\r")
                    yield prefix + b"%d" % number, line


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` between a header and a footer, each starting `hop_bytes`
    after the previous one (0: right after it); keys `<path>:<record number>` from 0."""

    def __init__(self, name, task, record_bytes, header_bytes=0, footer_bytes=0, hop_bytes=0):
        super().__init__(name, task)
        for attr, value in [("header_bytes", header_bytes), ("record_bytes", record_bytes),
                            ("footer_bytes", footer_bytes), ("hop_bytes", hop_bytes)]:
            if value < 0:
                raise InvalidArgumentError(None, None, f"{attr} must be >= 0 not {value}")
        self.record_bytes = record_bytes
        self.header_bytes = header_bytes
        self.footer_bytes = footer_bytes
        self.hop_bytes = hop_bytes or record_bytes

    def _file_records(self, path):
        with self._open(path) as file:
            last_start = os.fstat(file.fileno()).st_size - self.footer_bytes - self.record_bytes
            starts = range(self.header_bytes, last_start + 1, self.hop_bytes)
            prefix = _key_prefix(path)
            for number, start in enumerate(starts):
                file.seek(start)
                yield prefix + b"%d" % number, file.read(self.record_bytes)


class TFRecordReader(ReaderBase):
    """The records of TFRecord files; keys `<path>:<offset of the record>`."""

    def __init__(self, name, task, compression_type=""):
        super().__init__(name, task)
        self.compression_type = compression_type

    def _file_records(self, path):
        reader = tfrecord.RecordReader(path, self.compression_type, self.task)
        prefix = _key_prefix(path)
        try:
            while (item := reader.read()) is not None:
                offset, data = item
                yield prefix + b"%d" % offset, data
        finally:
            reader.close()


class WholeFileReader(ReaderBase):
    """One record per file: the key is its path, the value its contents."""

    def _file_records(self, path):
        with self._open(path) as file:
            yield os.fsencode(path), file.read()
